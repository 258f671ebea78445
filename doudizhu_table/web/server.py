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
  game's steps with all hands shown, cards as ids (:func:`replay_json`).

The server is the authority: the engine checks every move, the page only ever gets the view of
the person's seat until the hand is over, and it can only pick opponents from the list the
server was started with (no paths from the page). Every answer that is not a page is JSON: a bad
request (unknown game or route, illegal move, malformed JSON, a body over :data:`MAX_BODY` bytes,
a wrong method, a foreign ``Host`` or ``Origin``) gets a 4xx ``{"error": "..."}`` and changes
nothing, and a fault of the server a 500 of the same form (:func:`error_response`, the one home of
errors). Every answer, errors included, carries a Content-Security-Policy and ``X-Frame-Options: DENY``.

Sharing. Requests of one game are serialized (the game's lock, held while the agents move, the
hint is chosen or the view is built), and run off the event loop, as replays do; agents' models
are loaded once per spec and shared by every game (:class:`agents.registry.SharedModels`), each
game's agents keeping their own generators (a seeded game plays the same on any server). Sessions
live in memory, at most :data:`MAX_SESSIONS`: beyond it the least recently used game idle for
:data:`KEEP_ACTIVE` seconds is dropped, and while every game is active a new one is refused (503).
One client (by its address) keeps at most :data:`MAX_GAMES_PER_CLIENT` of those places: beyond it
its own least recently used idle game makes room, and while all of its games are active a new
game is refused (429, saying so), so that one client cannot take every place.
Seeds the server chooses have 128 bits of OS entropy.

The HTTP layer. Requests that are not HTTP enough to reach the application (a malformed
``Content-Length``, a bad header line, bytes that are not HTTP at all) are answered by uvicorn's
h11 protocol, before Starlette: ``python -m doudizhu_table.web`` runs it as
:func:`http_protocol`, whose answer is the same JSON ``{"error": ...}`` with the
:data:`SECURITY_HEADERS` and ``Connection: close``. Run under another server (``uvicorn
doudizhu_table...`` with its default protocol, httptools), that layer answers its own short plain
text (``Invalid HTTP request received.``), which this module cannot reach. A client that
disconnects while it sends a body is logged in one line (``uvicorn.error``, warning), nothing changed.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import secrets
import threading
import time

from doudizhu_env import records
from doudizhu_env.actions import action_table
from doudizhu_env.checks import is_int
from doudizhu_env.display import doubling_word, hole_ids, score_lines, suited_hand, trick_of
from doudizhu_env.rules import Rules

from ..session import MoveError
from .game import Ambiguous, WebGame, view_of

#: The largest request body accepted (a replay file included).
MAX_BODY = 2_000_000
#: Browser sessions kept (each with at most one game).
MAX_SESSIONS = 256
#: Of those, the most one client (an address) keeps: one client cannot take every place.
MAX_GAMES_PER_CLIENT = 32
#: A game used within this many seconds is never dropped to make room for another.
KEEP_ACTIVE = 600.0
#: Games one replay request may hold.
MAX_REPLAY_GAMES = 200
COOKIE = "ddz_session"
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
#: Headers of every answer: the page loads only its own files, and no other site may frame it.
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; "
                               "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}
#: Methods that change something: checked for a foreign ``Origin``.
STATE_CHANGING = ("POST", "PUT", "PATCH", "DELETE")
#: Where the server's one-line warnings go (uvicorn's own log, as its other warnings).
LOG = logging.getLogger("uvicorn.error")


class RequestError(Exception):
    """A request the server refuses: the HTTP status and a message for the page (``extra``: more
    fields of the answer, e.g. the ``options`` of ambiguous cards)."""

    def __init__(self, status: int, message: str, **extra):
        super().__init__(message)
        self.status, self.extra = status, extra


def error_response(status: int, message: str, **extra):
    """Every error answer: ``{"error": message, ...extra}`` as JSON with ``status``, with the
    :data:`SECURITY_HEADERS` (a 500 is sent from outside :class:`Guard`, which adds them to the rest)."""
    from starlette.responses import JSONResponse

    return JSONResponse({"error": message, **extra}, status, headers=SECURITY_HEADERS)


class Sessions:
    """Browser session token -> its game, with the time it was last used and the client (address)
    that made it.

    Beyond ``limit`` the least recently used game idle for ``keep`` seconds is dropped; when every
    game is more recent, a new session is refused (503) rather than dropping a game in use. A
    client with ``per_client`` games already (a game put with no client counts for none) makes
    room among its own: its least recently used idle game is dropped, and while all of them are
    in use its new game is refused (429).
    """

    def __init__(self, limit: int = MAX_SESSIONS, keep: float = KEEP_ACTIVE, clock=time.monotonic,
                 per_client: int = MAX_GAMES_PER_CLIENT):
        self.limit, self.keep, self.clock, self.per_client = limit, keep, clock, per_client
        self.games: collections.OrderedDict[str, WebGame] = collections.OrderedDict()
        self.used: dict[str, float] = {}
        self.client: dict[str, str | None] = {}
        self.lock = threading.Lock()

    def game(self, token: str | None, game_id: str) -> WebGame:
        with self.lock:
            game = self.games.get(token) if token else None
            if token is None or game is None or not secrets.compare_digest(game.id, str(game_id)):
                raise RequestError(404, f"unknown game {str(game_id)[:40]!r}: start a new game "
                                   "(one game per browser session)")
            self._touch(token)
            return game

    def check_room(self, token: str, client: str | None = None) -> None:
        """:class:`RequestError` 429 when ``client`` has all its places in use, 503 when a game for
        ``token`` would need to drop a game in use."""
        with self.lock:
            self._make_room(token, client)

    def put(self, token: str, game: WebGame, client: str | None = None) -> None:
        with self.lock:
            self._make_room(token, client)
            self.games[token] = game
            self.client.setdefault(token, client)
            self._touch(token)

    def _touch(self, token: str) -> None:
        self.games.move_to_end(token)
        self.used[token] = self.clock()

    def _drop(self, token: str) -> None:
        del self.games[token], self.used[token]
        self.client.pop(token, None)

    def _make_room(self, token: str, client: str | None = None) -> None:
        """Drop idle games (least recently used first) until one more fits, the client's own first
        when it has all its places; called with the lock."""
        if token in self.games:
            return
        if client is not None:
            mine = [t for t in self.games if self.client.get(t) == client]  # least recently used first
            if len(mine) >= self.per_client:
                idle = [t for t in mine if self.clock() - self.used[t] >= self.keep]
                if not idle:
                    raise RequestError(429, f"too many games from one client: {len(mine)} games of this "
                                       f"address are in use, the most one client may keep is "
                                       f"{self.per_client}; finish one, or try again in a few minutes",
                                       limit=self.per_client)
                self._drop(idle[0])
        while len(self.games) >= self.limit:
            oldest = next(iter(self.games))
            if self.clock() - self.used[oldest] < self.keep:
                raise RequestError(503, f"the table is full: {len(self.games)} games in use; "
                                   "try again in a few minutes")
            self._drop(oldest)


# ----------------------------------------------------------------------------
# replays
# ----------------------------------------------------------------------------


def record_lines(text: str) -> list[tuple[int, str]]:
    """The non-blank lines of a records file with their numbers, refused (413) beyond
    :data:`MAX_REPLAY_GAMES` before any is read."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if len(lines) > MAX_REPLAY_GAMES:
        raise RequestError(413, f"{len(lines)} games in one file, more than {MAX_REPLAY_GAMES}; send fewer")
    if not lines:
        raise RequestError(400, "no game records in the file; expected JSON Lines written by --record")
    return lines


def replay_json(text: str) -> list[dict]:
    """Every game of a records file's text, step by step with every hand (records are checked and
    replayed through the engine; :class:`RequestError` 400 names the first bad line)."""
    games = []
    for number, line in record_lines(text):
        try:
            rec = json.loads(line)
            records.check_record(rec)
            games.append(_replay_game(rec))
        except (ValueError, RecursionError) as err:  # RecordError and JSON errors are ValueErrors
            raise RequestError(400, f"line {number}: {str(err)[:200]}") from None
    return games


def _replay_game(rec: dict) -> dict:
    steps = []
    players = [str(p)[:40] for p in rec.get("players") or ["seat 0", "seat 1", "seat 2"]]
    names = action_table(records.rules_of(rec)).names
    final = None
    for state, seat, name in records.replay_states(rec):
        steps.append(_replay_step(state, seat, name, names))
        final = state
    final = records.check_result(rec, final if final is not None else records.start_state(rec))
    steps[-1] = _replay_step(final, -1, "", names)
    labels = [f"seat {s} ({p})" for s, p in enumerate(players)]
    return {"players": players, "steps": steps, "result": {
        "scores": [int(x) for x in final.scores[0]], "lines": score_lines(final, 0, labels)}}


def _replay_step(state, seat: int, name: str, names) -> dict:
    """One step of a replay, compact: cards are ids (the page knows a card from its id)."""
    landlord = int(state.landlord[0])
    on = int(state.to_beat[0])
    return {"next": {"seat": seat, "move": name} if seat >= 0 else None, "phase": int(state.phase[0]),
            "landlord": landlord, "base": int(state.base[0]), "multiplier": int(state.multiplier[0]),
            "bids": [int(b) for b in state.bids[0]], "doubling": [doubling_word(state, s) for s in range(3)],
            "hands": [suited_hand(state, 0, s) for s in range(3)],
            "hole": [int(c) for c in hole_ids(state)] if landlord >= 0 else [],
            "trick": trick_of(state)["moves"], "to_beat": names[on] if on >= 0 else None}


# ----------------------------------------------------------------------------
# the table
# ----------------------------------------------------------------------------


class TableServer:
    """What the routes share: the rules, the opponents offered, the shared models, the sessions."""

    def __init__(self, rules: Rules, opponents: list[str], agent_factory=None, models=None):
        from agents.registry import SharedModels, make_agent

        self.rules, self.opponents = rules, list(dict.fromkeys(opponents))
        self.models = models if models is not None else SharedModels()
        self.make_agent = agent_factory or (lambda spec, seed: make_agent(spec, rules=rules, seed=seed,
                                                                         models=self.models))
        self.sessions = Sessions()

    def new_game(self, token: str, body: dict, client: str | None = None) -> dict:
        """A new game for the session ``token`` of ``client`` (an address; checked, with its room,
        before any agent is built); its view."""
        specs, seat, seed = self._game_request(body)
        self.sessions.check_room(token, client)
        agents, names = {}, ["you"] * 3
        for k, spec in enumerate(specs, 1):
            other = (seat + k) % 3
            agents[other], names[other] = self.make_agent(spec, [seed, other]), spec
        game = WebGame(self.rules, seat, agents, names, seed, secrets.token_urlsafe(12))
        self.sessions.put(token, game, client)
        with game.lock:
            return view_of(game)

    def _game_request(self, body: dict) -> tuple[list[str], int, int]:
        specs = body.get("opponents", self.opponents[:1] * 2)
        if (not isinstance(specs, list) or len(specs) != 2
                or not all(isinstance(s, str) and s in self.opponents for s in specs)):
            raise RequestError(400, f"opponents must be two of {self.opponents}, got {str(specs)[:80]}")
        seat, seed = body.get("seat", 0), body.get("seed")
        if not is_int(seat) or not 0 <= seat <= 2:
            raise RequestError(400, f"seat must be 0, 1 or 2, got {str(seat)[:20]}")
        if seed is None:
            seed = int.from_bytes(os.urandom(16), "big")  # 128 bits: a hand does not give the deal away
        elif not is_int(seed) or not 0 <= seed < 2**63:
            raise RequestError(400, f"seed must be an int in [0, 2**63), got {str(seed)[:30]}")
        return specs, int(seat), int(seed)

    @staticmethod
    def view(game: WebGame) -> dict:
        with game.lock:
            return view_of(game)

    @staticmethod
    def hint(game: WebGame) -> dict:
        with game.lock:
            return game.hint()

    @staticmethod
    def move(game: WebGame, body: dict) -> dict:
        """The person's move (then the agents'), and the view after it."""
        with game.lock:
            try:
                if "action" in body:
                    game.play(body["action"])
                elif "cards" in body:
                    game.play_cards(body["cards"])
                else:
                    raise MoveError('a move is {"action": ID} or {"cards": [CARD IDS]}')
            except Ambiguous as err:
                options = [game.action_json(a) for a in err.options]
                raise RequestError(409, str(err), options=options) from None
            except MoveError as err:
                raise RequestError(400, str(err)) from None
            return view_of(game)


# ----------------------------------------------------------------------------
# the application
# ----------------------------------------------------------------------------


def create_app(rules: Rules | None = None, opponents: list[str] | None = None, agent_factory=None,
               hosts: list[str] | None = None, models=None):
    """The Starlette application (see the module docstring).

    ``opponents``: the agent specs the page may choose from (default ``pretrained``, ``rule`` and
    ``random`` for the standard rules, else ``rule`` and ``random``); ``hosts``: the ``Host``
    headers answered (default the loopback names; a page of another site that rebinds its name
    to this machine is refused), ``["*"]`` for any; ``models``: the
    :class:`agents.registry.SharedModels` the games load their models through (default a new one).
    """
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.middleware.gzip import GZipMiddleware
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    rules = rules or Rules.preset("standard")
    opponents = opponents or (["pretrained", "rule", "random"] if rules == Rules.preset("standard")
                              else ["rule", "random"])
    server = TableServer(rules, opponents, agent_factory, models)
    routes = [*_routes(server, rules), Mount("/static", StaticFiles(directory=STATIC), name="static")]

    async def http_error(request, exc: HTTPException):
        return error_response(exc.status_code, _http_message(request, exc.status_code))

    async def server_error(request, exc: Exception):
        return error_response(500, f"the server failed on this request ({type(exc).__name__}); "
                              "nothing was changed by it if it was a move; reload the game")

    handlers = {HTTPException: http_error, Exception: server_error}
    app = Starlette(routes=routes, exception_handlers=handlers)  # type: ignore[arg-type]
    app.add_middleware(GZipMiddleware, minimum_size=4096)  # a replay's answer: about 10x smaller
    app.add_middleware(Guard, hosts=hosts or ["127.0.0.1", "localhost", "[::1]"])
    app.state.table = server
    return app


def _http_message(request, status: int) -> str:
    if status == 404:
        return f"no such page or API route: {request.url.path[:80]}"
    if status == 405:
        return f"{request.method} is not allowed on {request.url.path[:80]}"
    return f"HTTP {status}"


def _routes(server: TableServer, rules: Rules) -> list:
    """The page and the API routes; each API handler answers JSON through :func:`_api`."""
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import FileResponse
    from starlette.routing import Route

    def game_of(request) -> WebGame:
        return server.sessions.game(request.cookies.get(COOKIE), request.path_params["gid"])

    async def config(request):
        return {"opponents": server.opponents, "rules": "with bidding" if rules.bidding else "fixed landlord"}

    async def new_game(request):
        client = request.client.host if request.client else None
        return await run_in_threadpool(server.new_game, request.state.token, await read_json(request), client)

    async def get_game(request):
        return await run_in_threadpool(server.view, game_of(request))

    async def move(request):
        game = game_of(request)
        return await run_in_threadpool(server.move, game, await read_json(request))

    async def hint(request):
        return await run_in_threadpool(server.hint, game_of(request))

    async def replays(request):
        text = (await read_body(request)).decode("utf-8", errors="replace")
        record_lines(text)  # the limits, before any work
        return {"games": await run_in_threadpool(replay_json, text)}

    async def index(request):
        return FileResponse(os.path.join(STATIC, "index.html"))

    return [Route("/", index), Route("/api/config", _api(config)),
            Route("/api/games", _api(new_game), methods=["POST"]),
            Route("/api/games/{gid}", _api(get_game)),
            Route("/api/games/{gid}/move", _api(move), methods=["POST"]),
            Route("/api/games/{gid}/hint", _api(hint)),
            Route("/api/replays", _api(replays), methods=["POST"])]


def _api(handler):
    """An API endpoint: ``handler``'s payload as JSON, a :class:`RequestError` as its error; the
    session cookie set on a first visit."""
    from starlette.responses import JSONResponse

    async def endpoint(request):
        request.state.token = request.cookies.get(COOKIE) or secrets.token_urlsafe(18)
        try:
            response = JSONResponse(await handler(request))
        except RequestError as err:
            response = error_response(err.status, str(err), **err.extra)
        if COOKIE not in request.cookies:
            response.set_cookie(COOKIE, request.state.token, httponly=True, samesite="strict")
        return response
    return endpoint


class Guard:
    """ASGI middleware: refuses a foreign ``Host`` (400) and, on state-changing requests, a foreign
    ``Origin`` or a cross-site fetch (403), as JSON; adds :data:`SECURITY_HEADERS` to every answer."""

    def __init__(self, app, hosts: list[str]):
        self.app, self.hosts = app, list(hosts)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        refused = self.refusal(scope)
        if refused is not None:
            return await error_response(*refused)(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                have = {k.lower() for k, _ in headers}
                message["headers"] = headers + [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()
                                                if k.encode() not in have]
            await send(message)
        return await self.app(scope, receive, send_with_headers)

    def refusal(self, scope) -> tuple[int, str] | None:
        """``(status, message)`` of a request to refuse, else None."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host_header = headers.get("host", "")
        host = (host_header.rsplit("]", 1)[0] + "]" if host_header.startswith("[")
                else host_header.split(":")[0])
        if "*" not in self.hosts and host not in self.hosts:
            return 400, f"this server answers requests for {', '.join(self.hosts)}, not {host_header[:60]!r}"
        if scope["method"] not in STATE_CHANGING:
            return None
        origin = headers.get("origin")
        if origin is not None and origin != f"http://{host_header}":
            return 403, f"a request from another site ({origin[:60]}) may not change a game; use the table"
        if headers.get("sec-fetch-site") in ("cross-site", "same-site"):
            return 403, "a request from another site may not change a game; use the table"
        return None


async def read_body(request, limit: int = MAX_BODY) -> bytes:
    """The request body, refused (413) beyond ``limit`` bytes before it is all read. A client that
    disconnects before it is all sent is one warning line in the log (and a 400 nobody receives)."""
    from starlette.requests import ClientDisconnect

    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise RequestError(413, f"the request body is over {limit:,} bytes; send less")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise RequestError(413, f"the request body is over {limit:,} bytes; send less")
    except ClientDisconnect:
        who = request.client.host if request.client else "a client"
        of = f" of {int(declared):,}" if declared else ""
        LOG.warning("%s disconnected during %s %s after %s%s body bytes; nothing changed", who,
                    request.method, request.url.path[:80], f"{len(body):,}", of)
        raise RequestError(400, "the client disconnected before the body was all sent") from None
    return bytes(body)


def http_protocol():
    """uvicorn's h11 HTTP protocol, answering a request too malformed to reach the application
    (a bad ``Content-Length``, header or request line) as the application answers its errors: a
    400 ``{"error": ...}`` with the :data:`SECURITY_HEADERS`, then the connection closed
    (``uvicorn.run(app, http=http_protocol())``). Where uvicorn no longer calls
    ``send_400_response`` or it fails, uvicorn's own short plain-text 400 answers instead."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class JSONErrorsH11Protocol(H11Protocol):
        def send_400_response(self, msg: str) -> None:
            body = json.dumps({"error": "malformed HTTP request: expected HTTP/1.1 with well-formed headers "
                               "and a numeric Content-Length"}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"connection", b"close"),
                       *((k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items())]
            try:
                head = self.conn.send(h11.Response(status_code=400, headers=headers, reason=b"Bad Request"))
            except h11.LocalProtocolError:  # h11 cannot answer in this state: uvicorn's plain answer
                return super().send_400_response(msg)
            self.transport.write((head or b"") + body)
            self.transport.close()

    return JSONErrorsH11Protocol


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
