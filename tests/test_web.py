"""The web table (doudizhu_table.web): the API as the page uses it, what the page may see, bad requests.

Every response the page gets before a hand is over is checked for hidden cards: it must not change
when the cards the person cannot see are dealt differently (the information-leak swap of
tests/test_information_leak.py), and its cards are only the person's own and the shown hole cards.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("starlette.testclient")  # needs httpx2 (the dev extra) or httpx

from starlette.testclient import TestClient  # noqa: E402
from test_information_leak import random_positions, swap_hidden  # noqa: E402

from doudizhu_arena.arena import run_arena  # noqa: E402
from doudizhu_env import engine  # noqa: E402
from doudizhu_env.actions import action_table  # noqa: E402
from doudizhu_env.display import dealt_ids, hole_ids, trick_of  # noqa: E402
from doudizhu_env.records import load_records  # noqa: E402
from doudizhu_env.rules import Rules  # noqa: E402
from doudizhu_table.web.game import WebGame, view_of  # noqa: E402
from doudizhu_table.web.server import MAX_BODY, SECURITY_HEADERS, create_app  # noqa: E402

BASE = "http://127.0.0.1"


@pytest.fixture
def client():
    with TestClient(create_app(opponents=["rule", "random"]), base_url=BASE) as c:
        yield c


def visible_cards(view: dict) -> set[int]:
    """Every card id anywhere in a response (cards are the only dicts with a 'suit')."""
    found = set()

    def walk(x):
        if isinstance(x, dict):
            if "suit" in x and "id" in x:
                found.add(x["id"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(view)
    return found


def play_out(client, game: dict, pick=lambda legal: legal[0]["id"]) -> list[dict]:
    """Play the person's moves (``pick`` of the legal moves) to the end; every response."""
    responses = [game]
    while not game["done"]:
        assert game["your_turn"] and game["legal"]
        r = client.post(f"/api/games/{game['game']}/move", json={"action": pick(game["legal"])})
        assert r.status_code == 200, r.text
        game = r.json()
        responses.append(game)
        assert len(responses) < 200
    return responses


def test_a_full_hand_through_the_api_never_shows_hidden_cards(client):
    game = client.post("/api/games", json={"opponents": ["rule", "random"], "seat": 1, "seed": 5}).json()
    table = client.app.state.table
    state_of = table.sessions.games[client.cookies["ddz_session"]]
    rng = np.random.default_rng(0)
    responses = play_out(client, game, pick=lambda legal: legal[int(rng.integers(len(legal)))]["id"])
    final = state_of.state
    mine = set(int(c) for c in dealt_ids(final, 0, 1)) | set(int(c) for c in hole_ids(final))
    for r in responses[:-1]:
        assert "result" not in r
        assert visible_cards(r) <= mine  # only the person's cards and the (shown) hole cards
        shown_hole = set(int(c) for c in hole_ids(final)) if r["landlord"] >= 0 else set()
        assert visible_cards(r) <= set(c["id"] for c in r["hand"]) | shown_hole | {
            c for a in r["legal"] for c in a["cards"]}
    end = responses[-1]
    assert end["done"] and len(end["result"]["hands"]) == 3 and len(end["result"]["lines"]) >= 2
    assert sum(len(h) for h in end["result"]["dealt"]) == 54
    assert sum(end["result"]["scores"]) == 0


def test_the_view_does_not_change_when_hidden_cards_are_dealt_differently():
    rng = np.random.default_rng(1)
    checks = 0
    for state in random_positions("standard", seed=9, num_games=12):
        if state.done[0]:
            continue
        for seat in range(3):
            game = object.__new__(WebGame)
            game.rules, game.seat, game.names, game.id = state.rules, seat, ["a", "b", "c"], "g"
            game.table, game.log, game.state = action_table(state.rules), [], state
            other = swap_hidden(state, seat, rng)
            deal = other.deal.copy()  # the person's own cards and the shown hole keep their suits
            own = slice(seat * 17, seat * 17 + 17)
            deal[0, own] = state.deal[0, own]
            if state.landlord[0] >= 0:
                deal[0, 51:] = state.deal[0, 51:]
            before = json.dumps(view_of(game), sort_keys=True)
            game.state = dataclasses.replace(other, deal=deal)
            assert json.dumps(view_of(game), sort_keys=True) == before
            checks += 1
    assert checks > 50


TRICKS = [  # seat, move -> the trick so far, who led it, the trick before it and its winner
    ([(0, "3"), (1, "5"), (2, "pass")], ([[0, "3"], [1, "5"], [2, "pass"]], 0, [], None)),
    ([(0, "3"), (1, "5"), (2, "pass"), (0, "pass")],
     ([], None, [[0, "3"], [1, "5"], [2, "pass"], [0, "pass"]], 1)),
    ([(0, "3"), (1, "pass"), (2, "pass"), (0, "44")],
     ([[0, "44"]], 0, [[0, "3"], [1, "pass"], [2, "pass"]], 0)),
]


@pytest.mark.parametrize("moves, expected", TRICKS)
def test_tricks_from_the_history(moves, expected):
    rules = Rules.preset("douzero")
    state = engine.reset(0, 1, rules, deals=[engine.Deal(("33344455666777889", "5589TTTTJJJJQQQQ9",
                                                           "789KKKKAAAA2222XD"), "346", 0, 0)])
    from doudizhu_env.actions import action_table

    table = action_table(rules)
    for seat, name in moves:
        assert int(state.to_act[0]) == seat
        state = engine.step(state, np.array([table.index(name)]))
    t = trick_of(state)
    assert (t["moves"], t["leader"], t["previous"], t["previous_winner"]) == expected


def test_cards_clicked_play_the_move_and_ambiguous_cards_ask(client):
    game = client.post("/api/games", json={"opponents": ["rule", "rule"], "seat": 0, "seed": 3}).json()
    while game["phase"] != "play" and not game["done"]:
        bid3 = [a["id"] for a in game["legal"] if a["name"] in ("bid3", "no_double", "pass")] or [
            game["legal"][0]["id"]]
        game = client.post(f"/api/games/{game['game']}/move", json={"action": bid3[0]}).json()
    assert game["your_turn"]
    single = next(a for a in game["legal"] if a["kind"] == "single")
    r = client.post(f"/api/games/{game['game']}/move", json={"cards": single["cards"]})
    assert r.status_code == 200 and any(e["move"] == single["name"] for e in r.json()["log"] if "move" in e)


def _new(client, **body):
    body = {"opponents": ["rule", "rule"], "seat": 0, "seed": 1} | body
    return client.post("/api/games", json=body)


@pytest.mark.parametrize("body, status, message", [
    ({"opponents": ["dmc:/etc/passwd", "rule"]}, 400, "opponents must be two of ['rule', 'random']"),
    ({"opponents": ["rule"]}, 400, "opponents must be two of"),
    ({"seat": 3}, 400, "seat must be 0, 1 or 2"),
    ({"seat": True}, 400, "seat must be 0, 1 or 2"),
    ({"seed": -1}, 400, "seed must be an int"),
    ({"seed": "7"}, 400, "seed must be an int"),
])
def test_bad_new_games_are_refused(client, body, status, message):
    r = _new(client, **body)
    assert r.status_code == status and message in r.json()["error"]


def test_bad_requests_get_4xx_and_change_nothing(client):
    game = _new(client).json()
    gid = game["game"]
    before = client.get(f"/api/games/{gid}").json()
    cases = [
        (client.post(f"/api/games/{gid}/move", content=b"{not json"), 400, "not JSON"),
        (client.post(f"/api/games/{gid}/move", content=b"[1, 2]"), 400, "expected a JSON object"),
        (client.post(f"/api/games/{gid}/move", json={"action": 99999}), 400, "an action is an id"),
        (client.post(f"/api/games/{gid}/move", json={"action": "pass"}), 400, "an action is an id"),
        (client.post(f"/api/games/{gid}/move", json={"cards": [0, 0]}), 400, "not cards in your hand"),
        (client.post(f"/api/games/{gid}/move", json={"cards": "3"}), 400, "cards are a list"),
        (client.post(f"/api/games/{gid}/move", json={}), 400, 'a move is {"action": ID}'),
        (client.post("/api/games/nosuch/move", json={"action": 0}), 404, "unknown game"),
        (client.get("/api/games/nosuch"), 404, "unknown game"),
        (client.post(f"/api/games/{gid}/move", content=b"x" * (MAX_BODY + 1)), 413, "over"),
        (client.post("/api/replays", content=b"x" * (MAX_BODY + 1)), 413, "over"),
    ]
    illegal = next(a for a in range(200) if a not in [x["id"] for x in before["legal"]])
    cases.append((client.post(f"/api/games/{gid}/move", json={"action": illegal}), 400, "not a legal move"))
    for response, status, message in cases:
        assert response.status_code == status, (message, response.text)
        assert message in response.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == before


def test_one_game_per_session_and_sessions_are_apart(client):
    first = _new(client).json()
    second = _new(client, seed=2).json()
    assert client.get(f"/api/games/{first['game']}").status_code == 404  # replaced by the new one
    assert client.get(f"/api/games/{second['game']}").status_code == 200
    with TestClient(client.app, base_url=BASE) as other:  # another browser: its own session
        assert other.get(f"/api/games/{second['game']}").status_code == 404


def test_a_foreign_host_header_is_refused():
    with TestClient(create_app(opponents=["rule"]), base_url="http://evil.example") as c:
        assert c.get("/api/config").status_code == 400


def test_hint_suggests_a_legal_move(client):
    game = _new(client).json()
    hint = client.get(f"/api/games/{game['game']}/hint").json()
    assert hint["suggestion"]["id"] in [a["id"] for a in game["legal"]]


def test_replays_step_through_every_move_with_every_hand(client, tmp_path):
    path = tmp_path / "games.jsonl"
    run_arena(["rule", "random", "random"], 2, "standard", seed=4, record=str(path))
    text = path.read_text()
    r = client.post("/api/replays", content=text.encode())
    assert r.status_code == 200, r.text
    games = r.json()["games"]
    recs = load_records(path)
    assert len(games) == len(recs) == 6
    for game, rec in zip(games, recs, strict=True):
        assert len(game["steps"]) == len(rec["moves"]) + 1
        assert sum(len(h) for h in game["steps"][0]["hands"]) == 51 + 3 * (game["steps"][0]["landlord"] >= 0)
        assert [s["next"]["move"] for s in game["steps"][:-1]] == [m[1] for m in rec["moves"]]
        assert game["result"]["scores"] == rec["result"]["scores"]
    bad = recs[0] | {"moves": [[0, "bid9"]] + recs[0]["moves"]}
    r = client.post("/api/replays", content=json.dumps(bad).encode())
    assert r.status_code == 400 and "line 1" in r.json()["error"]
    assert client.post("/api/replays", content=b"").status_code == 400


def test_the_page_and_its_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and "app.js" in page.text
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/api/config").json()["opponents"] == ["rule", "random"]


def test_the_command_prints_its_address_and_serves_the_page():
    import subprocess
    import sys
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "doudizhu_table.web", "--port", "0",
                             "--opponents", "rule"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("the web table is at http://127.0.0.1:"), line + proc.stderr.read()
        url = line.split()[5]
        for _ in range(100):
            try:
                with urllib.request.urlopen(url + "api/config", timeout=5) as r:
                    assert json.loads(r.read())["opponents"] == ["rule"]
                break
            except OSError:
                import time

                time.sleep(0.1)
        else:
            raise AssertionError("the server did not answer")
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("args, message", [
    (["--opponents", "nosuch"], "agent 'nosuch': unknown agent"),
    (["--port", "70000"], "--port must be in 0..65535"),
    (["--rules", "nosuch"], "unknown rules preset"),
    (["--host", "203.0.113.1"], "error:"),  # an address this machine does not have
])
def test_command_line_errors_are_one_line(args, message):
    import subprocess
    import sys

    command = [sys.executable, "-m", "doudizhu_table.web", "--port", "0", *args]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], run.stderr


def test_a_port_in_use_is_one_line():
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        command = [sys.executable, "-m", "doudizhu_table.web", "--port", str(port)]
        run = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "error:" in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_cards_with_several_readings_ask_which_move():
    from agents.rule import RuleAgent
    from doudizhu_table.web.game import Ambiguous
    from doudizhu_table.web.server import TableServer

    rules = Rules.preset("douzero")
    game = WebGame(rules, 0, {1: RuleAgent(), 2: RuleAgent()}, ["you", "rule", "rule"], 0, "g")
    deal = engine.Deal(("33344455566678899", "3457TTTTJJJJQQQQ9", "789KKKKAAAA2222XD"), "678", 0, 0)
    game.state = engine.reset(0, 1, rules, deals=[deal])
    ids = [c for c in game.action_json(game.table.index("333444555666"))["cards"]]
    with pytest.raises(Ambiguous) as err:
        game.play_cards(ids)
    names = sorted(game.table.names[a] for a in err.value.options)
    assert names == ["333444555+6+6+6", "333444555666", "444555666+3+3+3"]
    server = TableServer(rules, ["rule"], agent_factory=lambda spec, seed: RuleAgent())
    with pytest.raises(Exception) as answer:
        server.move(game, {"cards": ids})
    assert answer.value.status == 409 and len(answer.value.extra["options"]) == 3
    game.play(err.value.options[0])
    played = [e["move"] for e in game.log if e["seat"] == 0 and e["kind"] == "play"]
    assert played == [game.table.names[err.value.options[0]]]


# -- sharing, errors, sessions, replays (issue: many people at one table) ------------------------


def test_every_error_is_json_with_security_headers():
    def broken(spec, seed):
        raise RuntimeError("an agent that fails")

    app = create_app(opponents=["rule"], agent_factory=broken)
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as c:
        cases = [(c.get("/api/nosuch"), 404, "no such page"),
                 (c.get("/static/nosuch.js"), 404, "no such page"),
                 (c.get("/api/replays"), 405, "GET is not allowed"),
                 (c.delete("/api/games"), 405, "not allowed"),
                 (c.post("/api/games", json={"opponents": ["rule", "rule"]}), 500, "the server failed")]
        for response, status, message in cases:
            assert response.status_code == status and message in response.json()["error"], response.text
            assert response.headers["x-frame-options"] == "DENY", status  # a 500 too, each header once
            assert response.headers.get_list("content-security-policy") == [SECURITY_HEADERS[
                "content-security-policy"]]
        page = c.get("/")
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert page.headers["x-frame-options"] == "DENY"
    with TestClient(create_app(opponents=["rule"]), base_url="http://evil.example") as c:
        r = c.get("/api/config")
        assert r.status_code == 400 and "not 'evil.example'" in r.json()["error"]
        assert r.headers["x-content-type-options"] == "nosniff"  # a refusal of the guard too


@pytest.mark.parametrize("headers, status", [
    ({"Origin": "https://evil.example"}, 403), ({"Origin": "http://127.0.0.1:9999"}, 403),
    ({"Origin": "null"}, 403), ({"Sec-Fetch-Site": "same-site"}, 403),
    ({"Sec-Fetch-Site": "cross-site"}, 403),
    ({"Origin": "http://127.0.0.1", "Sec-Fetch-Site": "same-origin"}, 200), ({}, 200),
])
def test_a_foreign_origin_may_not_change_a_game(client, headers, status):
    game = _new(client).json()
    legal = game["legal"][0]["id"]
    r = client.post(f"/api/games/{game['game']}/move", json={"action": legal}, headers=headers)
    assert r.status_code == status, r.text
    if status == 403:
        assert "another site" in r.json()["error"]
        assert client.post("/api/games", json={}, headers=headers).status_code == 403
        assert client.get(f"/api/games/{game['game']}").json()["log"] == game["log"]  # nothing changed


def test_server_chosen_seeds_have_128_bits(client):
    table = client.app.state.table
    seeds = []
    for _ in range(4):
        client.post("/api/games", json={"opponents": ["rule", "rule"]})
        seeds.append(table.sessions.games[client.cookies["ddz_session"]].seed)
    assert all(0 <= s < 2**128 for s in seeds) and max(s.bit_length() for s in seeds) > 100


def test_a_game_in_use_is_kept_and_idle_ones_make_room():
    from doudizhu_table.web.server import RequestError, Sessions

    now = [0.0]
    sessions = Sessions(limit=2, keep=60, clock=lambda: now[0])
    def game(gid):
        return WebGame(Rules.preset("standard"), 0, {1: _Rule(), 2: _Rule()}, ["you", "r", "r"], 1, gid)

    sessions.put("a", game("ga"))
    now[0] = 30
    sessions.put("b", game("gb"))
    with pytest.raises(RequestError) as full:
        sessions.check_room("c")  # both in use: refused, nothing dropped
    assert full.value.status == 503 and "full" in str(full.value) and len(sessions.games) == 2
    now[0] = 70
    sessions.game("a", "ga")  # "a" is used again: "b" (idle 40 s) is still in use
    with pytest.raises(RequestError):
        sessions.put("c", game("gc"))
    now[0] = 95  # "b" idle 65 s: dropped for "c"
    sessions.put("c", game("gc"))
    assert list(sessions.games) == ["a", "c"]
    sessions.put("a", game("ga2"))  # a new game of a session replaces its old one, no room needed


def _Rule():
    from agents.rule import RuleAgent

    return RuleAgent()


def test_hints_racing_moves_stay_within_the_persons_moves():
    """A hint asked while the agents move answers for the person's seat or not at all."""
    import threading

    from doudizhu_table.web.server import TableServer

    server = TableServer(Rules.preset("standard"), ["rule"])
    for seed in range(3):
        server.new_game("t", {"opponents": ["rule", "rule"], "seat": 1, "seed": seed})
        game = server.sessions.games["t"]
        mine = {int(c) for c in dealt_ids(game.state, 0, 1)} | {int(c) for c in hole_ids(game.state)}
        legal_seen, hints, stop = set(), [], threading.Event()

        def ask(game=game, hints=hints, stop=stop):
            while not stop.is_set():
                hints.append(server.hint(game)["suggestion"])

        asker = threading.Thread(target=ask)
        asker.start()
        view = server.view(game)
        while not view["done"]:
            legal_seen |= {a["id"] for a in view["legal"]}
            view = server.move(game, {"action": view["legal"][-1]["id"]})
        stop.set()
        asker.join()
        for h in hints:
            assert h is None or (h["id"] in legal_seen and set(h["cards"]) <= mine), h


def test_replays_are_refused_before_any_work_and_answer_compactly(client, tmp_path, monkeypatch):
    import doudizhu_table.web.server as server_module

    path = tmp_path / "games.jsonl"
    run_arena(["rule", "random", "random"], 1, "standard", seed=4, record=str(path))
    line = path.read_text().splitlines()[0]
    answer = client.post("/api/replays", content=line.encode())
    steps = len(answer.json()["games"][0]["steps"])
    assert len(answer.content) < 700 * steps  # card ids, not card objects
    assert all(isinstance(c, int) for c in answer.json()["games"][0]["steps"][0]["hands"][0])

    def no_work(rec):
        raise AssertionError("a game was replayed before the limits were checked")

    monkeypatch.setattr(server_module, "_replay_game", no_work)
    r = client.post("/api/replays", content=("\n".join([line] * 201)).encode())
    assert r.status_code == 413 and "more than 200" in r.json()["error"]


def test_pretrained_games_share_one_model():
    pytest.importorskip("torch")
    from doudizhu_table.web.server import TableServer

    server = TableServer(Rules.preset("standard"), ["pretrained", "search:pretrained,worlds=2,samples=4"])
    agents = []
    for token in "ab":
        server.new_game(token, {"opponents": server.opponents, "seed": 1})
        agents += list(server.sessions.games[token].agents.values())
    models = {id(a.model) for a in agents if hasattr(a, "model")} | {
        id(a.base.model) for a in agents if hasattr(a, "base")}
    assert len(models) == 1


def test_the_table_caches_are_bounded():
    from doudizhu_env import actions, legal
    from doudizhu_env.rules import TABLES_KEPT

    assert actions._table.cache_info().maxsize == legal._tables.cache_info().maxsize == TABLES_KEPT


def test_moves_are_named_as_the_rules_page_names_them():
    from doudizhu_env.display import group_moves, move_words

    table = action_table("standard")
    kinds = group_moves(Rules.preset("standard"), [table.index("555+4"), table.index("333444+5+7"),
                                                   table.index("7777+3+K"), table.index("334455")])
    assert list(kinds) == ["triple + single", "plane + singles", "four + two singles", "pair sequence"]
    assert [move_words("standard", a) for a in range(7)] == ["pass", "no bid", "bid 1", "bid 2", "bid 3",
                                                            "double", "no double"]


def test_playing_after_the_hand_is_over_says_so(client):
    game = _new(client, seed=2).json()
    while not game["done"]:
        game = client.post(f"/api/games/{game['game']}/move", json={"action": game["legal"][-1]["id"]}).json()
    assert game["result"]["outcome"].startswith(("you win", "you lose", "no score"))
    assert any("you (seat 0)" in line for line in game["result"]["lines"])
    for body in ({"cards": [game["hand"][0]["id"]] if game["hand"] else [0]}, {"action": 0}):
        r = client.post(f"/api/games/{game['game']}/move", json=body)
        assert r.status_code == 400 and "the hand is over" in r.json()["error"]


def test_a_large_answer_is_compressed(client, tmp_path):
    path = tmp_path / "games.jsonl"
    run_arena(["rule", "random", "random"], 2, "standard", seed=4, record=str(path))
    r = client.post("/api/replays", content=path.read_bytes(), headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["content-encoding"] == "gzip" and len(r.json()["games"]) == 6
