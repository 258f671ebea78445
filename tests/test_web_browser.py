"""The web table in a real headless Chromium (Selenium): a hand played by clicks, double clicks that
send one request, the table at a phone's width (390x844), a replay stepped through.

Skipped, with the reason, where Chromium or its driver is not installed (Debian: ``apt-get install
chromium chromium-driver``; ``.ci/run`` installs them). With ``DOUDIZHU_SCREENSHOTS=DIR`` the
pages are saved there as PNG (the screenshots of ``docs/web.md``: 1400x900, and 390x844 for the
phone).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("selenium")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
NO_BROWSER = ("no headless Chromium here: install Debian's chromium and chromium-driver packages to run the "
              "browser tests")
pytestmark = [pytest.mark.integration, pytest.mark.skipif(not (CHROMIUM and DRIVER), reason=NO_BROWSER)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    import uvicorn

    from doudizhu_table.web.server import create_app

    port = _free_port()
    srv = uvicorn.Server(uvicorn.Config(create_app(opponents=["rule", "random"]), host="127.0.0.1", port=port,
                                        log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not srv.started and time.time() < deadline:
        time.sleep(0.05)
    assert srv.started, "the server did not start"
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _size(browser, width: int, height: int) -> None:
    """The page's viewport, exactly (a phone: ``mobile``, as a phone's browser lays it out)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500})


def _wait(predicate, timeout: float = 15.0, what: str = "the page"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _idle(browser) -> None:
    """Wait until no request is under way (and the agents' moves have been shown)."""
    _wait(lambda: browser.execute_script("return document.body.dataset.busy") == "0", 30, "the table")


def _shot(browser, name: str) -> None:
    folder = os.environ.get("DOUDIZHU_SCREENSHOTS")
    if folder:
        browser.save_screenshot(os.path.join(folder, name))


def _open(browser, server, width: int = 1400, height: int = 900, seed: str | None = "11") -> None:
    """The page at that size, a new game (rule against rule) dealt."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _size(browser, width, height)
    browser.get(server)
    _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#opponent-1 option"), what="the opponents")
    Select(browser.find_element(By.ID, "opponent-2")).select_by_visible_text("rule")
    if seed is not None:
        browser.find_element(By.ID, "seed").send_keys(seed)
    browser.find_element(By.ID, "new-game").click()
    _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#hand .card"), what="the hand")
    _idle(browser)


def _step(browser) -> bool:
    """One move of the person (the highest bid, no double, else the hint or pass); False at the end."""
    from selenium.webdriver.common.by import By

    if browser.find_element(By.ID, "result").is_displayed():
        return False
    bids = browser.find_elements(By.CSS_SELECTOR, "#actions .bid")
    if bids:
        bids[-1].click()
    elif browser.find_elements(By.ID, "double-no"):
        browser.find_element(By.ID, "double-no").click()
    else:
        browser.find_element(By.ID, "hint").click()
        _idle(browser)
        hint = browser.find_element(By.ID, "message").text
        assert hint.startswith("hint: "), hint
        if hint.startswith("hint: pass"):
            browser.find_element(By.ID, "pass").click()
        else:
            assert browser.find_elements(By.CSS_SELECTOR, "#hand .card.selected")
            browser.find_element(By.ID, "play").click()
    _idle(browser)
    error = browser.find_element(By.ID, "message").get_attribute("class")
    assert "error" not in error, browser.find_element(By.ID, "message").text
    return True


def _to_play_phase(browser) -> None:
    from selenium.webdriver.common.by import By

    while not browser.find_elements(By.ID, "play") and _step(browser):
        pass


def test_a_full_hand_played_by_clicks(server, browser):
    from selenium.webdriver.common.by import By

    _open(browser, server)
    moves, shot = 0, False
    while _step(browser):
        moves += 1
        assert moves < 200
        playing = browser.find_elements(By.CSS_SELECTOR, ".place .played .move-cards .card")
        if not shot and moves >= 6 and len({p.find_element(By.XPATH, "./ancestor::div[2]").id
                                            for p in playing}) >= 2:
            _shot(browser, "web-play.png")  # cards played by two seats at their places
            shot = True
    result = browser.find_element(By.ID, "result")
    assert result.is_displayed() and "points:" in result.text
    assert "still held" in result.text and "you were dealt" in result.text and "was dealt" in result.text
    outcome = browser.find_element(By.CSS_SELECTOR, "#result .outcome").text
    assert outcome.startswith(("you win", "you lose", "no score")) and "you (seat 0)" in result.text
    top = browser.execute_script("return document.getElementById('result').getBoundingClientRect().top")
    assert top < browser.execute_script("return window.innerHeight")  # in sight, not below the fold
    _shot(browser, "web-result.png")


def test_the_trick_is_cards_at_each_seats_place(server, browser):
    from selenium.webdriver.common.by import By

    _open(browser, server)
    _to_play_phase(browser)
    places = {p: browser.find_element(By.ID, f"place-{p}") for p in ("left", "right", "me")}
    seat = int(browser.find_element(By.ID, "seat").get_attribute("value"))
    assert places["right"].get_attribute("data-seat") == str((seat + 1) % 3)
    assert places["left"].get_attribute("data-seat") == str((seat + 2) % 3)
    jokers = browser.find_elements(By.CSS_SELECTOR, ".card.joker")
    plain = browser.find_element(By.CSS_SELECTOR, "#hand .card")
    for joker in jokers:  # as tall as any card, the word not clipped
        assert joker.size["height"] == plain.size["height"]
        word = joker.find_element(By.CSS_SELECTOR, ".joker-word")
        assert word.size["width"] <= joker.size["width"]


def _count_posts(browser, delay_ms: int = 400) -> None:
    """Count the page's POSTs in ``window.__posts``; each answer held back ``delay_ms``."""
    browser.execute_script("""
        window.__posts = 0;
        window.__fetch = window.__fetch || window.fetch;
        const real = window.__fetch;
        window.fetch = async (...args) => {
          if ((args[1] || {}).method === "POST") window.__posts++;
          const answer = await real(...args);
          await new Promise((r) => setTimeout(r, arguments[0]));
          return answer;
        };""", delay_ms)


def test_a_double_click_sends_one_move_and_says_thinking(server, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    _open(browser, server, seed="5")
    _count_posts(browser)
    first = browser.find_element(By.CSS_SELECTOR, "#actions button")
    ActionChains(browser).double_click(first).perform()
    assert browser.find_element(By.ID, "message").text == "thinking\u2026"
    assert browser.execute_script("return [...document.querySelectorAll('#play-panel button')]"
                                  ".every((b) => b.disabled)")
    _idle(browser)
    assert browser.execute_script("return window.__posts") == 1
    _to_play_phase(browser)
    if browser.find_element(By.ID, "result").is_displayed():
        return
    _count_posts(browser)
    hand = [c.get_attribute("data-id") for c in browser.find_elements(By.CSS_SELECTOR, "#hand .card")]
    browser.find_element(By.ID, "hint").click()
    _idle(browser)
    target = "pass" if browser.find_elements(By.ID, "pass") else "play"
    ActionChains(browser).double_click(browser.find_element(By.ID, target)).perform()
    _idle(browser)
    assert browser.execute_script("return window.__posts") == 1
    message = browser.find_element(By.ID, "message")
    assert "error" not in message.get_attribute("class"), message.text
    after = [c.get_attribute("data-id") for c in browser.find_elements(By.CSS_SELECTOR, "#hand .card")]
    assert after != hand or target == "pass"


BUTTONS_BOTTOM = ("return Math.max(...[...document.querySelectorAll('#actions button')]"
                  ".map((b) => b.getBoundingClientRect().bottom))")


def _no_sideways_scroll(browser) -> None:
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= browser.execute_script("return window.innerWidth"), width


def test_a_phone_width_fits_without_sideways_scrolling(server, browser, tmp_path):
    from selenium.webdriver.common.by import By

    from doudizhu_arena.arena import run_arena

    _open(browser, server, 390, 844)
    shot = False
    while True:
        _no_sideways_scroll(browser)
        buttons = browser.find_elements(By.CSS_SELECTOR, "#actions button")
        if buttons:  # the buttons and the hint in sight, without scrolling
            bottom = browser.execute_script(BUTTONS_BOTTOM)
            assert bottom <= 844, bottom
        if not shot and browser.find_elements(By.CSS_SELECTOR, "#place-left .tag.landlord, "
                                               "#place-right .tag.landlord, #place-me .tag.landlord"):
            if browser.find_elements(By.CSS_SELECTOR, ".place .played .card"):
                _shot(browser, "web-phone.png")
                shot = True
        browser.execute_script("window.scrollTo(0, 0)")
        if not _step(browser):
            break
    _no_sideways_scroll(browser)
    path = tmp_path / "games.jsonl"
    run_arena(["rule", "random", "random"], 1, "standard", seed=2, record=str(path))
    browser.find_element(By.ID, "tab-watch").click()
    browser.find_element(By.ID, "replay-file").send_keys(str(path))
    browser.find_element(By.ID, "replay-load").click()
    _wait(lambda: browser.find_element(By.ID, "replay-step").text.startswith("move 0 of"), what="the replay")
    browser.find_element(By.ID, "replay-last").click()
    _no_sideways_scroll(browser)


def test_an_illegal_click_is_refused_and_the_table_stays(server, browser):
    from selenium.webdriver.common.by import By

    _open(browser, server, seed=None)
    _to_play_phase(browser)
    if browser.find_element(By.ID, "result").is_displayed():
        return

    def hand():
        return [c.get_attribute("data-id") for c in browser.find_elements(By.CSS_SELECTOR, "#hand .card")]

    before = hand()
    browser.find_element(By.ID, "play").click()  # nothing selected
    _idle(browser)
    _wait(lambda: "no cards picked" in browser.find_element(By.ID, "message").text, what="the refusal")
    assert hand() == before


def test_a_replay_stepped_forward_and_back(server, browser, tmp_path):
    from selenium.webdriver.common.by import By

    from doudizhu_arena.arena import run_arena

    path = tmp_path / "games.jsonl"
    run_arena(["rule", "random", "random"], 1, "standard", seed=2, record=str(path))
    _size(browser, 1400, 900)
    browser.get(server)
    browser.find_element(By.ID, "tab-watch").click()
    browser.find_element(By.ID, "replay-file").send_keys(str(path))
    browser.find_element(By.ID, "replay-load").click()
    step = lambda: browser.find_element(By.ID, "replay-step").text  # noqa: E731
    _wait(lambda: step().startswith("move 0 of"), what="the replay")
    total = int(step().split(" of ")[1])
    assert len(browser.find_elements(By.CSS_SELECTOR, "#replay-hands .seat")) == 3
    assert len(browser.find_elements(By.CSS_SELECTOR, "#replay-hands .card")) >= 51
    assert len(browser.find_elements(By.CSS_SELECTOR, "#replay-moves li")) == total
    button = browser.find_element(By.ID, "replay-next")
    x = button.location["x"]
    for _ in range(total // 2):
        button.click()
    assert step() == f"move {total // 2} of {total}"
    assert button.location["x"] == x  # the counter's width does not move the buttons
    facts = " ".join(f.text for f in browser.find_elements(By.CSS_SELECTOR, "#replay-hands .facts"))
    assert "bid" in facts  # each seat's bid (or no bid)
    assert browser.find_element(By.CSS_SELECTOR, "#replay-moves li.current").text.startswith("seat ")
    _shot(browser, "web-watch.png")
    browser.find_element(By.ID, "replay-prev").click()
    assert step() == f"move {total // 2 - 1} of {total}"
    browser.find_element(By.ID, "replay-last").click()
    assert step() == f"move {total} of {total}"
    assert "points:" in browser.find_element(By.ID, "replay-result").text
    browser.find_elements(By.CSS_SELECTOR, "#replay-moves li")[2].click()
    assert step() == f"move 3 of {total}"
    browser.find_element(By.ID, "replay-first").click()
    assert step() == f"move 0 of {total}"
