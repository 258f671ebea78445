"""The web table in a real headless Chromium (Selenium): a hand played by clicks, a replay stepped through.

Skipped, with the reason, where Chromium or its driver is not installed (Debian: ``apt-get install
chromium chromium-driver``; ``.ci/run`` installs them). With ``DOUDIZHU_SCREENSHOTS=DIR`` the
pages are saved there as PNG (the screenshots of ``docs/web.md``).
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
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1200,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _wait(predicate, timeout: float = 15.0, what: str = "the page"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _shot(browser, name: str) -> None:
    folder = os.environ.get("DOUDIZHU_SCREENSHOTS")
    if folder:
        browser.save_screenshot(os.path.join(folder, name))


def test_a_full_hand_played_by_clicks(server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(server)
    _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#opponent-1 option"), what="the opponents")
    Select(browser.find_element(By.ID, "opponent-2")).select_by_visible_text("rule")
    browser.find_element(By.ID, "seed").send_keys("11")
    browser.find_element(By.ID, "new-game").click()
    _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#hand .card"), what="the hand")
    log_length = lambda: len(browser.find_elements(By.CSS_SELECTOR, "#log li"))  # noqa: E731
    shot_taken = False
    for _ in range(120):
        if browser.find_element(By.ID, "result").is_displayed():
            break
        before = log_length()
        bids = browser.find_elements(By.CSS_SELECTOR, "#actions .bid")
        if bids:
            bids[-1].click()  # the highest bid offered
        elif browser.find_elements(By.ID, "double-no"):
            browser.find_element(By.ID, "double-no").click()
        else:
            _wait(lambda: browser.find_elements(By.ID, "hint"), what="your turn")
            if not shot_taken and browser.find_elements(By.CSS_SELECTOR, "#hand .card"):
                _shot(browser, "web-play.png")
                shot_taken = True
            browser.find_element(By.ID, "hint").click()
            hint = _wait(lambda: browser.find_element(By.ID, "message").text, what="the hint")
            assert hint.startswith("hint: ")
            if hint.startswith("hint: pass"):
                browser.find_element(By.ID, "pass").click()
            else:
                assert browser.find_elements(By.CSS_SELECTOR, "#hand .card.selected")
                browser.find_element(By.ID, "play").click()
        _wait(lambda b=before: log_length() > b or browser.find_element(By.ID, "result").is_displayed(),
              what="the table after a move")
        error = browser.find_element(By.ID, "message").get_attribute("class")
        assert "error" not in error, browser.find_element(By.ID, "message").text
    result = browser.find_element(By.ID, "result")
    assert result.is_displayed() and "points:" in result.text
    assert "still held" in result.text and "you were dealt" in result.text and "was dealt" in result.text
    _shot(browser, "web-result.png")


def test_an_illegal_click_is_refused_and_the_table_stays(server, browser):
    from selenium.webdriver.common.by import By

    browser.get(server)
    _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#opponent-1 option"), what="the opponents")
    browser.find_element(By.ID, "new-game").click()
    _wait(lambda: browser.find_elements(By.CSS_SELECTOR, "#actions button"), what="your turn")

    def choices():
        found = browser.find_elements(By.CSS_SELECTOR, "#actions .bid")
        return found or browser.find_elements(By.ID, "double-no")

    while choices():
        before = len(browser.find_elements(By.CSS_SELECTOR, "#log li"))
        choices()[-1].click()
        _wait(lambda b=before: len(browser.find_elements(By.CSS_SELECTOR, "#log li")) > b, what="the move")
    if browser.find_element(By.ID, "result").is_displayed():
        return
    _wait(lambda: browser.find_elements(By.ID, "play"), what="the play phase")
    def hand():
        return [c.get_attribute("data-id") for c in browser.find_elements(By.CSS_SELECTOR, "#hand .card")]

    before = hand()
    browser.find_element(By.ID, "play").click()  # nothing selected
    _wait(lambda: "no cards picked" in browser.find_element(By.ID, "message").text, what="the refusal")
    assert hand() == before


def test_a_replay_stepped_forward_and_back(server, browser, tmp_path):
    from selenium.webdriver.common.by import By

    from doudizhu_arena.arena import run_arena

    path = tmp_path / "games.jsonl"
    run_arena(["rule", "random", "random"], 1, "standard", seed=2, record=str(path))
    browser.get(server)
    browser.find_element(By.ID, "tab-watch").click()
    browser.find_element(By.ID, "replay-file").send_keys(str(path))
    browser.find_element(By.ID, "replay-load").click()
    step = lambda: browser.find_element(By.ID, "replay-step").text  # noqa: E731
    _wait(lambda: step().startswith("move 0 of"), what="the replay")
    total = int(step().split(" of ")[1])
    assert len(browser.find_elements(By.CSS_SELECTOR, "#replay-hands .seat")) == 3
    assert len(browser.find_elements(By.CSS_SELECTOR, "#replay-hands .card")) >= 51
    for _ in range(total // 2):
        browser.find_element(By.ID, "replay-next").click()
    assert step() == f"move {total // 2} of {total}"
    _shot(browser, "web-watch.png")
    browser.find_element(By.ID, "replay-prev").click()
    assert step() == f"move {total // 2 - 1} of {total}"
    browser.find_element(By.ID, "replay-last").click()
    assert step() == f"move {total} of {total}"
    assert "points:" in browser.find_element(By.ID, "replay-result").text
    browser.find_element(By.ID, "replay-first").click()
    assert step() == f"move 0 of {total}"
