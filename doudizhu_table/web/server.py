"""The web table's server: a Starlette app serving the page and a small JSON API.

Routes (all JSON but the pages):

- ``GET /``: the table page; ``GET /static/...``: its script and styles.
- ``GET /api/config``: the opponents this server offers, its rules, the default seat.
- ``POST /api/games`` ``{"opponents": [SPEC, SPEC], "seat": 0, "seed": 7}``: a new game for this
  browser session (one game per session: a new one replaces the old), played by the agents until
  the person's turn; answers the view (:func:`doudizhu_table.web.game.view_of`).
- ``GET /api/games/{id}``: the view.
- ``POST /api/games/{id}/move`` ``{"action": ID}`` or ``{"cards": [CARD IDS]}``: the person's move,
  checked by the engine, then the agents' moves up to the person's next turn; answers the view.
  Cards that read as several moves answer 409 with the ``options``.
- ``GET /api/games/{id}/hint``: a suggested move and the legal moves by kind.
- ``POST /api/replays``: the text of a JSON Lines file of game records (``--record``): every
  game's steps with all hands shown (:func:`replay_json`).

The server is the authority: the engine checks every move, the page only ever gets the view of
the person's seat until the hand is over, and it can only pick opponents from the list the
server was started with (no paths from the page). A bad request (unknown game, illegal move,
malformed JSON, a body over :data:`MAX_BODY` bytes) gets a 4xx answer ``{"error": "..."}`` and
changes nothing. Sessions live in memory; the oldest are dropped beyond :data:`MAX_SESSIONS`.
"""

from __future__ import annotations

import collections
import json
import os
import secrets
import threading

from doudizhu_env import records
from doudizhu_env.actions import action_table
from doudizhu_env.checks import is_int
from doudizhu_env.display import hole_ids, score_lines, suited_hand, trick_of
from doudizhu_env.rules import Rules

from .game import Ambiguous, MoveError, WebGame, card_json, view_of

#: The largest request body accepted (a replay file included).
MAX_BODY = 2_000_000
#: Browser sessions kept (each with at most one game).
MAX_SESSIONS = 64
#: Games one replay request may hold.
MAX_REPLAY_GAMES = 200
COOKIE = "ddz_session"
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")


class RequestError(Exception):
    """A request the server refuses: the HTTP status and a message for the page."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class Sessions:
    """Browser session token -> its game, the least recently used dropped beyond ``limit``."""

    def __init__(self, limit: int = MAX_SESSIONS):
        self.limit = limit
        self.games: collections.OrderedDict[str, WebGame | None] = collections.OrderedDict()
        self.lock = threading.Lock()

    def game(self, token: str | None, game_id: str) -> WebGame:
        with self.lock:
            game = self.games.get(token) if token else None
            if game is None or not secrets.compare_digest(game.id, str(game_id)):
                raise RequestError(404, f"unknown game {str(game_id)[:40]!r}: start a new game "
                                   "(one game per browser session)")
            self.games.move_to_end(token)
            return game

    def put(self, token: str, game: WebGame) -> None:
        with self.lock:
            self.games[token] = game
            self.games.move_to_end(token)
            while len(self.games) > self.limit:
                self.games.popitem(last=False)


def replay_json(text: str) -> list[dict]:
    """Every game of a records file's text, step by step with every hand (records are checked and
    replayed through the engine; :class:`RequestError` 400 names the first bad line)."""
    games = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if len(games) >= MAX_REPLAY_GAMES:
            raise RequestError(413, f"more than {MAX_REPLAY_GAMES} games in one file; send fewer")
        try:
            rec = json.loads(line)
            records.check_record(rec)
            games.append(_replay_game(rec))
        except (ValueError, RecursionError) as err:  # RecordError and JSON errors are ValueErrors
            raise RequestError(400, f"line {number}: {str(err)[:200]}") from None
    if not games:
        raise RequestError(400, "no game records in the file; expected JSON Lines written by --record")
    return games


def _replay_game(rec: dict) -> dict:
    steps = []
    players = [str(p)[:40] for p in rec.get("players") or ["seat 0", "seat 1", "seat 2"]]
    names = action_table(records.rules_of(rec)).names
    final = None
    for state, seat, name in records.replay_states(rec):
        steps.append(_replay_step(state, seat, name, names))
        final = state
    final = records.check_result(rec, final)
    steps[-1] = _replay_step(final, -1, "", names)
    return {"players": players, "steps": steps, "result": {
        "scores": [int(x) for x in final.scores[0]], "lines": score_lines(final, 0, players)}}


def _replay_step(state, seat: int, name: str, names) -> dict:
    landlord = int(state.landlord[0])
    on = int(state.table_action[0])
    return {"next": {"seat": seat, "move": name} if seat >= 0 else None, "phase": int(state.phase[0]),
            "landlord": landlord, "base": int(state.base[0]), "multiplier": int(state.multiplier[0]),
            "hands": [[card_json(c) for c in suited_hand(state, 0, s)] for s in range(3)],
            "hole": [card_json(c) for c in hole_ids(state)] if landlord >= 0 else [],
            "trick": trick_of(state)["moves"], "to_beat": names[on] if on >= 0 else None}


class TableServer:
    """What the routes share: the rules, the opponents offered, the sessions."""

    def __init__(self, rules: Rules, opponents: list[str], agent_factory=None):
        from agents.registry import make_agent

        self.rules, self.opponents = rules, list(dict.fromkeys(opponents))
        self.make_agent = agent_factory or (lambda spec, seed: make_agent(spec, rules=rules, seed=seed))
        self.sessions = Sessions()

    def new_game(self, token: str, body: dict) -> WebGame:
        specs = body.get("opponents", self.opponents[:1] * 2)
        if (not isinstance(specs, list) or len(specs) != 2
                or not all(isinstance(s, str) and s in self.opponents for s in specs)):
            raise RequestError(400, f"opponents must be two of {self.opponents}, got {str(specs)[:80]}")
        seat, seed = body.get("seat", 0), body.get("seed")
        if not is_int(seat) or not 0 <= seat <= 2:
            raise RequestError(400, f"seat must be 0, 1 or 2, got {str(seat)[:20]}")
        if seed is None:
            seed = secrets.randbelow(2**31)
        elif not is_int(seed) or not 0 <= seed < 2**63:
            raise RequestError(400, f"seed must be an int in [0, 2**63), got {str(seed)[:30]}")
        agents, names = {}, ["you"] * 3
        for k, spec in enumerate(specs, 1):
            other = (seat + k) % 3
            agents[other], names[other] = self.make_agent(spec, [seed, other]), spec
        game = WebGame(self.rules, seat, agents, names, seed, secrets.token_urlsafe(12))
        self.sessions.put(token, game)
        return game

    def move(self, game: WebGame, body: dict) -> None:
        with game.lock:
            try:
                if "action" in body:
                    game.play(body["action"])
                elif "cards" in body:
                    game.play_cards(body["cards"])
                else:
                    raise MoveError('a move is {"action": ID} or {"cards": [CARD IDS]}')
            except Ambiguous as err:
                raise _Options(str(err), [game.action_json(a) for a in err.options]) from None
            except MoveError as err:
                raise RequestError(400, str(err)) from None


class _Options(RequestError):
    def __init__(self, message: str, options: list[dict]):
        super().__init__(409, message)
        self.options = options


def create_app(rules: Rules | None = None, opponents: list[str] | None = None, agent_factory=None,
               hosts: list[str] | None = None):
    """The Starlette application (see the module docstring).

    ``opponents``: the agent specs the page may choose from (default ``pretrained``, ``rule`` and
    ``random`` for the standard rules, else ``rule`` and ``random``); ``hosts``: the ``Host``
    headers answered (default the loopback names; a page of another site that rebinds its name
    to this machine is refused), ``["*"]`` for any.
    """
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    rules = rules or Rules.preset("standard")
    opponents = opponents or (["pretrained", "rule", "random"] if rules == Rules.preset("standard")
                              else ["rule", "random"])
    server = TableServer(rules, opponents, agent_factory)

    def answer(request: Request, payload, status: int = 200) -> JSONResponse:
        response = JSONResponse(payload, status)
        if COOKIE not in request.cookies:
            response.set_cookie(COOKIE, request.state.token, httponly=True, samesite="strict")
        return response

    def routed(handler):
        async def endpoint(request: Request):
            request.state.token = request.cookies.get(COOKIE) or secrets.token_urlsafe(18)
            try:
                return answer(request, await handler(request))
            except _Options as err:
                return answer(request, {"error": str(err), "options": err.options}, err.status)
            except RequestError as err:
                return answer(request, {"error": str(err)}, err.status)
        return endpoint

    async def config(request):
        return {"opponents": server.opponents, "rules": "with bidding" if rules.bidding else "fixed landlord"}

    async def new_game(request):
        body = await read_json(request)
        return view_of(await run_in_threadpool(server.new_game, request.state.token, body))

    async def get_game(request):
        return view_of(server.sessions.game(request.cookies.get(COOKIE), request.path_params["gid"]))

    async def move(request):
        game = server.sessions.game(request.cookies.get(COOKIE), request.path_params["gid"])
        await run_in_threadpool(server.move, game, await read_json(request))
        return view_of(game)

    async def hint(request):
        game = server.sessions.game(request.cookies.get(COOKIE), request.path_params["gid"])
        return await run_in_threadpool(game.hint)

    async def replays(request):
        return {"games": replay_json((await read_body(request)).decode("utf-8", errors="replace"))}

    async def index(request):
        return FileResponse(os.path.join(STATIC, "index.html"))

    routes = [Route("/", index), Route("/api/config", routed(config)),
              Route("/api/games", routed(new_game), methods=["POST"]),
              Route("/api/games/{gid}", routed(get_game)),
              Route("/api/games/{gid}/move", routed(move), methods=["POST"]),
              Route("/api/games/{gid}/hint", routed(hint)),
              Route("/api/replays", routed(replays), methods=["POST"]),
              Mount("/static", StaticFiles(directory=STATIC), name="static")]
    hosts = hosts or ["127.0.0.1", "localhost", "[::1]"]
    app = Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)])
    app.state.table = server
    return app


async def read_body(request, limit: int = MAX_BODY) -> bytes:
    """The request body, refused (413) beyond ``limit`` bytes before it is all read."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise RequestError(413, f"the request body is over {limit:,} bytes; send less")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise RequestError(413, f"the request body is over {limit:,} bytes; send less")
    return body


async def read_json(request) -> dict:
    """The body as a JSON object (an empty body is ``{}``), else 400 saying what was expected."""
    body = await read_body(request)
    if not body.strip():
        return {}
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as err:
        raise RequestError(400, f"the body is not JSON ({str(err)[:80]}); expected a JSON object") from None
    if not isinstance(data, dict):
        raise RequestError(400, f"expected a JSON object, got {type(data).__name__}")
    return data
