"""Round-robin tournaments: every agent against every agent, in both modes, with ratings.

Examples::

    python -m doudizhu_arena.tournament --agents random rlcard rule pretrained --deals 2000 --workers 2 \\
        --json t.json --markdown t.md --heatmap t.png
    python -m doudizhu_arena.tournament --agents rule pretrained dmc:runs/x/checkpoint.pt --modes fixed

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
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from doudizhu_env.files import atomic_write, check_output
from doudizhu_env.rules import Rules

from .arena import (
    ArenaConfig,
    chunk_jobs,
    lead_values,
    make_deals,
    mean_ci,
    one_thread,
    play_chunks,
    progress_bar,
)
from .cluster import BACKENDS, ClusterUnreachable, import_ray
from .ray_arena import chunk_pool

MODES = ("fixed", "bidding")
#: Cache format; a cell file of another version is played again.
CACHE_VERSION = 1
#: The most deals per cell (every deal is made before the first game).
MAX_DEALS = 1_000_000
ELO_PER_LOGIT = 400.0 / math.log(10.0)


def mode_rules(mode: str) -> Rules:
    """The rules of a mode: the standard rules, without bidding for ``fixed``."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {list(MODES)}")
    return Rules.preset("standard", bidding=mode == "bidding")


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
    return ArenaConfig(lineup, mode_rules(mode), "none" if mode == "fixed" else "rotate", seed, chunk_size,
                       agent_factory, sorted(set(lineup)))


def spec_fingerprint(spec: str) -> list:
    """What a spec's result depends on beyond its text: size and modification time of every file
    it names (a checkpoint, a DouZero folder's files, the shipped weights for ``pretrained``)."""
    from agents.registry import PRETRAINED

    parts = [PRETRAINED] if "pretrained" in spec else []
    for token in re.split(r"[,=]", spec):  # search:BASE,rollout=SPEC: each spec, with and without its prefix
        parts += [token, token.split(":", 1)[-1]]
    found = []
    for part in dict.fromkeys(parts):
        if os.path.isfile(part):
            st = os.stat(part)
            found.append([os.path.abspath(part), st.st_size, st.st_mtime_ns])
        elif os.path.isdir(part):
            for name in sorted(os.listdir(part)):
                full = os.path.join(part, name)
                if os.path.isfile(full):
                    st = os.stat(full)
                    found.append([os.path.abspath(full), st.st_size, st.st_mtime_ns])
    return found


class CellCache:
    """Finished cells on disk, one JSON file per cell (``folder`` None: no cache)."""

    def __init__(self, folder: str | None):
        self.folder = folder

    def key(self, mode: str, agent: str, opponent: str, seed: int, deals: int, chunk_size: int) -> dict:
        """Everything a cell's result depends on."""
        return {"version": CACHE_VERSION, "mode": mode, "agent": agent, "opponent": opponent, "seed": seed,
                "deals": deals, "chunk_size": chunk_size, "rules": mode_rules(mode).to_dict(),
                "files": [spec_fingerprint(agent), spec_fingerprint(opponent)]}

    def path(self, key: dict) -> str:
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
        return os.path.join(self.folder, f"{key['mode']}-{digest}.json")

    def load(self, key: dict) -> Cell | None:
        """The cached cell of ``key``, or None (not cached, or a file that does not hold it)."""
        if self.folder is None or not os.path.isfile(self.path(key)):
            return None
        try:
            with open(self.path(key)) as f:
                data = json.load(f)
            if data.get("key") != json.loads(json.dumps(key)):
                return None
            score, win = (np.asarray(data[k], dtype=np.float64) for k in ("score", "win"))
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return None
        if score.shape != (key["deals"],) or win.shape != score.shape:
            return None
        return Cell(key["mode"], key["agent"], key["opponent"], score, win)

    def save(self, key: dict, cell: Cell) -> None:
        if self.folder is None:
            return
        os.makedirs(self.folder, exist_ok=True)
        data = {"key": key, "figures": cell.figures(), "score": cell.score.tolist(), "win": cell.win.tolist()}
        atomic_write(self.path(key), json.dumps(data))


@dataclass
class _Pending:
    """A cell being played: its key, its chunks' values so far."""

    key: dict
    chunks: int
    scores: list = dataclasses.field(default_factory=list)
    wins: list = dataclasses.field(default_factory=list)


def play_cells(todo: list[dict], deals: dict, *, workers: int = 1, pool: Callable | None = None,
               agent_factory: Callable | None = None, progress: bool = False,
               on_cell: Callable | None = None) -> list[Cell]:
    """Play the cells of ``todo`` (cache keys), all chunks in one stream; ``on_cell(key, cell)`` is
    called as each cell finishes (e.g. to cache it)."""
    jobs, owners = [], []
    for i, key in enumerate(todo):
        cfg = cell_config(key["mode"], key["agent"], key["opponent"], key["seed"], key["chunk_size"],
                          agent_factory)
        cell_jobs = chunk_jobs(cfg, deals[key["mode"]])
        jobs += cell_jobs
        owners += [(i, len(cell_jobs))] * len(cell_jobs)
    bar = progress_bar(sum(len(j[2]) for j in jobs), progress, desc="tournament")
    pending: dict[int, _Pending] = {}
    cells: list[Cell] = []
    for result, job, (i, n) in zip(play_chunks(jobs, workers, pool), jobs, owners, strict=True):
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
    if not 1 <= num_deals <= MAX_DEALS:
        raise ValueError(f"deals per cell must be between 1 and {MAX_DEALS:,}, got {num_deals}")
    store = CellCache(cache)
    keys = {(m, a, b): store.key(m, a, b, seed, num_deals, chunk_size) for m in modes for a in agents
            for b in agents}
    cells = {k: store.load(key) for k, key in keys.items()}
    todo = [keys[k] for k, c in cells.items() if c is None]
    deals = {m: make_deals(seed, num_deals, mode_rules(m), chunk_size) for m in modes
             if any(key["mode"] == m for key in todo)}
    start = time.perf_counter()
    for cell in play_cells(todo, deals, workers=workers, pool=pool, agent_factory=agent_factory,
                           progress=progress, on_cell=store.save):
        cells[(cell.mode, cell.agent, cell.opponent)] = cell
    rng = np.random.default_rng([seed, 7])
    report = {"agents": agents, "config": {"deals": num_deals, "seed": seed, "chunk_size": chunk_size,
                                           "modes": modes, "cache": cache},
              "played": len(todo), "cached": len(keys) - len(todo),
              "seconds": time.perf_counter() - start, "modes": {}}
    for m in modes:
        grid = [[cells[(m, a, b)] for b in agents] for a in agents]
        report["modes"][m] = {"cells": {a: {b: grid[i][j].figures() for j, b in enumerate(agents)}
                                        for i, a in enumerate(agents)},
                              "ratings": fit_ratings(grid, agents, rng, bootstrap)}
    report["ratings"] = {m: report["modes"][m]["ratings"] for m in modes}
    return report


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
    out = {}
    for i, a in enumerate(agents):
        out[a] = {}
        for name, point, boot in (("adp", adp, boot_adp), ("elo", elo, boot_elo)):
            low, high = (np.percentile([b[i] for b in boot], [2.5, 97.5]) if boot else (math.nan, math.nan))
            out[a][name] = {"rating": float(point[i]), "low": float(low), "high": float(high)}
    return out


def leaderboard(report: dict, mode: str) -> list[tuple[str, dict]]:
    """The agents of a mode by ADP rating, best first: ``(agent, ratings)``."""
    ratings = report["modes"][mode]["ratings"]
    return sorted(ratings.items(), key=lambda kv: -kv[1]["adp"]["rating"])


# ----------------------------------------------------------------------------
# outputs: text, Markdown, heat map
# ----------------------------------------------------------------------------

MODE_TITLES = {"fixed": "fixed landlord: row = landlord, column = both farmers; the landlord's WP and ADP",
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
        adp = "".join(f"{cells[a][b]['adp']['mean']:>+10.2f} ±{cells[a][b]['adp']['ci']:<6.2f}"
                      for b in agents)
        wp = "".join(f"{'WP ' + format(cells[a][b]['wp']['mean'], '.3f'):>18}" for b in agents)
        lines += [f"{_short(a, w):<{w}}{adp}", f"{'':<{w}}{wp}"]
    lines += ["", f"leaderboard ({mode}; ratings centred on the field, 95% bootstrap intervals):"]
    for rank, (a, r) in enumerate(leaderboard(report, mode), 1):
        lines.append(f"{rank:>3}. {_short(a, w):<{w}} ADP {r['adp']['rating']:+.3f} "
                     f"[{r['adp']['low']:+.3f}, {r['adp']['high']:+.3f}]   "
                     f"Elo {r['elo']['rating']:+6.0f} [{r['elo']['low']:+.0f}, {r['elo']['high']:+.0f}]")
    return "\n".join(lines)


def format_markdown(report: dict) -> str:
    """Every mode's table and leaderboard as Markdown."""
    agents = report["agents"]
    out = [f"Tournament: {report['config']['deals']:,} deals per cell, seed {report['config']['seed']}.", ""]
    for mode in report["modes"]:
        cells = report["modes"][mode]["cells"]
        out += [f"### {MODE_TITLES[mode][0].upper() + MODE_TITLES[mode][1:]}", "",
                "| | " + " | ".join(f"`{b}`" for b in agents) + " |", "|---" * (len(agents) + 1) + "|"]
        for a in agents:
            row = [f"{cells[a][b]['adp']['mean']:+.2f} ± {cells[a][b]['adp']['ci']:.2f} "
                   f"(WP {cells[a][b]['wp']['mean']:.3f})" for b in agents]
            out.append(f"| `{a}` | " + " | ".join(row) + " |")
        out += ["", "| rank | agent | ADP rating (95%) | Elo (95%) |", "|---|---|---|---|"]
        for rank, (a, r) in enumerate(leaderboard(report, mode), 1):
            out.append(f"| {rank} | `{a}` | {r['adp']['rating']:+.3f} [{r['adp']['low']:+.3f}, "
                       f"{r['adp']['high']:+.3f}] | {r['elo']['rating']:+.0f} [{r['elo']['low']:+.0f}, "
                       f"{r['elo']['high']:+.0f}] |")
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
        ax.set_title("fixed landlord: landlord (row) vs farmers" if mode == "fixed"
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
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, help="processes (default 1), or with --backend ray the chunks "
                   "played at once; results do not depend on it")
    p.add_argument("--backend", choices=BACKENDS, default="local", help="local processes or Ray tasks")
    p.add_argument("--ray-address", default="", help="with --backend ray: auto or HOST:PORT (default: a "
                   "local Ray instance)")
    p.add_argument("--chunk-size", type=int, default=200, help="deals per chunk (results depend on it)")
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
    """One-line ``ValueError``s for bad options, before any game."""
    check_agent_names(args.agents)
    if not 1 <= args.deals <= MAX_DEALS:
        raise ValueError(f"--deals must be between 1 and {MAX_DEALS:,}, got {args.deals}")
    for name in ("workers", "chunk_size"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.bootstrap < 0:
        raise ValueError(f"--bootstrap must be 0 or more, got {args.bootstrap}")
    for option in ("json", "markdown", "heatmap"):
        check_output(getattr(args, option), f"--{option}")
    if not args.no_cache and os.path.exists(args.cache) and not os.path.isdir(args.cache):
        raise ValueError(f"--cache {args.cache!r} is a file; expected a folder (created if missing)")


def main(argv=None) -> dict:
    """Play the tournament, print the tables and leaderboards, write the files asked for."""
    from agents.registry import check_specs

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_args(args)
        one_thread()
        for mode in args.modes:
            check_specs(args.agents, mode_rules(mode))
        if args.backend == "ray":
            import_ray()
    except (ValueError, OSError, ImportError) as err:
        parser.exit(2, f"{parser.prog}: error: {' '.join(str(err).split())}\n")
    cache = None if args.no_cache else args.cache
    try:
        with chunk_pool(args.backend, args.ray_address, args.workers) as pool:
            report = play_tournament(args.agents, args.deals, args.modes, seed=args.seed,
                                     chunk_size=args.chunk_size, workers=args.workers or 1, cache=cache,
                                     pool=pool, progress=not args.no_progress, bootstrap=args.bootstrap)
    except ClusterUnreachable as err:
        parser.exit(2, f"{parser.prog}: error: --ray-address: {' '.join(str(err).split())}\n")
    print(f"{len(args.agents)} agents, {args.deals} deals per cell: {report['played']} cells played "
          f"({report['seconds']:.0f}s), {report['cached']} read from the cache")
    for mode in report["modes"]:
        print()
        print(format_table(report, mode))
    written = []
    if args.json:
        atomic_write(args.json, json.dumps(report, indent=1))
        written.append(args.json)
    if args.markdown:
        atomic_write(args.markdown, format_markdown(report))
        written.append(args.markdown)
    if args.heatmap:
        atomic_write(args.heatmap, heatmap_png(report))
        written.append(args.heatmap)
    if cache:
        written.append(f"{cache}/ (cells)")
    if written:
        print("\nwritten: " + ", ".join(written))
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
