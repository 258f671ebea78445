"""RuleAgent throughput: decisions/s of the batched agent and of the per-game reference, same positions.

Positions: every decision of ``--games`` games (standard rules, bidding and
doubling included; each seat of each game plays by the rule agent or at random,
drawn per game, so that late-game positions occur), as seat views; ``--positions``
of them are drawn at random into one pool. For each batch size B the pool is cut
into batches of B games and both agents (:class:`agents.rule.RuleAgent` and
:class:`ReferenceRuleAgent` of ``tests/reference_rule.py``) decide every batch; a figure is
decisions/s over the whole pool, the median of ``--repeats`` runs made in rounds
(every row once per round) so that the machine's load falls on all rows alike.
Both agents share the hand-cost caches, which an untimed pass of each fills
first, so the figures compare the decision code; ``--cold`` empties the caches
before every run instead (then the recursive ``hand_cost`` of new hands, the same
work for both, dominates). The run also checks that both agents chose the same
action in every position. One process. Run::

    python -m benchmarks.rule_agent                    # well under a minute
    python -m benchmarks.rule_agent --json rule_agent.json --positions 8192
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import statistics
import time
from pathlib import Path

import numpy as np

from agents.rule import RuleAgent, clear_caches
from benchmarks import write_json
from benchmarks.engine import MAX_BATCH
from doudizhu_arena.options import check_count, check_outputs_and_agents, command_errors
from doudizhu_env import engine
from doudizhu_env.checks import check_seed
from doudizhu_env.driver import drive
from doudizhu_env.observation import seat_view

BATCH_SIZES = (1, 64, 1024)
#: The most games the positions come from (every decision's view of them is kept until the draw).
MAX_GAMES = 20_000


def _load_reference():
    """The per-game oracle, which lives with the tests (``tests/reference_rule.py``), loaded by
    its path: the checkout's tests are not an installed package."""
    path = Path(__file__).resolve().parent.parent / "tests" / "reference_rule.py"
    spec = importlib.util.spec_from_file_location("reference_rule", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ReferenceRuleAgent


def agent_classes() -> dict:
    """The two agents timed, by the name their figures carry."""
    return {"reference": _load_reference(), "batched": RuleAgent}


def concat(states: list[engine.State]) -> engine.State:
    """The games of several states (of one rule set) as one state."""
    fields = {}
    for f in dataclasses.fields(engine.State):
        values = [getattr(s, f.name) for s in states]
        fields[f.name] = np.concatenate(values) if isinstance(values[0], np.ndarray) else values[0]
    return engine.State(**fields)


def positions(games: int, count: int, seed: int, rules: str = "standard") -> engine.State:
    """``count`` seat views drawn from every decision of ``games`` games of mixed play (one state)."""
    rng = np.random.default_rng(seed)
    state = engine.reset(rng, games, rules)
    seat_player = (rng.random((games, 3)) >= 0.5).astype(np.int64)  # 0: RuleAgent, 1: random
    views = [seat_view(turn.before, np.flatnonzero(turn.live))
             for turn in drive(state, seat_player, [RuleAgent(), engine.RandomPolicy(rng)])]
    pool = concat(views)
    return engine.take(pool, rng.choice(pool.num_games, min(count, pool.num_games), replace=False))


def batches(pool: engine.State, size: int) -> list[engine.State]:
    """The pool cut into consecutive batches of ``size`` games (the last one may be smaller)."""
    n = pool.num_games
    return [engine.take(pool, np.arange(i, min(i + size, n))) for i in range(0, n, size)]


def run(agent, parts: list[engine.State], cold: bool) -> dict:
    """Decide every batch once; decisions/s."""
    if cold:
        clear_caches()
    start = time.perf_counter()
    for part in parts:
        agent.act(part)
    seconds = time.perf_counter() - start
    decisions = sum(p.num_games for p in parts)
    return {"decisions": decisions, "seconds": seconds, "decisions_per_s": decisions / seconds}


def check_identical(pool: engine.State) -> int:
    """Positions of the pool on which the two agents differ (0 expected)."""
    return int(np.sum(RuleAgent().act(pool) != _load_reference()().act(pool)))


def measure(pool: engine.State, sizes, repeats: int, cold: bool) -> list[dict]:
    """Median decisions/s of each agent at each batch size, in rounds."""
    parts = {b: batches(pool, b) for b in sizes}
    agents = {name: cls() for name, cls in agent_classes().items()}
    if not cold:
        for agent in agents.values():  # fill the caches
            run(agent, parts[max(sizes)], cold=False)
    runs = {(name, b): [] for b in sizes for name in agents}
    for k in range(repeats):
        for (name, b), out in runs.items():
            out.append(run(agents[name], parts[b], cold))
        print(f"  round {k + 1}/{repeats} done", flush=True)
    rows = []
    for b in sizes:
        row = {"batch": b}
        for name in agents:
            row[name] = statistics.median(r["decisions_per_s"] for r in runs[(name, b)])
            row[f"{name}_runs"] = runs[(name, b)]
        row["ratio"] = row["batched"] / row["reference"]
        rows.append(row)
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"{'B':>6}{'reference dec/s':>18}{'batched dec/s':>16}{'ratio':>9}")
    for r in rows:
        print(f"{r['batch']:>6}{r['reference']:>18,.0f}{r['batched']:>16,.0f}{r['ratio']:>8.1f}x")


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rule_agent", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=512, help="games the positions come from (default 512)")
    parser.add_argument("--positions", type=int, default=4096, help="positions in the pool (default 4096)")
    parser.add_argument("--batch", type=int, nargs="*", default=list(BATCH_SIZES), help="batch sizes")
    parser.add_argument("--repeats", type=int, default=5, help="runs per figure (the median is shown)")
    parser.add_argument("--cold", action="store_true", help="empty the hand-cost caches before every run")
    parser.add_argument("--seed", type=int, default=0, help="seed of the games (default 0)")
    parser.add_argument("--json", help="write the table as JSON to this path")
    args = parser.parse_args(argv)
    with command_errors(parser):  # every option and the output before the first measurement
        check_count(args.games, "--games", 1, MAX_GAMES, "every decision's view of the games is kept")
        check_count(args.positions, "--positions", 1, MAX_BATCH, "the positions are held at once")
        for b in args.batch:
            check_count(b, "--batch", 1, MAX_BATCH, "the positions of a batch are held at once")
        check_count(args.repeats, "--repeats")
        check_seed(args.seed, "--seed")
        check_outputs_and_agents({"--json": args.json})

    pool = positions(args.games, args.positions, args.seed)
    play_share = float(np.mean(pool.phase == engine.PLAY))
    caches = "cold" if args.cold else "warm"
    print(f"{pool.num_games} positions ({play_share:.0%} card play), caches {caches}")
    differ = check_identical(pool)
    rows = measure(pool, args.batch, args.repeats, args.cold)
    print_table(rows)
    print(f"positions where the agents differ: {differ}")
    result = {"workload": "seat views of mixed rule/random play, standard rules", "positions": pool.num_games,
              "play_share": play_share, "cold": args.cold, "repeats": args.repeats, "differ": differ,
              "rows": rows, "cpu_count": os.cpu_count()}
    if args.json:
        write_json(args.json, result)
    return result


if __name__ == "__main__":
    main()
