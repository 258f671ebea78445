"""Engine throughput: full random games on the vectorized engine and the single-game path vs. the peers.

Workload: full hands (bidding and doubling included, standard rules), every
decision drawn uniformly from the legal actions, which are recomputed at
every step (as bitsets; the ``+dense`` rows also materialise the dense
``(B, A)`` mask every step). Finished games are redealt at once
(``auto_reset``), so the batch stays full. One process, one thread.

The ``single game`` row plays one game at a time on the single-game path
(:class:`doudizhu_env.game.Game`, what the PettingZoo and Gymnasium envs
step): a new deal, then ``game.step(game.sample_legal(rng))`` to the end;
its ratio to rlcard's raw engine (target 1x) is printed under the table.

Run::

    python -m benchmarks.engine                     # ~1 minute
    python -m benchmarks.engine --json engine.json --repeats 3

Peers (open_spiel's C++ ``dou_dizhu``, rlcard, douzero) are measured on the
same workload in the same run when they are installed, in this interpreter
(``pip install -e ".[benchmark]"`` installs all three) or in ``.venv-peers``
(see ``benchmarks/requirements-peers.txt``); ratios are games/s of ours over
theirs. Figures are medians of ``--repeats`` runs, made in rounds (every row
once per round) so that the machine's load falls on all rows alike.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
import tracemalloc

import numpy as np

from benchmarks import write_json
from doudizhu_arena.options import check_count, check_outputs_and_agents, check_positive, command_errors
from doudizhu_env import engine
from doudizhu_env.game import Game

BATCH_SIZES = (1, 64, 1024, 4096)
#: The largest batch measured (its games are held in memory at once).
MAX_BATCH = 1_000_000
PEERS = ("openspiel_engine", "rlcard_engine", "douzero_engine")
#: The single-game path's games/s over rlcard's raw engine's (both one game at a time, random play).
TARGET_SINGLE_VS_RLCARD = 1.0
PEERS_PYTHON = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".venv-peers",
                            "bin", "python")


def run_ours(num_games: int, seconds: float, seed: int, rules: str = "standard", dense: bool = False) -> dict:
    """Step ``num_games`` games with random legal actions for about ``seconds``."""
    rng = np.random.default_rng(seed)
    state = engine.reset(rng, num_games, rules)
    state = engine.step(state, engine.sample_legal(state, rng), check=False)  # warm caches
    games = decisions = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        if dense:
            engine.legal_action_mask(state)
        actions = engine.sample_legal(state, rng)
        decisions += num_games
        state = engine.step(state, actions, check=False, auto_reset=True)
        games += int(state.ended.sum())
    return {"games": games, "decisions": decisions, "seconds": elapsed,
            "games_per_s": games / elapsed, "decisions_per_s": decisions / elapsed}


def run_single(seconds: float, seed: int, rules: str = "standard") -> dict:
    """Play one game at a time on the single-game path with random legal actions for about ``seconds``."""
    rng = np.random.default_rng(seed)
    _play_single(Game.new(rng, rules), rng)  # warm caches
    games = decisions = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        decisions += _play_single(Game.new(rng, rules), rng)
        games += 1
    return {"games": games, "decisions": decisions, "seconds": elapsed,
            "games_per_s": games / elapsed, "decisions_per_s": decisions / elapsed}


def _play_single(game: Game, rng: np.random.Generator) -> int:
    decisions = 0
    while not game.done:
        game.step(game.sample_legal(rng), check=False)
        decisions += 1
    return decisions


def peak_memory(num_games: int, seed: int = 0) -> float:
    """Peak bytes numpy allocates while stepping ``num_games`` games for 50 steps."""
    rng = np.random.default_rng(seed)
    tracemalloc.start()
    state = engine.reset(rng, num_games)
    for _ in range(50):
        state = engine.step(state, engine.sample_legal(state, rng), check=False, auto_reset=True)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


RATES = ("games_per_s", "decisions_per_s")


def _summary(runs: list[dict], keys=RATES) -> dict:
    """Medians of the rates ``keys`` over ``runs``, and the runs."""
    out = {k: statistics.median(r[k] for r in runs) for k in keys if k in runs[0]}
    out["runs"] = runs
    return out


def interleaved(measurements: dict, repeats: int, keys=RATES) -> dict[str, dict]:
    """``repeats`` rounds of every measurement (``label -> fn(seed)``), one run each per round, so that
    a change of the machine's load in the middle of the command falls on all of them alike.

    A measurement raising ImportError or RuntimeError (a peer not installed) is skipped from then on.
    Returns the medians of the rates ``keys`` per label.
    """
    runs: dict[str, list] = {label: [] for label in measurements}
    skipped: set[str] = set()
    for seed in range(repeats):
        for label, fn in measurements.items():
            if label in skipped:
                continue
            try:
                runs[label].append(fn(seed))
            except (ImportError, RuntimeError) as err:
                print(f"  {label}: skipped ({err})", flush=True)
                skipped.add(label)
        print(f"  round {seed + 1}/{repeats} done", flush=True)
    return {label: _summary(r, keys) for label, r in runs.items() if r}


def measure_peer(name: str, seconds: float, seed: int) -> dict:
    """One measurement of a peer: in this interpreter if it has the peer, else in ``.venv-peers``."""
    from benchmarks import peers

    try:
        return getattr(peers, name)(seconds, seed)
    except ImportError:
        if not os.path.exists(PEERS_PYTHON):
            raise
        return peers.run_in_subprocess(PEERS_PYTHON, name, seconds, seed)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engine", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (the median is shown)")
    parser.add_argument("--batch", type=int, nargs="*", default=list(BATCH_SIZES))
    parser.add_argument("--no-peers", action="store_true", help="measure only this project's engine")
    parser.add_argument("--json", help="write the table as JSON to this path")
    args = parser.parse_args(argv)
    with command_errors(parser):  # every option and the output before the first measurement
        check_positive(args.seconds, "--seconds")
        check_count(args.repeats, "--repeats")
        for b in args.batch:
            check_count(b, "--batch", 1, MAX_BATCH, "the games of a batch are held at once")
        check_outputs_and_agents({"--json": args.json})

    measurements, rows = {}, []
    for b in args.batch:
        for dense in (False, True) if b >= 1024 else (False,):
            label = f"doudizhu B={b}" + (" +dense" if dense else "")
            measurements[label] = lambda seed, b=b, d=dense: run_ours(b, args.seconds, seed, dense=d)
            rows.append({"engine": label, "batch": b})
    measurements["doudizhu single game"] = lambda seed: run_single(args.seconds, seed)
    rows.append({"engine": "doudizhu single game", "path": "single"})
    if not args.no_peers:
        for name in PEERS:
            measurements[name] = lambda seed, n=name: measure_peer(n, args.seconds, seed)
            rows.append({"engine": name.removesuffix("_engine")})
    figures = interleaved(measurements, args.repeats)
    rows = [{**row, **figures[label]} for row, label in zip(rows, measurements, strict=True)
            if label in figures]
    for row in rows:
        if "batch" in row:  # after the runs: the tables built on first use are not counted
            row["peak_bytes"] = peak_memory(row["batch"])
    single = figures["doudizhu single game"]
    _print_table(rows)
    result = {"workload": "random legal actions, full hands, standard rules", "rows": rows,
              "max_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
              "cpu_count": os.cpu_count()}
    rlcard = next((r for r in rows if r["engine"] == "rlcard"), None)
    if rlcard is not None:
        ratio = single["games_per_s"] / rlcard["games_per_s"]
        result["single_vs_rlcard"] = {"ratio": ratio, "target": TARGET_SINGLE_VS_RLCARD,
                                      "met": ratio >= TARGET_SINGLE_VS_RLCARD}
        print(f"single game vs rlcard's engine: x{ratio:.2f} (target x{TARGET_SINGLE_VS_RLCARD:g})")
    if args.json:
        write_json(args.json, result)
    return result


def _print_table(rows: list[dict]) -> None:
    peers = {r["engine"]: r["games_per_s"] for r in rows if "batch" not in r and "path" not in r}
    header = f"{'engine':<26}{'games/s':>12}{'decisions/s':>14}{'peak MB':>10}"
    header += "".join(f"{'x ' + p:>14}" for p in peers)
    print(header)
    for r in rows:
        line = f"{r['engine']:<26}{r['games_per_s']:>12,.0f}{r['decisions_per_s']:>14,.0f}"
        line += f"{r['peak_bytes'] / 2**20:>10.1f}" if "peak_bytes" in r else f"{'':>10}"
        line += "".join(f"{r['games_per_s'] / g:>14.2f}" for g in peers.values())
        print(line)


if __name__ == "__main__":
    main()
