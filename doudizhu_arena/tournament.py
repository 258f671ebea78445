"""Round-robin tournaments: every agent against every agent, in both modes, with ratings.

Examples::

    python -m doudizhu_arena.tournament --agents random rlcard rule pretrained --deals 2000 --workers 2 \\
        --json t.json --markdown t.md --heatmap t.png
    python -m doudizhu_arena.tournament --agents rule pretrained dmc:runs/x/checkpoint.pt \\
        --modes fixed_landlord

The table. A tournament over agents ``A1 .. AK`` plays one *cell* per ordered
pair (row ``a``, column ``b``), diagonal included, in each mode:

- ``fixed`` (no bidding; the deal names the landlord): ``a`` is the landlord,
  ``b`` plays both farmers; one game per deal. The cell is the landlord's WP
  and ADP, as in DouZero's Table 1 (rows landlords, columns farmers).
- ``bidding`` (the standard rules): ``a`` sits in one seat and ``b`` in the two
  others, over the three rotations of the seats (roles come from the bidding).
  The cell is ``a``'s WP and ADP over its seats.

Every cell of a mode is played on the same deals (seed and deal count are the
tournament's), so cells compare like with like and the ratings can be
bootstrapped over deals. WP and ADP have 95% intervals over per-deal values,
as in the arena (:mod:`doudizhu_arena.arena`).

Ratings (:func:`fit_ratings`). One number per agent and mode:

- ``adp``: least squares on the cells, ``cell(a, b) = mu + row_a - col_b``,
  and ``rating_a = (row_a + col_a) / 2``, centred to mean 0 over the field.
  ``rating_a - rating_b`` is then the points per game that ``a``'s side is
  predicted to make over a pair of games against ``b`` (``a`` as landlord, or
  alone, once; ``b`` in that place once), i.e. ``(cell(a, b) - cell(b, a)) / 2``.
- ``elo``: the same model on the win probability's log-odds, fitted by
  maximum likelihood (Bradley-Terry with a landlord strength and a farmer
  strength per agent), on the Elo scale (400 / ln 10 per unit of log-odds).

The 95% intervals are percentiles of a bootstrap over deals (every cell of a
replicate resamples the same deals). ``docs/tournament.md`` says what the
numbers mean and where they mislead.

Caching: each finished cell is written to ``--cache`` (one JSON file per cell,
named by a hash of everything its result depends on: the two specs and the
checkpoint files they name, mode, seed, deal count, chunk size). A tournament
that was interrupted continues where it stopped, and adding an agent plays only
its own cells. A cell's result does not depend on which other cells are played.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import numpy as np

from doudizhu_env.checks import check_seed, is_int, short
from doudizhu_env.files import (
    OutputPathError,
    atomic_write,
    check_folder,
    check_input,
    check_output,
    check_outputs,
    echo,
)

from .arena import (
    MODES,
    ArenaConfig,
    check_count,
    check_judge_args,
    chunk_jobs,
    format_estimate,
    lead_values,
    make_deals,
    mean_ci,
    mode_rules,
    one_thread,
    play_chunks,
    progress_bar,
    report_json,
)
from .cluster import ClusterUnreachable
from .options import add_play_options, exit_error, prepare_backend
from .ray_arena import chunk_pool

#: Cache format; a cell file of another version is played again.
CACHE_VERSION = 1
#: The most deals per cell (every deal is made before the first game).
MAX_DEALS = 1_000_000
ELO_PER_LOGIT = 400.0 / math.log(10.0)
#: The most bootstrap replicates of the ratings' intervals (each refits every rating).
MAX_BOOTSTRAP = 100_000
#: The largest cell file read (a million deals' two values as JSON take about 40 MB).
MAX_CELL_BYTES = 64 * 2**20


@dataclass
class Cell:
    """One cell: ``agent`` (row) against ``opponent`` (column, the farmer pair / the two other seats).

    ``score`` and ``win`` are per deal: the row agent's mean points and share of games won over
    the deal's games (one in ``fixed`` mode, three rotations with ``bidding``).
    """

    mode: str
    agent: str
    opponent: str
    score: np.ndarray
    win: np.ndarray

    def figures(self) -> dict:
        """WP and ADP with 95% intervals (normal approximation over deals)."""
        return {"deals": len(self.score), "wp": mean_ci(self.win), "adp": mean_ci(self.score)}


# ----------------------------------------------------------------------------
# cells: playing and caching
# ----------------------------------------------------------------------------


def cell_config(mode: str, agent: str, opponent: str, seed: int, chunk_size: int,
                agent_factory: Callable | None = None) -> ArenaConfig:
    """The arena set-up of a cell: the line-up ``agent, opponent, opponent``."""
    lineup = (agent, opponent, opponent)
    duplicate = "none" if mode == "fixed_landlord" else "rotate"
    return ArenaConfig(lineup, mode_rules(mode), duplicate, seed, chunk_size, agent_factory,
                       sorted(set(lineup)))


def spec_fingerprint(spec: str) -> list:
    """What a spec's result depends on beyond its text: size and modification time of every file
    it names (a checkpoint, a DouZero folder's files, the shipped weights for ``pretrained``)."""
    from agents.registry import spec_files

    found = []
    for path in spec_files([spec]):
        st = os.stat(path)
        found.append([os.path.abspath(path), st.st_size, st.st_mtime_ns])
    return found


#: The largest points of one game in absolute value (scores are int32).
MAX_POINTS = 2**31


class InvalidCell(ValueError):
    """A cell file that does not hold a valid cell of its key (the message says why)."""


def cell_values(data, key: dict) -> tuple[np.ndarray, np.ndarray]:
    """The per-deal scores and win shares of a cell file's content, checked against the key the file
    is named for: the key it claims, one finite number per deal, points within int32, win shares in
    [0, 1] that a whole number of games gives. :class:`InvalidCell` says what is wrong."""
    if not isinstance(data, dict) or not {"key", "score", "win"} <= set(data):
        raise InvalidCell("not a cell (expected an object with key, score and win)")
    if data["key"] != json.loads(json.dumps(key)):
        raise InvalidCell("it claims another cell's key (another version, agent, seed or file)")
    games = 1 if key["mode"] == "fixed_landlord" else 3
    values = []
    for name, low, high, span in (("score", -MAX_POINTS, MAX_POINTS, "beyond ±2**31 points"),
                                  ("win", 0.0, 1.0, "outside [0, 1]")):
        column = data[name]
        if not isinstance(column, list) or len(column) != key["deals"]:
            raise InvalidCell(f"{name} is not a list of {key['deals']} values, one per deal")
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in column):
            raise InvalidCell(f"{name} holds a value that is not a number")
        array = np.asarray(column, dtype=np.float64)
        if not (np.isfinite(array).all() and (array >= low).all() and (array <= high).all()):
            raise InvalidCell(f"{name} holds a value that is not finite or {span}")
        values.append(array)
    if not np.allclose(values[1] * games, np.round(values[1] * games)):
        raise InvalidCell(f"win holds a share that {games} game(s) per deal cannot give")
    return values[0], values[1]


class CellCache:
    """Finished cells on disk, one JSON file per cell (``folder`` None: no cache).

    Every cell read is checked (:func:`cell_values`); an invalid one is played again and named in
    :attr:`invalid` (``path: why``)."""

    def __init__(self, folder: str | None):
        self.folder = folder
        self.invalid: list[str] = []

    def key(self, mode: str, agent: str, opponent: str, seed: int, deals: int, chunk_size: int) -> dict:
        """Everything a cell's result depends on."""
        return {"version": CACHE_VERSION, "mode": mode, "agent": agent, "opponent": opponent, "seed": seed,
                "deals": deals, "chunk_size": chunk_size, "rules": mode_rules(mode).to_dict(),
                "files": [spec_fingerprint(agent), spec_fingerprint(opponent)]}

    def path(self, key: dict) -> str:
        assert self.folder is not None, "a cell's path asked of a cache without a folder"
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
        return os.path.join(self.folder, f"{key['mode']}-{digest}.json")

    def load(self, key: dict) -> Cell | None:
        """The cached cell of ``key``, or None (not cached, or a file that does not hold it validly)."""
        if self.folder is None or not os.path.lexists(self.path(key)):
            return None
        path = self.path(key)
        try:
            check_input(path, "cell file", MAX_CELL_BYTES)
            with open(path, encoding="utf-8") as f:
                score, win = cell_values(json.load(f), key)
        except (OSError, ValueError, OverflowError, RecursionError) as err:  # a cell not to trust
            self.invalid.append(f"{path}: {' '.join(str(err).split())[:200]}")
            return None
        return Cell(key["mode"], key["agent"], key["opponent"], score, win)

    def check_writable(self, keys: Sequence[dict]) -> None:
        """Before any game: the folder can be made and written, and each cell's file can be written
        (:class:`~doudizhu_env.files.OutputPathError` otherwise)."""
        if self.folder is None:
            return
        check_folder(self.folder, "--cache")
        if os.path.isdir(self.folder):
            for key in keys:
                check_output(self.path(key), "--cache")

    def save(self, key: dict, cell: Cell) -> None:
        if self.folder is None:
            return
        os.makedirs(self.folder, exist_ok=True)
        data = {"key": key, "figures": cell.figures(), "score": cell.score.tolist(), "win": cell.win.tolist()}
        atomic_write(self.path(key), report_json(data, indent=None))


@dataclass
class _Pending:
    """A cell being played: its key, its chunks' values so far."""

    key: dict
    chunks: int
    scores: list = dataclasses.field(default_factory=list)
    wins: list = dataclasses.field(default_factory=list)


def play_cells(todo: list[dict], deals: dict, *, workers: int = 1, pool: Callable | None = None,
               agent_factory: Callable | None = None, progress: bool = False,
               on_cell: Callable | None = None, desc: str = "tournament") -> list[Cell]:
    """Play the cells of ``todo`` (cache keys), all chunks in one stream; ``on_cell(key, cell)`` is
    called as each cell finishes (e.g. to cache it). ``progress``: a bar over the deals, named
    ``desc``."""
    jobs, owners = [], []
    for i, key in enumerate(todo):
        cfg = cell_config(key["mode"], key["agent"], key["opponent"], key["seed"], key["chunk_size"],
                          agent_factory)
        cell_jobs = chunk_jobs(cfg, deals[key["mode"]])
        jobs += cell_jobs
        owners += [(i, len(cell_jobs))] * len(cell_jobs)
    bar = progress_bar(sum(len(j[2]) for j in jobs), progress, desc=desc)
    pending: dict[int, _Pending] = {}
    cells: list[Cell] = []
    with closing(play_chunks(jobs, workers, pool)) as played:  # a Ctrl-C here stops the pool now
        for result, job, (i, n) in zip(played, jobs, owners, strict=True):
            key = todo[i]
            part = pending.setdefault(i, _Pending(key, n))
            score, win = lead_values(result, job[0])
            part.scores.append(score)
            part.wins.append(win)
            bar.update(len(job[2]))
            if len(part.scores) == n:
                cell = Cell(key["mode"], key["agent"], key["opponent"], np.concatenate(part.scores),
                            np.concatenate(part.wins))
                cells.append(cell)
                del pending[i]
                if on_cell is not None:
                    on_cell(key, cell)
    bar.close()
    return cells


def check_agent_names(agents: Sequence[str]) -> list[str]:
    """The agents of a tournament: at least two, each named once."""
    agents = list(agents)
    if len(agents) < 2:
        raise ValueError(f"a tournament needs at least 2 agents, got {len(agents)}")
    seen = set()
    for a in agents:
        if not isinstance(a, str) or not a:
            raise ValueError(f"an agent spec is a non-empty string, got {a!r}")
        if a in seen:
            raise ValueError(f"agent {a!r} is named twice; expected each agent once")
        seen.add(a)
    return agents


def check_deals_and_seed(num_deals: int, seed: int) -> None:
    """ValueError unless ``num_deals`` per cell is an integer in 1..MAX_DEALS (not a bool) and ``seed``
    a valid seed."""
    check_count("deals per cell", num_deals, 1, MAX_DEALS)
    check_seed(seed)


def play_tournament(agents: Sequence[str], num_deals: int = 2000, modes: Sequence[str] = MODES, *,
                    seed: int = 0, chunk_size: int = 200, workers: int = 1, cache: str | None = None,
                    pool: Callable | None = None, agent_factory: Callable | None = None,
                    progress: bool = False, bootstrap: int = 1000) -> dict:
    """Play every cell (cached ones are read back) and return the report: per mode the cells'
    figures (``cells[row][column]``), the ratings with intervals, and what was played.

    ``cache``: a folder of finished cells (see the module docstring); None plays everything.
    ``pool``/``workers``: where chunks are played, as in :func:`doudizhu_arena.arena.run_arena`.
    """
    agents = check_agent_names(agents)
    modes = list(dict.fromkeys(modes))
    for m in modes:
        mode_rules(m)
    check_deals_and_seed(num_deals, seed)
    check_count("workers", workers)
    check_count("chunk_size", chunk_size)
    if not (is_int(bootstrap) and 0 <= bootstrap <= MAX_BOOTSTRAP):
        raise ValueError(f"bootstrap must be an integer in 0..{MAX_BOOTSTRAP:,}, got {short(bootstrap)}")
    store = CellCache(cache)
    keys = {(m, a, b): store.key(m, a, b, seed, num_deals, chunk_size) for m in modes for a in agents
            for b in agents}
    cells: dict[tuple, Any] = {k: store.load(key) for k, key in keys.items()}
    todo = [keys[k] for k, c in cells.items() if c is None]
    store.check_writable(todo)  # now, not after every game
    for line in store.invalid:
        print(f"tournament cache: {line}; playing the cell again", file=sys.stderr, flush=True)
    deals = {m: make_deals(seed, num_deals, mode_rules(m), chunk_size) for m in modes
             if any(key["mode"] == m for key in todo)}
    start = time.perf_counter()
    for cell in play_cells(todo, deals, workers=workers, pool=pool, agent_factory=agent_factory,
                           progress=progress, on_cell=store.save):
        cells[(cell.mode, cell.agent, cell.opponent)] = cell
    rng = np.random.default_rng([seed, 7])
    config = {"deals": num_deals, "seed": seed, "chunk_size": chunk_size, "modes": modes, "cache": cache}
    report: dict[str, Any] = {"agents": agents, "config": config, "played": len(todo),
                              "cached": len(keys) - len(todo), "invalid_cache": store.invalid,
                              "seconds": time.perf_counter() - start, "modes": {}}
    for m in modes:
        grid = [[cells[(m, a, b)] for b in agents] for a in agents]
        report["modes"][m] = {"cells": {a: {b: grid[i][j].figures() for j, b in enumerate(agents)}
                                        for i, a in enumerate(agents)},
                              "ratings": fit_ratings(grid, agents, rng, bootstrap)}
    report["ratings"] = {m: report["modes"][m]["ratings"] for m in modes}
    return report


def landlord_and_farmers(agent: str, opponent: str, num_deals: int = 2000, *, seed: int = 0,
                         chunk_size: int = 200, workers: int = 1, pool: Callable | None = None,
                         progress: bool = False) -> dict:
    """DouZero's protocol (Zha et al., 2021, Table 1): with a fixed landlord, ``agent`` as the
    landlord against ``opponent`` as both farmers, and ``opponent`` as the landlord against
    ``agent`` as both farmers, one game of each per deal, on the same deals: the two
    ``fixed_landlord`` cells ``(agent, opponent)`` and ``(opponent, agent)`` of a tournament.

    Returns ``{"landlord": .., "farmers": .., "both": .., "deals": n}``, each figure a
    :func:`~doudizhu_arena.arena.mean_ci` over deals: ``wp`` is the agent's side's share of games
    won (the farmers win together) and ``adp`` its points per seat (a farmer's points, half the
    landlord's loss); ``both`` averages the two games of each deal (DouZero's averaged WP).

    The arguments are checked before any game: a one-line ``TypeError``/``ValueError`` naming the
    argument (``num_deals`` 2..1,000,000: an interval needs two deals).
    """
    check_agent_names([agent, opponent])
    check_judge_args(num_deals, seed, workers, chunk_size, MAX_DEALS)
    mode, store = "fixed_landlord", CellCache(None)
    pairs = ((agent, opponent), (opponent, agent))
    todo = [store.key(mode, a, b, seed, num_deals, chunk_size) for a, b in pairs]
    deals = {mode: make_deals(seed, num_deals, mode_rules(mode), chunk_size)}
    cells = {(c.agent, c.opponent): c for c in play_cells(todo, deals, workers=workers, pool=pool,
                                                            progress=progress)}
    mine, theirs = cells[(agent, opponent)], cells[(opponent, agent)]
    sides = {"landlord": (mine.win, mine.score), "farmers": (1.0 - theirs.win, -theirs.score / 2)}
    sides["both"] = ((sides["landlord"][0] + sides["farmers"][0]) / 2,
                     (sides["landlord"][1] + sides["farmers"][1]) / 2)
    out: dict[str, Any] = {side: {"wp": mean_ci(win), "adp": mean_ci(score)}
                           for side, (win, score) in sides.items()}
    out["deals"] = num_deals
    return out


# ----------------------------------------------------------------------------
# ratings
# ----------------------------------------------------------------------------


def adp_ratings(means: np.ndarray) -> np.ndarray:
    """Least-squares ratings of a square table of cell means (rows against columns, all cells
    present): ``(row mean - column mean) / 2``, which sums to 0."""
    return (means.mean(axis=1) - means.mean(axis=0)) / 2.0


def elo_ratings(wins: np.ndarray, games: np.ndarray, ridge: float = 1e-3, iters: int = 100) -> np.ndarray:
    """Bradley-Terry ratings (Elo scale) from wins out of games per cell, by maximum likelihood.

    Model: ``P(row a wins against column b) = sigmoid(c + u_a - v_b)`` (``u_0 = v_0 = 0`` fix the
    two shifts that leave it unchanged); the rating is ``(u_a + v_a) / 2``, centred, times
    400 / ln 10. A small ridge keeps a cell won (or lost) every time finite. Newton's method with
    step halving.
    """
    k = len(wins)
    rows, cols = (x.ravel() for x in np.indices((k, k)))
    design = np.zeros((k * k, 2 * k - 1))
    for i in range(1, k):
        design[rows == i, i - 1] = 1.0
        design[cols == i, k - 2 + i] = -1.0
    design[:, -1] = 1.0
    w, n = wins.ravel().astype(np.float64), games.ravel().astype(np.float64)

    def objective(theta):
        z = design @ theta
        return float(w @ z - n @ np.logaddexp(0.0, z) - 0.5 * ridge * theta @ theta)

    theta = np.zeros(2 * k - 1)
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(design @ theta)))
        grad = design.T @ (w - n * p) - ridge * theta
        hess = design.T @ (design * (n * p * (1 - p))[:, None]) + ridge * np.eye(2 * k - 1)
        step, base = np.linalg.solve(hess, grad), objective(theta)
        while objective(theta + step) < base and np.abs(step).max() > 1e-12:
            step /= 2.0
        theta += step
        if np.abs(step).max() < 1e-10:
            break
    u, v = np.concatenate([[0.0], theta[: k - 1]]), np.concatenate([[0.0], theta[k - 1 : 2 * k - 2]])
    strength = (u + v) / 2.0
    return ELO_PER_LOGIT * (strength - strength.mean())


def fit_ratings(grid: list[list[Cell]], agents: Sequence[str], rng: np.random.Generator,
                bootstrap: int = 1000) -> dict:
    """Per agent, the ``adp`` and ``elo`` ratings with 95% bootstrap intervals over deals."""
    score = np.stack([np.stack([c.score for c in row]) for row in grid])  # (K, K, deals)
    win = np.stack([np.stack([c.win for c in row]) for row in grid])
    n = score.shape[-1]
    games = np.full(score.shape[:2], float(n))
    adp, elo = adp_ratings(score.mean(-1)), elo_ratings(win.sum(-1), games)
    boot_adp, boot_elo = [], []
    for _ in range(bootstrap):
        pick = rng.integers(0, n, n)
        boot_adp.append(adp_ratings(score[:, :, pick].mean(-1)))
        boot_elo.append(elo_ratings(win[:, :, pick].sum(-1), games))
    out: dict[str, dict] = {}
    for i, a in enumerate(agents):
        out[a] = {}
        for name, point, boot in (("adp", adp, boot_adp), ("elo", elo, boot_elo)):
            low, high = (np.percentile([b[i] for b in boot], [2.5, 97.5]) if boot else (math.nan, math.nan))
            out[a][name] = {"rating": float(point[i]), "low": float(low), "high": float(high),
                            "replicates": bootstrap}
    return out


def leaderboard(report: dict, mode: str) -> list[tuple[str, dict]]:
    """The agents of a mode by ADP rating, best first: ``(agent, ratings)``."""
    ratings = report["modes"][mode]["ratings"]
    return sorted(ratings.items(), key=lambda kv: -kv[1]["adp"]["rating"])


# ----------------------------------------------------------------------------
# outputs: text, Markdown, heat map
# ----------------------------------------------------------------------------

MODE_TITLES = {"fixed_landlord": "fixed landlord: row = landlord, column = both farmers; the landlord's WP "
                                 "and ADP",
               "bidding": "with bidding: row = one seat, column = the two others (3 rotations); the row's "
                          "WP and ADP"}


def _short(name: str, width: int) -> str:
    return name if len(name) <= width else "..." + name[-(width - 3):]


def format_table(report: dict, mode: str) -> str:
    """One mode's table (ADP with 95% interval, WP below it) and its leaderboard, as text."""
    agents, cells = report["agents"], report["modes"][mode]["cells"]
    w = max(14, min(22, max(len(a) for a in agents)))
    lines = [MODE_TITLES[mode], " " * w + "".join(f"{_short(b, 16):>18}" for b in agents)]
    for a in agents:
        adp = "".join(f"{cells[a][b]['adp']['mean']:>+10.2f} ±{_ci(cells[a][b]['adp']):<6}" for b in agents)
        wp = "".join(f"{'WP ' + format(cells[a][b]['wp']['mean'], '.3f'):>18}" for b in agents)
        lines += [f"{_short(a, w):<{w}}{adp}", f"{'':<{w}}{wp}"]
    lines += ["", f"leaderboard ({mode}; ratings centred on the field, 95% bootstrap intervals):"]
    for rank, (a, r) in enumerate(leaderboard(report, mode), 1):
        lines.append(f"{rank:>3}. {_short(a, w):<{w}} ADP {r['adp']['rating']:+.3f} "
                     f"{_range(r['adp'], '+.3f')}   Elo {r['elo']['rating']:+6.0f} "
                     f"{_range(r['elo'], '+.0f')}")
    return "\n".join(lines)


def _ci(e: dict, digits: int = 2) -> str:
    """A cell's half-interval, or ``n/a`` where one deal gives none."""
    return f"{e['ci']:.{digits}f}" if e.get("ci") is not None and math.isfinite(e["ci"]) else "n/a"


def _range(r: dict, fmt: str) -> str:
    """A rating's bootstrap interval ``[low, high]``, or ``(no bootstrap)`` without replicates."""
    low, high = r.get("low"), r.get("high")
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "(no bootstrap)"
    return f"[{low:{fmt}}, {high:{fmt}}]"


def format_markdown(report: dict) -> str:
    """Every mode's table and leaderboard as Markdown."""
    agents = report["agents"]
    out = [f"Tournament: {report['config']['deals']:,} deals per cell, seed {report['config']['seed']}.", ""]
    for mode in report["modes"]:
        cells = report["modes"][mode]["cells"]
        out += [f"### {MODE_TITLES[mode][0].upper() + MODE_TITLES[mode][1:]}", "",
                "| | " + " | ".join(f"`{b}`" for b in agents) + " |", "|---" * (len(agents) + 1) + "|"]
        for a in agents:
            row = [f"{format_estimate(cells[a][b]['adp'], 2)} (WP {cells[a][b]['wp']['mean']:.3f})"
                   for b in agents]
            out.append(f"| `{a}` | " + " | ".join(row) + " |")
        out += ["", "| rank | agent | ADP rating (95%) | Elo (95%) |", "|---|---|---|---|"]
        for rank, (a, r) in enumerate(leaderboard(report, mode), 1):
            out.append(f"| {rank} | `{a}` | {r['adp']['rating']:+.3f} {_range(r['adp'], '+.3f')} | "
                       f"{r['elo']['rating']:+.0f} {_range(r['elo'], '+.0f')} |")
        out.append("")
    return "\n".join(out)


def heatmap_png(report: dict) -> bytes:
    """A heat map per mode (ADP of the row against the column, WP under it), as PNG bytes."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents, modes = report["agents"], list(report["modes"])
    k = len(agents)
    size = (1.3 * k * len(modes) + 2.5, 1.1 * k + 1.8)
    fig, axes = plt.subplots(1, len(modes), figsize=size, squeeze=False)
    for ax, mode in zip(axes[0], modes, strict=True):
        cells = report["modes"][mode]["cells"]
        adp = np.array([[cells[a][b]["adp"]["mean"] for b in agents] for a in agents])
        lim = max(float(np.abs(adp).max()), 1e-9)
        ax.imshow(adp, cmap="RdBu", vmin=-lim, vmax=lim)
        for i, a in enumerate(agents):
            for j, b in enumerate(agents):
                ax.text(j, i, f"{adp[i, j]:+.2f}\nWP {cells[a][b]['wp']['mean']:.2f}", ha="center",
                        va="center", fontsize=7)
        labels = [_short(a, 14) for a in agents]
        ax.set_xticks(range(k), labels, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(k), labels, fontsize=8)
        ax.set_title("fixed landlord: landlord (row) vs farmers" if mode == "fixed_landlord"
                     else "bidding: one seat (row) vs two", fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


# ----------------------------------------------------------------------------
# command line
# ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m doudizhu_arena.tournament", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                   help="agent specs (agents.registry), each once; at least two")
    p.add_argument("--deals", type=int, default=2000, help="deals per cell (default 2000)")
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES), help="default: both")
    add_play_options(p, chunk_size=200)
    p.add_argument("--cache", default=os.path.join("runs", "tournament-cache"),
                   help="folder of finished cells, reused by later runs (default runs/tournament-cache)")
    p.add_argument("--no-cache", action="store_true", help="play every cell, keep none")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap replicates for the ratings' "
                   "intervals (default 1000)")
    p.add_argument("--json", help="write the report (every cell, the ratings) here (replaced if it exists)")
    p.add_argument("--markdown", help="write the tables and leaderboards as Markdown here")
    p.add_argument("--heatmap", help="write the heat map here (PNG)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def check_args(args) -> None:
    """One-line ``ValueError``s for bad options and files, before any game: the outputs (none of them an
    input or another output), the cache folder."""
    from agents.registry import spec_files

    check_agent_names(args.agents)
    if not 1 <= args.deals <= MAX_DEALS:
        raise ValueError(f"--deals must be between 1 and {MAX_DEALS:,}, got {args.deals}")
    for name in ("workers", "chunk_size"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if not 0 <= args.bootstrap <= MAX_BOOTSTRAP:
        raise ValueError(f"--bootstrap must be in 0..{MAX_BOOTSTRAP:,}, got {args.bootstrap:,}")
    check_seed(args.seed, "--seed")
    check_outputs({f"--{o}": getattr(args, o) for o in ("json", "markdown", "heatmap")},
                  inputs=spec_files(args.agents))
    if not args.no_cache:
        check_folder(args.cache, "--cache")


def write_outputs(args, report: dict) -> list[str]:
    """The files asked for (written before anything is printed: a closed stdout loses none of them)."""
    written = []
    for option, content in (("json", lambda: report_json(report)),
                            ("markdown", lambda: format_markdown(report)),
                            ("heatmap", lambda: heatmap_png(report))):
        if getattr(args, option):
            atomic_write(getattr(args, option), content())
            written.append(getattr(args, option))
    return written


def _interrupted(cache: str | None) -> str:
    """The line a tournament stopped by Ctrl-C ends with: what is kept, how to continue."""
    if cache is None:
        return ("interrupted by Ctrl-C: nothing kept (--no-cache); run it again to play every cell, or "
                "without --no-cache to keep finished cells")
    done = len([n for n in os.listdir(cache) if n.endswith(".json")]) if os.path.isdir(cache) else 0
    return (f"interrupted by Ctrl-C: the finished cells are kept in {cache} ({done} cell files); run the "
            "same command again to continue from them")


def main(argv=None) -> dict:
    """Play the tournament, write the files asked for, print the tables and leaderboards. Ctrl-C stops
    it with one line (exit status 130) saying what is kept; a closed stdout stops only the printing."""
    from agents.registry import check_specs

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_args(args)
        one_thread()
        for mode in args.modes:
            check_specs(args.agents, mode_rules(mode))
        prepare_backend(args)
    except (ValueError, OSError, ImportError) as err:
        exit_error(parser, err)
    except KeyboardInterrupt:  # while the agents load
        parser.exit(130, f"{parser.prog}: interrupted by Ctrl-C before the first game: nothing played\n")
    cache = None if args.no_cache else args.cache
    try:
        with chunk_pool(args.backend, args.ray_address, args.workers) as pool:
            report = play_tournament(args.agents, args.deals, args.modes, seed=args.seed,
                                     chunk_size=args.chunk_size, workers=args.workers or 1, cache=cache,
                                     pool=pool, progress=not args.no_progress, bootstrap=args.bootstrap)
    except (ClusterUnreachable, OutputPathError) as err:
        exit_error(parser, err, "--ray-address" if isinstance(err, ClusterUnreachable) else "")
    except KeyboardInterrupt:
        parser.exit(130, f"{parser.prog}: {_interrupted(cache)}\n")
    written = write_outputs(args, report)
    echo(f"{len(args.agents)} agents, {args.deals} deals per cell: {report['played']} cells played "
         f"({report['seconds']:.0f}s), {report['cached']} read from the cache")
    for mode in report["modes"]:
        echo()
        echo(format_table(report, mode))
    if cache:
        written.append(f"{cache}/ (cells)")
    if written:
        echo("\nwritten: " + ", ".join(written))
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
