"""The model card's figures: the shipped ``pretrained`` agent against the baselines, in both modes.

Each match is ``--deals`` duplicate deals (every deal played in the 3
rotations of the line-up ``pretrained, X, X``), with bidding and with a fixed
landlord, on the standard rules; WP and ADP with 95% intervals per role, and
with bidding how often the agent became landlord and how it bid. Run::

    python -m benchmarks.pretrained --deals 10000 --workers 2 --json docs/pretrained.json

(about 20 minutes on 2 cores) prints the Markdown table of ``docs/pretrained.md``.
"""

from __future__ import annotations

import argparse
import time

from agents.checkpoint import read_checkpoint
from agents.registry import PRETRAINED
from benchmarks import check_outputs, write_json
from doudizhu_arena.arena import REPORT_ROLES, one_thread
from doudizhu_arena.evaluation import evaluate_against
from doudizhu_env.rules import Rules

#: (role, suffix of its figures in :func:`doudizhu_arena.evaluation.evaluate_against`'s output)
ROLES = tuple((role, "" if role == "all" else f"_{role}") for role in REPORT_ROLES)


def format_rows(results: dict) -> str:
    """Markdown: one line per baseline, mode and role."""
    lines = ["| against | mode | role | WP | ADP |", "|---|---|---|---|---|"]
    for match, f in results.items():
        opponent, mode = match.split("/")
        for role, suffix in ROLES:
            if f"wp{suffix}" in f:
                lines.append(f"| {opponent} | {mode.replace('_', ' ')} | {role} | "
                             f"{f['wp' + suffix]:.3f} ± {f['wp' + suffix + '_ci']:.3f} | "
                             f"{f['adp' + suffix]:+.3f} ± {f['adp' + suffix + '_ci']:.3f} |")
    for match, f in results.items():
        if "landlord_share" in f:
            lines.append(f"\nWith bidding against {match.split('/')[0]}: landlord in "
                         f"{f['landlord_share']:.1%} of its seats, "
                         f"passed on {f['pass_share']:.1%} of its bids.")
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="pretrained", help="agent spec (default: the shipped agent)")
    parser.add_argument("--opponents", nargs="+", default=["random", "rule", "rlcard"])
    parser.add_argument("--deals", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", help="write the figures to this JSON file")
    args = parser.parse_args(argv)
    check_outputs(parser, {"--json": args.json})
    one_thread()
    results, timing = {}, {}
    for opponent in args.opponents:
        start = time.perf_counter()
        report = evaluate_against(args.agent, Rules.preset("standard"), [opponent], args.deals,
                                  seed=args.seed, workers=args.workers)
        seconds = time.perf_counter() - start
        for key, figures in report.items():
            results[key] = {k: v for k, v in figures.items() if k != "table"}
            print(f"against {key}:\n{figures['table']}\n", flush=True)
        timing[opponent] = {"seconds": seconds, "deals_per_s": 2 * args.deals / seconds}
        print(f"{opponent}: {seconds:.0f} s ({timing[opponent]['deals_per_s']:.1f} deals/s)", flush=True)
    print(format_rows(results))
    out = {"agent": args.agent, "deals": args.deals, "seed": args.seed, "workers": args.workers,
           "results": results, "timing": timing}
    if args.agent == "pretrained":
        data = read_checkpoint(PRETRAINED)
        out["weights"] = {k: data.get(k) for k in ("frames", "updates", "minutes")}
    if args.json:
        write_json(args.json, out)
        print(f"figures: {args.json}")
    return out


if __name__ == "__main__":
    main()
