"""The web table under misuse: one client taking every place, requests too malformed to reach the
application, clients that hang up in the middle of an upload.

The first through the API as a page (or a script) calls it; the others through the command a person
types (``python -m doudizhu_table.web``) and raw sockets, since the HTTP layer is the point.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("starlette.testclient")

from starlette.testclient import TestClient  # noqa: E402

from doudizhu_env.rules import Rules  # noqa: E402
from doudizhu_table.web.server import (  # noqa: E402
    MAX_GAMES_PER_CLIENT,
    SECURITY_HEADERS,
    RequestError,
    Sessions,
    TableServer,
    create_app,
)

BASE = "http://127.0.0.1"


def _rule(spec, seed):
    from agents.rule import RuleAgent

    return RuleAgent()


def test_one_client_cannot_take_every_place_and_hears_why_in_a_json_429():
    """A script without cookies makes a new session per request: past its share it gets a 429 (JSON,
    the security headers), while another client still gets a game, and its own games are kept."""
    app = create_app(opponents=["rule"], agent_factory=_rule)
    with TestClient(app, base_url=BASE, client=("198.51.100.7", 1234)) as greedy:
        statuses = []
        for _ in range(MAX_GAMES_PER_CLIENT + 3):
            greedy.cookies.clear()
            statuses.append(greedy.post("/api/games", json={"opponents": ["rule", "rule"]}))
        assert [r.status_code for r in statuses] == [200] * MAX_GAMES_PER_CLIENT + [429] * 3
        refused = statuses[-1]
        assert refused.headers["content-type"] == "application/json"
        for name, value in SECURITY_HEADERS.items():
            assert refused.headers[name] == value
        body = refused.json()
        assert body["limit"] == MAX_GAMES_PER_CLIENT
        assert body["error"].startswith(f"too many games from one client: {MAX_GAMES_PER_CLIENT} games of "
                                        "this address are in use")
        kept = app.state.table.sessions.games
        assert len(kept) == MAX_GAMES_PER_CLIENT
    with TestClient(app, base_url=BASE, client=("203.0.113.9", 4321)) as other:
        assert other.post("/api/games", json={"opponents": ["rule", "rule"]}).status_code == 200
    assert len(kept) == MAX_GAMES_PER_CLIENT + 1


def test_a_clients_new_game_in_its_own_session_needs_no_new_place():
    """One browser starting hand after hand (one session) never meets the cap."""
    app = create_app(opponents=["rule"], agent_factory=_rule)
    with TestClient(app, base_url=BASE) as browser:
        for _ in range(MAX_GAMES_PER_CLIENT + 2):
            assert browser.post("/api/games", json={"opponents": ["rule", "rule"]}).status_code == 200
    assert len(app.state.table.sessions.games) == 1


def test_a_client_at_its_cap_makes_room_among_its_own_idle_games():
    now = [0.0]
    sessions = Sessions(limit=10, keep=60, clock=lambda: now[0], per_client=2)
    server = TableServer(Rules.preset("standard"), ["rule"], agent_factory=_rule)
    server.sessions = sessions
    body = {"opponents": ["rule", "rule"], "seed": 1}
    server.new_game("a1", body, "10.0.0.1")
    now[0] = 30
    server.new_game("a2", body, "10.0.0.1")
    server.new_game("b1", body, "10.0.0.2")  # another client: its own places
    with pytest.raises(RequestError) as refused:
        server.new_game("a3", body, "10.0.0.1")
    assert refused.value.status == 429 and refused.value.extra == {"limit": 2}
    assert list(sessions.games) == ["a1", "a2", "b1"]  # nothing dropped for a refusal
    now[0] = 65  # a1 idle 65 s: it makes room for a3; a2 (idle 35 s) and b1 stay
    server.new_game("a3", body, "10.0.0.1")
    assert list(sessions.games) == ["a2", "b1", "a3"]


# -- through the command and raw sockets --------------------------------------------------------


@pytest.fixture(scope="module")
def served():
    """``python -m doudizhu_table.web --port 0 --opponents rule random``: (port, process)."""
    proc = subprocess.Popen([sys.executable, "-m", "doudizhu_table.web", "--port", "0", "--opponents", "rule",
                             "random"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert found, line + proc.stderr.read()
    port = int(found.group(1))
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            break
        except OSError:
            time.sleep(0.05)
    try:
        yield port, proc
    finally:
        proc.terminate()
        proc.wait(10)


def _raw(port: int, data: bytes) -> bytes:
    """What the server answers to ``data`` sent as is, up to its closing the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        answer = b""
        try:
            while chunk := s.recv(65536):
                answer += chunk
        except ConnectionResetError:  # it closed with bytes of ours unread; the answer came first
            pass
    return answer


def _parse(answer: bytes) -> tuple[int, dict, bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


CONFIG = b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
MALFORMED = {
    "a Content-Length that is not a number": b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                             b"Content-Length: abc\r\n\r\n",
    "two Content-Lengths": b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n"
                           b"Content-Length: 2\r\n\r\n{}",
    "a header line without a colon": b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\nnocolon\r\n\r\n",
    "a path that is not ASCII": b"GET /\xff HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    "an unknown Transfer-Encoding": b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    b"Transfer-Encoding: gzip\r\n\r\n",
    "a TLS handshake on the plain port": bytes.fromhex("16030100a5010000a10303") + bytes(60),
    "a header over the size limit": b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 200_000
                                    + b"\r\n\r\n",
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_request_is_answered_as_json_with_the_security_headers(served, case):
    port, _ = served
    status, headers, body = _parse(_raw(port, MALFORMED[case]))
    assert status == 400
    assert headers["content-type"] == "application/json" and headers["connection"] == "close"
    for name, value in SECURITY_HEADERS.items():
        assert headers[name] == value, name
    assert json.loads(body) == {"error": "malformed HTTP request: expected HTTP/1.1 with well-formed "
                                         "headers and a numeric Content-Length"}
    assert _parse(_raw(port, CONFIG))[0] == 200  # still up


def test_a_client_hanging_up_mid_upload_is_one_line_in_the_log():
    """The server's log (its stderr) gets one warning line naming the request, no traceback; the
    server keeps answering."""
    proc = subprocess.Popen([sys.executable, "-m", "doudizhu_table.web", "--port", "0", "--opponents",
                             "rule"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r":(\d+)/", proc.stdout.readline()).group(1))
        for _ in range(200):
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                time.sleep(0.05)
        with s:
            s.sendall(b"POST /api/replays HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n"
                      + b"x" * 100)
            time.sleep(0.3)
        time.sleep(0.5)
        assert _parse(_raw(port, CONFIG))[0] == 200
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == ["WARNING:  127.0.0.1 disconnected during POST /api/replays after 100 of 100,000 body "
                     "bytes; nothing changed"], err
