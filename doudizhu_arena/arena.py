"""The arena: play many deals between agent line-ups and measure WP and ADP with confidence intervals.

A *line-up* is three agent specs, one per position. With bidding on, the
positions are the seats 0, 1, 2 (roles come out of the bidding); in
fixed-landlord mode (rules without bidding, e.g. the ``douzero`` preset) they
are the roles landlord, landlord_down (plays after the landlord) and
landlord_up (plays before it), and each deal says which seat is the landlord.

Duplicate format (``duplicate="rotate"``, the default): every deal is played
once per cyclic rotation of the line-up, so every agent sits in every position
on the same cards and the luck of the deal cancels. ``"swap"`` (line-ups of
exactly two distinct agents) plays the line-up and its mirror, where the two
agents trade places: ``rule, random, random`` and ``random, rule, rule``, as in
DouZero's evaluations. ``"none"`` plays every deal once.

Statistics (see ``docs/evaluation.md``): WP is the share of an agent's games
won, ADP the average points (``docs/rules.md``, "Scoring") per game. An agent's figure of
one deal is the mean over the seats it held across the deal's rotations; the
95% interval is ``mean +- 1.96 * sd / sqrt(n)`` over those deal-level means
(the normal approximation on paired deal averages). Per-role figures use the
same method over the deals where the agent held that role.

Determinism: deals are split into fixed chunks of ``chunk_size``; chunk ``k``
draws its cards, its redeal keys and its agents' seeds from ``(seed, k)``
alone, so the results depend on the seed and the chunk size, never on the
number of worker processes.
"""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence, Sized
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.base import Agent
from doudizhu_env import engine
from doudizhu_env.checks import check_seed, is_int, short
from doudizhu_env.driver import play_out
from doudizhu_env.engine import ROLE_NAMES, Deal, role_of
from doudizhu_env.files import atomic_write, check_input, check_output
from doudizhu_env.records import records_from_state, save_records
from doudizhu_env.rules import Rules, resolve_rules

#: The keys of a report's figures per agent, in their order in :func:`format_report`.
REPORT_ROLES = ("all", ROLE_NAMES[0], "farmer", *ROLE_NAMES[1:])
DUPLICATE_MODES = ("rotate", "swap", "none")
#: The two modes every judge plays: with bidding (the seat decides the role), and with a fixed
#: landlord (no bidding; each deal names its landlord; ``--fixed-landlord`` on the command line).
MODES = ("bidding", "fixed_landlord")


def mode_rules(mode: str, rules: Rules | str = "standard") -> Rules:
    """``rules`` (a preset name or :class:`Rules`) in ``mode``: as they are with bidding, without it
    for ``fixed_landlord``."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {list(MODES)}")
    return dataclasses.replace(resolve_rules(rules), bidding=mode == "bidding")
Z95 = 1.959963984540054


# ----------------------------------------------------------------------------
# deals
# ----------------------------------------------------------------------------


def make_deals(seed: int, num_deals: int, rules: Rules | str | None = None,
               chunk_size: int = 200) -> list[Deal]:
    """``num_deals`` shuffled deals, chunk ``k`` drawn from ``(seed, k)`` (landlord drawn when no bidding)."""
    rules = resolve_rules(rules)
    deals: list[Deal] = []
    for k, start in enumerate(range(0, num_deals, chunk_size)):
        deals += chunk_deals(seed, k, min(chunk_size, num_deals - start), rules)
    return deals


def chunk_deals(seed: int, chunk: int, num_deals: int, rules: Rules) -> list[Deal]:
    """The deals of chunk ``chunk`` of :func:`make_deals`, drawn from ``(seed, chunk)`` alone."""
    return engine.deals_of(engine.reset(np.random.default_rng([seed, chunk, 1]), num_deals, rules))


def save_deals(deals: Sequence[Deal], path: str) -> None:
    """Write deals as a JSON list of ``{hands, hole, first_bidder, landlord}``."""
    atomic_write(path, json.dumps([dataclasses.asdict(d) for d in deals]))


#: The largest deals file read (a deal takes about 130 bytes of JSON; room for indented files).
MAX_DEALS_FILE_BYTES = 2**30
#: The most deals a deals file may hold: parsed, a deal takes about 700 bytes of memory, and each is
#: checked card by card (about 150 µs), so a million deals take some 0.7 GB and a few minutes.
MAX_FILE_DEALS = 1_000_000
#: The JSON values a deal written by :func:`save_deals` holds, counted as :func:`_json_values` counts
#: them (its object, its list of hands, and the commas of its fields, its hands and the list).
VALUES_PER_DEAL = 8


class TooManyDeals(ValueError):
    """A deals file of more deals than :data:`MAX_FILE_DEALS` (refused before it is parsed)."""


def _json_values(path: str, most: int) -> int:
    """An upper bound on the values in the JSON file ``path`` (its commas, brackets and braces: each
    value but the first of a container follows a comma), counted by reading the bytes without parsing;
    the count stops once it passes ``most``."""
    count = 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(2**23), b""):
            count += chunk.count(b",") + chunk.count(b"[") + chunk.count(b"{")
            if count > most:
                break
    return count


def load_deals(path: str) -> list[Deal]:
    """Read deals written by :func:`save_deals`, each checked (17 + 17 + 17 + 3 cards of one deck,
    seats 0..2): ``ValueError`` names the first bad one.

    Memory is bounded by what is parsed, not only by the file's size: a file of more than
    :data:`MAX_FILE_DEALS` deals (or more JSON values than they would hold) is refused in one line
    before it is parsed."""
    check_input(path, "deals file", MAX_DEALS_FILE_BYTES)
    most = VALUES_PER_DEAL * MAX_FILE_DEALS + 2
    if _json_values(path, most) > most:
        raise TooManyDeals(f"it holds more JSON values than {MAX_FILE_DEALS:,} deals would (counted before "
                         f"parsing); expected at most {MAX_FILE_DEALS:,} deals: split it, or let the judge "
                         "shuffle the deals from a seed")
    try:
        with open(path) as f:
            data = json.load(f)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply; expected a list of deals") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"not UTF-8 text ({err.reason})") from None
    if not isinstance(data, list):
        raise ValueError(f"expected a JSON list of deals, got {type(data).__name__}")
    if len(data) > MAX_FILE_DEALS:
        raise TooManyDeals(f"it holds {len(data):,} deals; expected at most {MAX_FILE_DEALS:,}")
    deals = []
    for i, d in enumerate(data):
        try:
            deal = Deal.coerce(d)
            engine.deal_from_cards(deal)
        except (ValueError, TypeError) as err:
            raise ValueError(f"deal {i}: {err}") from None
        deals.append(deal)
    return deals


# ----------------------------------------------------------------------------
# seatings
# ----------------------------------------------------------------------------


def seatings(lineup: Sequence[str], duplicate: str = "rotate") -> list[tuple[str, ...]]:
    """The line-ups every deal is played with (position -> agent spec)."""
    lineup = tuple(lineup)
    if len(lineup) != 3:
        raise ValueError(f"a line-up has 3 agents, got {len(lineup)}")
    if duplicate == "none":
        return [lineup]
    if duplicate == "rotate":
        return [tuple(lineup[(p - r) % 3] for p in range(3)) for r in range(3)]
    if duplicate == "swap":
        names = sorted(set(lineup))
        if len(names) != 2:
            raise ValueError(f"duplicate='swap' needs exactly two distinct agents, got {names}")
        other = {names[0]: names[1], names[1]: names[0]}
        return [lineup, tuple(other[a] for a in lineup)]
    raise ValueError(f"unknown duplicate mode {duplicate!r}; expected one of {DUPLICATE_MODES}")


# ----------------------------------------------------------------------------
# playing a chunk
# ----------------------------------------------------------------------------


@dataclass
class ChunkResult:
    """Per game of a chunk: deal index, agent at each seat, role of each seat, scores, flags."""

    deal: np.ndarray  # (G,) deal index (global)
    agents: np.ndarray  # (G, 3) index into the sorted agent names, per seat
    roles: np.ndarray  # (G, 3) role of each seat (0 landlord, 1 down, 2 up; -1 truncated)
    scores: np.ndarray  # (G, 3) final points per seat
    truncated: np.ndarray  # (G,) bool
    bids: np.ndarray  # (G, 3) each seat's bid in the hand played (-1 no turn or no bidding, 0 pass)
    decisions: int = 0
    records: list | None = None  # game records (doudizhu_env.records) when the config asks for them


@dataclass
class ArenaConfig:
    """Everything a worker needs to play a chunk (picklable)."""

    lineup: tuple[str, ...]  # three specs
    rules: Rules
    duplicate: str = "rotate"
    seed: int = 0
    chunk_size: int = 200
    agent_factory: Callable | None = None
    names: list[str] = field(default_factory=list)
    record: bool = False  # keep a game record of every game (doudizhu_env.records)


def _seat_players(cfg: ArenaConfig, deals: Sequence[Deal]) -> tuple[list[Deal], np.ndarray]:
    """Expand deals by seatings: the games' deals and ``(G, 3)`` agent index per seat."""
    index = {n: i for i, n in enumerate(cfg.names)}
    rows, games = [], []
    if not cfg.rules.bidding:  # fixed landlord: a deal saved without one uses its first bidder
        deals = [d if d.landlord is not None else dataclasses.replace(d, landlord=d.first_bidder)
                 for d in deals]
    for seating in seatings(cfg.lineup, cfg.duplicate):
        for d in deals:
            games.append(d)
            rows.append(_positions_to_seats(seating, d, cfg.rules, index))
    return games, np.array(rows, dtype=np.int64)


def _positions_to_seats(seating, deal: Deal, rules: Rules, index: dict) -> list[int]:
    """Agent index per seat: positions are seats with bidding, roles without."""
    if rules.bidding:
        return [index[a] for a in seating]
    return [index[seating[int(role_of(s, deal.landlord))]] for s in range(3)]


def play_chunk(cfg: ArenaConfig, chunk: int, deals: Sequence[Deal], first_index: int) -> ChunkResult:
    """Play ``deals`` (global indices from ``first_index``) under every seating of ``cfg``."""
    games, seat_player = _seat_players(cfg, deals)
    state = engine.reset(np.random.default_rng([cfg.seed, chunk, 2]), len(games), cfg.rules, deals=games)
    keys = np.random.default_rng([cfg.seed, chunk, 3]).integers(0, 2**63 - 1, len(deals), dtype=np.int64)
    state = dataclasses.replace(state, key=np.tile(keys.astype(np.uint64), len(games) // len(deals)))
    factory = cfg.agent_factory or default_factory
    agents = [factory(n, cfg.rules, [cfg.seed, chunk, 4, i]) for i, n in enumerate(cfg.names)]
    for a in agents:
        a.reset()
    state, decisions = play_out(state, seat_player, agents)
    idx = np.arange(len(games)) % len(deals) + first_index
    role = role_of(np.arange(3)[None, :], state.landlord[:, None])
    scores = state.scores.astype(np.int64)
    recs = _chunk_records(cfg, chunk, state, seat_player, idx, len(deals)) if cfg.record else None
    return ChunkResult(idx, seat_player, role, scores, state.truncated.copy(), state.bids.astype(np.int64),
                       decisions, recs)


def lead_values(result: ChunkResult, cfg: ArenaConfig) -> tuple[np.ndarray, np.ndarray]:
    """Per deal of a played chunk (in order), the mean score and the share of games won of the agent
    at position 0 of ``cfg.lineup``, counting only the seats it holds as position 0 (so an agent
    that also fills other positions is still measured in that one place).

    Position 0 is seat ``r`` (with bidding) or role ``r`` (fixed landlord) in rotation ``r``, and
    position 0 with ``duplicate="none"``; games are ordered by seating, then deal.
    """
    if cfg.duplicate == "swap":
        raise ValueError("lead_values needs duplicate 'rotate' or 'none'; 'swap' moves agents, not seats")
    games = len(result.deal)
    position = np.arange(games) // (games // 3) if cfg.duplicate == "rotate" else np.zeros(games, np.int64)
    seat = position if cfg.rules.bidding else np.argmax(result.roles == position[:, None], axis=1)
    score = result.scores[np.arange(games), seat].astype(np.float64)
    local = result.deal - int(result.deal.min())
    count = np.bincount(local)
    return np.bincount(local, weights=score) / count, np.bincount(local, weights=score > 0) / count


def _chunk_records(cfg: ArenaConfig, chunk: int, state: engine.State, seat_player: np.ndarray,
                   deal_index: np.ndarray, num_deals: int) -> list[dict]:
    """The game records of a played chunk: players per seat, and where each game came from."""
    players = [[cfg.names[a] for a in row] for row in seat_player]
    meta = [{"source": "arena", "deal": int(deal_index[g]), "seating": g // num_deals, "seed": cfg.seed,
             "chunk": chunk} for g in range(state.num_games)]
    return records_from_state(state, players=players, meta=meta)


def default_factory(spec: str, rules: Rules, seed) -> Agent:
    """Build an agent from its spec (see :func:`agents.registry.make_agent`)."""
    from agents.registry import make_agent

    return make_agent(spec, rules=rules, seed=seed)


# ----------------------------------------------------------------------------
# running: chunks, workers, progress
# ----------------------------------------------------------------------------


def run_arena(
    lineup: Sequence[str],
    num_deals: int = 1000,
    rules: Rules | str | None = None,
    *,
    duplicate: str = "rotate",
    seed: int = 0,
    deals: Sequence[Deal] | None = None,
    workers: int = 1,
    chunk_size: int = 200,
    progress: bool = False,
    agent_factory: Callable | None = None,
    record: str | None = None,
    pool: Callable | None = None,
) -> dict:
    """Play ``num_deals`` deals (or the given ``deals``) and return the report (see :func:`summarize`).

    ``record``: a path to append every game to as JSON Lines game records (``docs/records.md``),
    checked before any game is played (:func:`doudizhu_env.files.check_output`).
    ``pool``: where the chunks are played, a function ``pool(play, jobs)`` yielding ``play(job)``
    for each job in order (e.g. :func:`doudizhu_arena.ray_arena.ray_pool`, over a Ray cluster); by default
    this process (``workers`` 1) or a local pool of ``workers`` processes. The report does not depend on it.
    """
    rules = resolve_rules(rules)
    if record is not None:
        check_output(record, "record")
    if deals is None:
        deals = make_deals(seed, num_deals, rules, chunk_size)
    deals = list(deals)
    cfg = ArenaConfig(tuple(lineup), rules, duplicate, seed, chunk_size, agent_factory, sorted(set(lineup)),
                      record=record is not None)
    seatings(cfg.lineup, duplicate)  # validate early
    jobs = chunk_jobs(cfg, deals)
    results = _run_jobs(jobs, workers, progress, len(deals), pool)
    if record is not None:
        save_records((rec for r in results for rec in r.records or ()), record, append=True)
    report = summarize(results, cfg.names)
    report["config"] = {"lineup": list(lineup), "rules": rules.to_dict(), "duplicate": duplicate,
                        "seed": seed,
                        "deals": len(deals), "games": int(sum(len(r.deal) for r in results)),
                        "chunk_size": chunk_size}
    return report


def chunk_jobs(cfg: ArenaConfig, deals: Sequence[Deal]) -> list[tuple]:
    """The jobs of playing ``deals`` under ``cfg``: ``(cfg, chunk, deals of the chunk, first index)``."""
    size = cfg.chunk_size
    return [(cfg, k, deals[s : s + size], s) for k, s in enumerate(range(0, len(deals), size))]


def _job(args) -> ChunkResult:
    return play_chunk(*args)


def one_thread() -> None:
    """Hold torch (imported now or later) to one thread in this process.

    Arena work is many small forward passes, one per decision step: torch's
    intra-op threads only add contention there, worst of all with several
    worker processes on few cores. Every worker calls this when it starts.
    """
    os.environ["OMP_NUM_THREADS"] = "1"  # read by a torch imported after this
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _worker_start() -> None:
    """A worker process: one torch thread, and Ctrl-C left to the main process (which stops the pool
    and says so in one line) instead of a traceback from every worker."""
    one_thread()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def play_chunks(jobs: Iterable, workers: int = 1,
                pool: Callable | None = None) -> Generator[ChunkResult, None, None]:
    """The results of jobs like :func:`chunk_jobs`' (a list, or any iterable), in their order, as each
    is played: by ``pool`` (see :func:`run_arena`), else in this process (``workers`` 1) or a local
    pool of ``workers`` processes (stopped when the iterator is closed)."""
    size = len(jobs) if isinstance(jobs, Sized) else workers
    if pool is None and workers > 1 and size > 1:
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
        procs = None
        try:
            with _ctrl_c_deferred():  # a Ctrl-C while the pool starts comes once it can be stopped
                procs = ctx.Pool(min(workers, size), initializer=_worker_start)  # no idle processes
            yield from procs.imap(_job, jobs)
        finally:
            if procs is not None:
                procs.terminate()
        return
    yield from (pool or map)(_job, jobs)


@contextmanager
def _ctrl_c_deferred() -> Iterator[None]:
    """Hold back Ctrl-C (SIGINT) for the block and deliver it as the block ends.

    For starting a ``multiprocessing`` pool: a ``KeyboardInterrupt`` inside ``Pool()`` leaves the
    pool's thread that replaces dead workers running with nothing to stop it, and at exit it forks
    workers that outlive the command (holding its output pipes open). Outside the main thread, where
    no signal handler runs, the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield  # None: a handler not set from Python, which could not be put back
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            signal.raise_signal(signal.SIGINT)  # to the handler that was there: Ctrl-C, now


def _run_jobs(jobs: list, workers: int, progress: bool, total: int,
              pool: Callable | None = None) -> list[ChunkResult]:
    """Play the chunks in order, with a progress bar over deals if asked."""
    bar = progress_bar(total, progress)
    results = []
    with closing(play_chunks(jobs, workers, pool)) as played:  # a Ctrl-C here stops the pool now
        for res, job in zip(played, jobs, strict=True):
            results.append(res)
            bar.update(len(job[2]))
    bar.close()
    return results


class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def progress_bar(total: int, enabled: bool, desc: str = "arena"):
    """A tqdm bar over deals (with the time left), or a no-op when disabled or tqdm is missing."""
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, unit="deal", desc=desc)


# ----------------------------------------------------------------------------
# statistics
# ----------------------------------------------------------------------------


def mean_ci(values: np.ndarray) -> dict:
    """Mean and 95% normal-approximation interval of per-deal values, with their number ``n``. The mean
    of no values and the interval of one are NaN here (a float for code that computes with them);
    :func:`report_json` writes them as null, :func:`format_estimate` as words."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n == 0:
        return {"mean": math.nan, "ci": math.nan, "low": math.nan, "high": math.nan, "n": 0}
    mean = float(values.mean())
    half = float(Z95 * values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return {"mean": mean, "ci": half, "low": mean - half, "high": mean + half, "n": n}


#: The figures that have no value for too few samples, by the count beside them in a report's dict:
#: count key -> ((figures, the largest count for which they have none), ...). ``n`` is
#: :func:`mean_ci`'s count, ``seats`` an agent's seats in the bidding figures, ``replicates`` the
#: bootstrap replicates of a tournament's rating.
UNDEFINED_BY_COUNT = {"n": ((("mean",), 0), (("ci", "low", "high"), 1)),
                      "seats": ((("landlord_share",), 0),),
                      "replicates": ((("low", "high"), 0),)}


def _nulls(value):
    """``value`` with the NaN figures that :data:`UNDEFINED_BY_COUNT` allows as null (``None``); any
    other value as it is."""
    if isinstance(value, dict):
        out = {k: _nulls(v) for k, v in value.items()}
        for count_key, rules in UNDEFINED_BY_COUNT.items():
            count = value.get(count_key)
            if not is_int(count):
                continue
            for figures, most in rules:
                for key in figures:
                    x = out.get(key)
                    if count <= most and isinstance(x, float) and math.isnan(x):
                        out[key] = None
        return out
    if isinstance(value, list | tuple):
        return [_nulls(v) for v in value]
    return value


def report_json(report, indent: int | None = 1) -> str:
    """A judge's report (or result, or cache entry) as strict JSON: every judge writes its JSON files
    through this one function.

    A figure without a value (the mean of no games in a role, the interval of one deal, the range of no
    bootstrap replicates) is ``null``, with its count beside it (``n``, ``seats``, ``replicates``;
    :data:`UNDEFINED_BY_COUNT`). Any other non-finite number is a bug: it raises ``ValueError``
    (``json.dumps(..., allow_nan=False)``) rather than writing ``NaN`` or ``Infinity``, which strict JSON
    readers refuse.
    """
    return json.dumps(_nulls(report), indent=indent, allow_nan=False)


def format_estimate(e: dict, digits: int = 3, sign: str = "+", pm: str = "±") -> str:
    """One :func:`mean_ci` figure for people: ``+0.123 ± 0.045``; ``+0.500 (1 deal: no interval)``;
    ``no games in this role`` where there is none (never ``nan``)."""
    n, mean, ci = e.get("n", 0), e.get("mean"), e.get("ci")
    if not n or mean is None or not math.isfinite(mean):
        return "no games in this role"
    text = f"{mean:{sign}.{digits}f}"
    if ci is None or not math.isfinite(ci):
        return f"{text} ({n} deal{'s' if n != 1 else ''}: no interval)"
    return f"{text} {pm} {ci:.{digits}f}"


def check_count(name: str, value, low: int = 1, high: int | None = None, why: str = "") -> int:
    """``value`` if it is an integer (not a bool) in ``low..high``, else a one-line ``TypeError`` or
    ``ValueError`` naming ``name`` (``why``: the reason for the lower bound, said with it)."""
    span = f"at least {low:,}" if high is None else f"between {low:,} and {high:,}"
    if not is_int(value):
        raise TypeError(f"{name} must be an integer {span}{why}, got {short(value)}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {span}{why}, got {short(value)}")
    return int(value)


def check_judge_args(num_deals, seed, workers, chunk_size, max_deals: int) -> None:
    """The arguments shared by the judges that report intervals over deals
    (:func:`doudizhu_arena.evaluation.paired_with_reference`,
    :func:`doudizhu_arena.tournament.landlord_and_farmers`): ``num_deals`` 2..``max_deals`` (an interval
    needs two deals), a seed, ``workers`` and ``chunk_size`` of at least 1, all integers and none a bool;
    a one-line ``TypeError``/``ValueError`` naming the first that is not."""
    check_count("num_deals", num_deals, 2, max_deals, " (a 95% interval over deals needs two deals or more)")
    check_seed(seed)
    check_count("workers", workers)
    check_count("chunk_size", chunk_size)


def deal_means(deal: np.ndarray, value: np.ndarray, mask: np.ndarray, num_deals: int) -> np.ndarray:
    """Per deal, the mean of ``value`` over the entries of ``mask`` (deals without any dropped)."""
    total = np.bincount(deal[mask], weights=value[mask].astype(np.float64), minlength=num_deals)
    count = np.bincount(deal[mask], minlength=num_deals)
    return total[count > 0] / count[count > 0]


def summarize(results: list[ChunkResult], names: list[str]) -> dict:
    """WP and ADP per agent, overall and per role, with 95% CIs over deal-level means."""
    deal = np.concatenate([r.deal for r in results])
    agents = np.concatenate([r.agents for r in results])
    roles = np.concatenate([r.roles for r in results])
    scores = np.concatenate([r.scores for r in results])
    num_deals = int(deal.max()) + 1 if len(deal) else 0
    seat_deal = np.repeat(deal, 3)
    a, ro, sc = agents.ravel(), roles.ravel(), scores.ravel().astype(np.float64)
    bids = np.concatenate([r.bids for r in results]).ravel()
    win = (sc > 0).astype(np.float64)
    out: dict[str, Any] = {"agents": {},
                           "truncated": int(np.concatenate([r.truncated for r in results]).sum()),
                           "decisions": int(sum(r.decisions for r in results))}
    for k, name in enumerate(names):
        entry = {}
        for role, mask in [("all", a == k)] + [(ROLE_NAMES[j], (a == k) & (ro == j)) for j in range(3)]:
            entry[role] = {"games": int(mask.sum()),
                           "wp": mean_ci(deal_means(seat_deal, win, mask, num_deals)),
                           "adp": mean_ci(deal_means(seat_deal, sc, mask, num_deals))}
        farmer = (a == k) & (ro >= 1)
        entry["farmer"] = {"games": int(farmer.sum()),
                           "wp": mean_ci(deal_means(seat_deal, win, farmer, num_deals)),
                           "adp": mean_ci(deal_means(seat_deal, sc, farmer, num_deals))}
        entry["bidding"] = _bidding_figures(a == k, ro, bids)
        out["agents"][name] = entry
    return out


def _bidding_figures(mine: np.ndarray, roles: np.ndarray, bids: np.ndarray) -> dict:
    """How often an agent became landlord in its seats, and the share of each bid in its turns."""
    turns = mine & (bids >= 0)
    counts = np.bincount(bids[turns], minlength=4)[:4]
    share = float((roles[mine] == 0).mean()) if mine.any() else math.nan
    return {"seats": int(mine.sum()), "landlord_share": share, "turns": int(turns.sum()),
            "bid_shares": (counts / max(int(turns.sum()), 1)).tolist()}


def format_report(report: dict, agents: Sequence[str] | None = None) -> str:
    """A readable table of a report: WP and ADP with 95% intervals, per agent (default: all) and role.

    With bidding, a line per agent says how often it became landlord and how it bid.
    """
    lines = [f"{'agent':<24} {'role':<14} {'games':>7}  {'WP':>16}  {'ADP':>18}"]
    names = list(report["agents"]) if agents is None else list(agents)
    for name in names:
        entry = report["agents"][name]
        for role in REPORT_ROLES:
            e = entry[role]
            if e["games"] == 0:
                continue
            wp, adp = format_estimate(e["wp"], sign="", pm="+-"), format_estimate(e["adp"], pm="+-")
            lines.append(f"{name:<24} {role:<14} {e['games']:>7}  {wp}  {adp}")
    for name in names:
        bidding = report["agents"][name].get("bidding", {})
        if bidding.get("turns"):
            shares = "  ".join(f"{label} {x:.0%}" for label, x in zip(("pass", "bid1", "bid2", "bid3"),
                                                                       bidding["bid_shares"], strict=True))
            lines.append(f"{name}: landlord in {bidding['landlord_share']:.1%} of its seats; "
                         f"its bids: {shares}")
    if report.get("truncated"):
        lines.append(f"truncated games (redeal bound): {report['truncated']}")
    return "\n".join(lines)
