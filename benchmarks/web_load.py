"""The web table under load: many people at once, each with hints racing their moves.

Starts the table (``python -m doudizhu_table.web --port 0 --opponents ...``, as a subprocess, from
``--source``, default this checkout; an older checkout's ``doudizhu_env.web`` too) and runs
``--clients`` clients at once, each playing ``--hands`` seeded hands through the JSON API:
client ``k`` sits at seat ``k % 3`` against two of the opponents (rotated), picks its moves from
the legal ones by a fixed rule, and sends a hint request at the same moment as each move (the two
race on the server). While they play, a probe
asks ``GET /api/config`` every 0.2 s (how long the event loop keeps others waiting).

It reports, and the load test (``tests/test_web_load.py``) checks:

- server errors (5xx, dropped connections) and other failed requests (a 4xx to a legal move);
- hints outside the person's own moves: a suggestion must be one of the legal moves the person
  had just before or just after the move it raced, its cards in the person's hand then;
- the server's resident memory (``VmRSS``) once started and after the load;
- p50 / p95 latencies of new games, moves, hints and the probe;
- whether seeded games played on the loaded server afterwards make the same moves as on a
  fresh server (``--check-fresh``).

Run::

    python -m benchmarks.web_load                                    # 20 clients x 2 hands
    python -m benchmarks.web_load --clients 8 --json web_load.json
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time

from benchmarks import write_json
from doudizhu_arena.options import check_count, check_outputs_and_agents, command_errors
from doudizhu_table.web.server import MAX_GAMES_PER_CLIENT

SPECS = ("pretrained", "rule", "search:rule")
#: The seeded hands played after the clients', each a new session (:func:`seeded_games`).
SEEDED = 6
#: Clients at once: all come from one address, which the server lets keep MAX_GAMES_PER_CLIENT games
#: in use, the seeded hands' included.
MAX_CLIENTS = MAX_GAMES_PER_CLIENT - SEEDED
#: Hands per client.
MAX_HANDS = 1000
MAX_REQUESTS = 300  # of one hand: a game that never comes back to the person stops there


class Client:
    """One browser: a connection and the session cookie (one thread each)."""

    def __init__(self, port: int, cookie: str | None = None):
        self.port, self.cookie = port, cookie
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def request(self, method: str, path: str, body=None) -> tuple[int, dict, float]:
        """Status, JSON answer ({"error": text} if not JSON) and seconds taken."""
        headers = {"Content-Type": "application/json"}
        if self.cookie:
            headers["Cookie"] = self.cookie
        data = None if body is None else json.dumps(body).encode()
        start = time.perf_counter()
        try:
            self.conn.request(method, path, body=data, headers=headers)
            response = self.conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as err:
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            return 599, {"error": f"connection: {err!r}"}, time.perf_counter() - start
        seconds = time.perf_counter() - start
        cookie = response.getheader("set-cookie")
        if cookie and not self.cookie:
            self.cookie = cookie.split(";")[0]
        try:
            return response.status, json.loads(raw), seconds
        except ValueError:
            return response.status, {"error": raw[:200].decode("utf-8", "replace")}, seconds


class Tally:
    """What the clients saw, added to from every thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = {"new": [], "move": [], "hint": [], "probe": []}
        self.server_errors: list[str] = []
        self.failed: list[str] = []
        self.bad_hints: list[str] = []
        self.hands = 0

    def add(self, kind: str, status: int, answer: dict, seconds: float) -> None:
        with self.lock:
            self.latency[kind].append(seconds)
            if status >= 500:
                self.server_errors.append(f"{kind} {status}: {str(answer.get('error'))[:120]}")
            elif status >= 400:
                self.failed.append(f"{kind} {status}: {str(answer.get('error'))[:120]}")


def pick(view: dict, seed: int) -> int:
    """The person's move: a legal one, by a fixed rule of the view (the same on any server)."""
    legal = view["legal"]
    return legal[(seed + 7 * len(view["log"])) % len(legal)]["id"]


def play_hand(port: int, tally: Tally, client: Client, opponents: list[str], seat: int, seed: int,
              race_hints: bool = True) -> list[str] | None:
    """One hand to its end (hints racing each move); the log's texts, or None if it broke off."""
    status, view, seconds = client.request("POST", "/api/games", {"opponents": opponents, "seat": seat,
                                                                   "seed": seed})
    tally.add("new", status, view, seconds)
    if status != 200:
        return None
    for _ in range(MAX_REQUESTS):
        if view["done"]:
            with tally.lock:
                tally.hands += 1
            return [e["text"] for e in view["log"]] + [str(view["result"]["scores"])]
        if not view["your_turn"]:
            return None
        hint = _race_hint(port, client.cookie, view, tally) if race_hints else None
        status, after, seconds = client.request("POST", f"/api/games/{view['game']}/move",
                                                {"action": pick(view, seed)})
        tally.add("move", status, after, seconds)
        if hint is not None:
            hint.join()
            _check_hint(hint.answer, view, after if status == 200 else None, tally)
        if status != 200:
            return None
        view = after
    return None


def _race_hint(port: int, cookie: str, view: dict, tally: Tally) -> threading.Thread:
    """A hint request sent now, on its own connection, while the move goes out."""
    def ask():
        status, answer, seconds = Client(port, cookie).request("GET", f"/api/games/{view['game']}/hint")
        tally.add("hint", status, answer, seconds)
        thread.answer = answer if status == 200 else None

    thread = threading.Thread(target=ask)
    thread.answer = None
    thread.start()
    return thread


def _check_hint(answer: dict | None, before: dict, after: dict | None, tally: Tally) -> None:
    """A suggestion must be one of the person's legal moves, its cards in the person's hand (before
    or after the move it raced: a landlord's hand grows by the hole cards)."""
    if not answer or answer.get("suggestion") is None:
        return
    s = answer["suggestion"]
    legal = {a["id"] for a in before["legal"]} | {a["id"] for a in (after or {}).get("legal", [])}
    hand = {c["id"] for c in before["hand"]} | {c["id"] for c in (after or {}).get("hand", [])}
    if s["id"] not in legal or not set(s["cards"]) <= hand:
        with tally.lock:
            tally.bad_hints.append(f"{s['name']} (cards {s['cards']})")


def _probe(port: int, tally: Tally, stop: threading.Event) -> None:
    client = Client(port)
    while not stop.is_set():
        tally.add("probe", *client.request("GET", "/api/config"))
        stop.wait(0.2)


def run_clients(port: int, clients: int, hands: int, specs=SPECS) -> Tally:
    """``clients`` clients at once, ``hands`` hands each (see the module docstring)."""
    tally, stop = Tally(), threading.Event()

    def client_work(k: int) -> None:
        client = Client(port)
        opponents = [specs[k % len(specs)], specs[(k + 1) % len(specs)]]
        for h in range(hands):
            if play_hand(port, tally, client, opponents, k % 3, 1000 * k + h) is None:
                with tally.lock:
                    tally.failed.append(f"client {k} hand {h} broke off")

    probe = threading.Thread(target=_probe, args=(port, tally, stop))
    probe.start()
    threads = [threading.Thread(target=client_work, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    probe.join()
    return tally


def seeded_games(port: int, specs=SPECS) -> list[list[str] | None]:
    """A few seeded hands, one client at a time, no hints: their logs (to compare servers)."""
    out = []
    for k, pair in enumerate([[a, b] for a in specs for b in specs][:SEEDED]):
        out.append(play_hand(port, Tally(), Client(port), pair, k % 3, 77 + k, race_hints=False))
    return out


class Server:
    """``python -m doudizhu_table.web`` in a subprocess (from ``source``), on a free port."""

    def __init__(self, specs=SPECS, source: str = "."):
        env = dict(os.environ, PYTHONPATH=os.path.abspath(source))
        module = "doudizhu_table.web"
        if not os.path.exists(os.path.join(source, "doudizhu_table", "web")):
            module = "doudizhu_env.web"  # where the table lived before
        self.proc = subprocess.Popen([sys.executable, "-m", module, "--port", "0",
                                      "--opponents", *specs], cwd=source, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "http://" not in line:
            self.close()
            raise RuntimeError(f"the server did not start: {line}{self.proc.stderr.read()[-2000:]}")
        self.port = int(line.split("http://")[1].split("/")[0].rsplit(":", 1)[1])
        deadline = time.time() + 60
        while Client(self.port).request("GET", "/api/config")[0] != 200:  # printed before it listens
            if time.time() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError(f"the server did not answer: {self.proc.stderr.read()[-2000:]}")
            time.sleep(0.1)

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            return next(int(x.split()[1]) for x in f if x.startswith("VmRSS")) / 1024

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    q = statistics.quantiles(values, n=20, method="inclusive") if len(values) > 1 else [values[0]] * 19
    return {"n": len(values), "p50_ms": round(1000 * statistics.median(values), 1),
            "p95_ms": round(1000 * q[18], 1), "max_ms": round(1000 * max(values), 1)}


def run(clients: int = 20, hands: int = 2, specs=SPECS, source: str = ".", check_fresh: bool = True) -> dict:
    """The whole measurement (see the module docstring): a report dict."""
    server = Server(specs, source)
    try:
        Client(server.port).request("GET", "/api/config")
        rss_before = server.rss_mb()
        start = time.perf_counter()
        tally = run_clients(server.port, clients, hands, specs)
        wall = time.perf_counter() - start
        rss_after = server.rss_mb()
        loaded = seeded_games(server.port, specs) if check_fresh else None
    finally:
        server.close()
    report = {"clients": clients, "hands": hands, "opponents": list(specs), "hands_played": tally.hands,
              "wall_s": round(wall, 1), "server_errors": len(tally.server_errors),
              "failed_requests": len(tally.failed), "bad_hints": len(tally.bad_hints),
              "rss_mb": {"before": round(rss_before), "after": round(rss_after),
                         "growth": round(rss_after - rss_before)},
              "latency": {k: percentiles(v) for k, v in tally.latency.items()},
              "examples": {"server_errors": tally.server_errors[:5], "failed": tally.failed[:5],
                           "bad_hints": tally.bad_hints[:5]}}
    if check_fresh:
        fresh_server = Server(specs, source)
        try:
            fresh = seeded_games(fresh_server.port, specs)
        finally:
            fresh_server.close()
        same = sum(a == b and a is not None for a, b in zip(loaded, fresh, strict=True))
        report["seeded_games_same_as_fresh"] = f"{same} of {len(fresh)}"
        report["seeded_identical"] = loaded == fresh and None not in fresh
    return report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.web_load", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--hands", type=int, default=2)
    p.add_argument("--opponents", nargs="+", default=list(SPECS))
    p.add_argument("--source", default=".", help="the checkout whose server to start (default: this one)")
    p.add_argument("--no-fresh", action="store_true", help="skip the seeded games against a fresh server")
    p.add_argument("--json", help="also write the report here")
    args = p.parse_args(argv)
    with command_errors(p):  # every option, the opponents and the output before the server starts
        check_count(args.clients, "--clients", 1, MAX_CLIENTS,
                    "they all come from one address, which the server lets keep that many games")
        check_count(args.hands, "--hands", 1, MAX_HANDS)
        if not os.path.isdir(os.path.join(args.source, "doudizhu_table")):
            raise ValueError(f"--source {args.source!r} is not a checkout of this project (no doudizhu_table "
                             "folder in it)")
        check_outputs_and_agents({"--json": args.json}, args.opponents, [None])
    report = run(args.clients, args.hands, args.opponents, args.source, not args.no_fresh)
    print(json.dumps(report, indent=1))
    if args.json:
        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
