"""Arena benchmark: RuleAgent vs RandomAgent and vs rlcard's rule agent, and arena throughput.

Each study is 10,000 duplicate deals (every deal played in the 3 rotations of
the line-up ``rule, X, X``), with bidding (standard rules) and with a fixed
landlord (standard rules, bidding off). Usage::

    python -m benchmarks.arena --games 10000 --workers 2 --out benchmarks/arena_results.json
    python -m benchmarks.arena --throughput-only --dmc pretrained

prints a markdown table (used in ``docs/evaluation.md``) and writes the reports.
The throughput part measures deals/s of random play, of RuleAgent, and of a
DMC agent (``--dmc``, default the shipped ``pretrained``) against RuleAgent
with a fixed landlord, at 1 and ``--workers`` processes (each holding torch
to one thread, :func:`doudizhu_arena.arena.one_thread`).
"""

from __future__ import annotations

import argparse
import time

from benchmarks import write_json
from doudizhu_arena.arena import MODES as ARENA_MODES
from doudizhu_arena.arena import mode_rules, run_arena
from doudizhu_arena.options import check_count, check_deals, check_outputs_and_agents, command_errors
from doudizhu_env.checks import check_seed

STUDIES = [("rule", "random"), ("rule", "rlcard")]
MODES = {mode: mode_rules(mode) for mode in ARENA_MODES}


def run_study(a: str, b: str, mode: str, games: int, workers: int, seed: int) -> dict:
    """One study: line-up ``a, b, b`` rotated over ``games`` deals; the report with timing."""
    start = time.perf_counter()
    report = run_arena([a, b, b], games, MODES[mode], seed=seed, workers=workers, progress=False)
    report["timing"] = {"seconds": time.perf_counter() - start, "workers": workers}
    report["timing"]["deals_per_s"] = games / report["timing"]["seconds"]
    return report


def table_rows(a: str, b: str, mode: str, report: dict) -> list[str]:
    """Markdown rows: agent ``a``'s WP and ADP per role, and its opponent's."""
    rows = []
    for name in (a, b):
        for role in ("all", "landlord", "farmer"):
            e = report["agents"][name][role]
            wp, adp = e["wp"], e["adp"]
            rows.append(f"| {a} vs {b} | {mode} | {name} | {role} | {e['games']} | "
                        f"{wp['mean']:.3f} ± {wp['ci']:.3f} | {adp['mean']:+.3f} ± {adp['ci']:.3f} |")
    return rows


def main(argv=None) -> None:
    """Run every study and the throughput measurement; print the table."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.arena", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=10_000,
                   help="deals per study, each played in the 3 rotations of the line-up (default 10000)")
    p.add_argument("--workers", type=int, default=2,
                   help="arena processes; the figures do not depend on it (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the agents (default 0)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="write every report (and the throughput timings) to this JSON file")
    p.add_argument("--skip-rlcard", action="store_true",
                   help="leave out the studies against rlcard's rule agent (rlcard not installed)")
    p.add_argument("--throughput-only", action="store_true", help="skip the WP/ADP studies")
    p.add_argument("--dmc", default="pretrained",
                   help="DMC agent spec of the throughput rows (default pretrained, the shipped agent)")
    p.add_argument("--throughput-deals", type=int, default=1000,
                   help="deals per throughput measurement (default 1000)")
    args = p.parse_args(argv)
    with command_errors(p):  # every option, output and agent before the first game
        check_deals(args.games, "--games", low=2)  # the intervals need two deals
        check_deals(args.throughput_deals, "--throughput-deals")
        check_count(args.workers, "--workers")
        check_seed(args.seed, "--seed")
        rlcard = [] if args.skip_rlcard or args.throughput_only else ["rlcard"]
        specs = ["random", "rule", args.dmc, *rlcard]
        check_outputs_and_agents({"--out": args.out}, specs, list(MODES.values()))
    results, rows = {}, []
    for a, b in [] if args.throughput_only else STUDIES:
        if b == "rlcard" and args.skip_rlcard:
            continue
        for mode in MODES:
            rep = run_study(a, b, mode, args.games, args.workers, args.seed)
            results[f"{a} vs {b} ({mode})"] = rep
            rows += table_rows(a, b, mode, rep)
            print(f"{a} vs {b} ({mode}): {rep['timing']['seconds']:.1f}s", flush=True)
    n = args.throughput_deals
    studies = [(("random",) * 3, "bidding", 1), (("random",) * 3, "bidding", args.workers),
               (("rule", "random", "random"), "bidding", args.workers),
               ((args.dmc, "rule", "rule"), "fixed_landlord", 1),
               ((args.dmc, "rule", "rule"), "fixed_landlord", args.workers)]
    for line_up, mode, workers in studies:
        rep = run_study(line_up[0], line_up[1], mode, n, workers, args.seed)
        results[f"throughput {'/'.join(line_up)} ({mode}) workers={workers}"] = rep["timing"]
    if rows:
        print("| study | mode | agent | role | games | WP (95% CI) | ADP (95% CI) |")
        print("|---|---|---|---|---|---|---|")
        print("\n".join(rows))
    for k, v in results.items():
        if k.startswith("throughput"):
            print(f"{k}: {v['deals_per_s']:.1f} deals/s ({v['seconds']:.1f}s)")
    if args.out:
        write_json(args.out, results)


if __name__ == "__main__":
    main()
