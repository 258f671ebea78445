"""The model card's figures: the shipped ``pretrained`` agent against the baselines, in both modes.

Three parts (``--parts``, all by default), each on ``--deals`` duplicate deals
of the standard rules, WP and ADP with 95% intervals over deals:

- ``one_seat``: the agent in one seat, every deal played in the 3 rotations
  of the line-up ``pretrained, X, X``, with bidding and with a fixed
  landlord; per role, and with bidding how often the agent became landlord
  and how it bid (``--opponents``);
- ``douzero``: DouZero's protocol (:func:`doudizhu_arena.tournament.landlord_and_farmers`):
  with a fixed landlord, the agent as landlord against two X farmers, and X
  as landlord against the agent as both farmers, one game of each per deal;
  the two WPs and their average (``--douzero-opponents``);
- ``paired``: with bidding, the agent's points minus the reference's in the
  same seat of the same deal (:func:`doudizhu_arena.evaluation.paired_with_reference`),
  overall, where both became landlord and where both became farmers
  (``--reference``): "does it farm better than RuleAgent on the same deals?".

Run::

    python -m benchmarks.pretrained --deals 10000 --workers 2 --json docs/pretrained.json

prints the Markdown tables of ``docs/pretrained.md`` (on the 2-core machine, idle: about 4 minutes
for ``one_seat`` at 10,000 deals, and about 2 each for DouZero's protocol against one baseline and
for ``paired``).
"""

from __future__ import annotations

import argparse
import math
import time

from agents.checkpoint import read_checkpoint
from agents.registry import PRETRAINED
from benchmarks import write_json
from doudizhu_arena.arena import REPORT_ROLES, mode_rules
from doudizhu_arena.evaluation import evaluate_against, paired_with_reference
from doudizhu_arena.options import check_count, check_deals, check_outputs_and_agents, command_errors
from doudizhu_arena.tournament import MAX_DEALS, check_agent_names, landlord_and_farmers
from doudizhu_env.checks import check_seed
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
                wp = _ci({"mean": f["wp" + suffix], "ci": f["wp" + suffix + "_ci"]})
                adp = _ci({"mean": f["adp" + suffix], "ci": f["adp" + suffix + "_ci"]}, sign="+")
                lines.append(f"| {opponent} | {mode.replace('_', ' ')} | {role} | {wp} | {adp} |")
    for match, f in results.items():
        if "landlord_share" in f:
            lines.append(f"\nWith bidding against {match.split('/')[0]}: landlord in "
                         f"{f['landlord_share']:.1%} of its seats, "
                         f"passed on {f['pass_share']:.1%} of its bids.")
    return "\n".join(lines)


def _ci(figure: dict, digits: int = 3, sign: str = "") -> str:
    """``mean ± ci``; a mean over no games or an interval over one deal is said in words, not ``nan``."""
    mean, ci = figure.get("mean"), figure.get("ci")
    if mean is None or not math.isfinite(mean):
        return "no games in this role"
    if ci is None or not math.isfinite(ci):
        return f"{mean:{sign}.{digits}f} (one deal: no interval)"
    return f"{mean:{sign}.{digits}f} ± {ci:.{digits}f}"


def format_douzero(results: dict) -> str:
    """Markdown: DouZero's protocol, one line per opponent."""
    lines = ["| against | WP as landlord | WP as farmers | WP averaged | ADP as landlord | ADP per farmer |",
             "|---|---|---|---|---|---|"]
    for opponent, f in results.items():
        lines.append(f"| {opponent} | {_ci(f['landlord']['wp'])} | {_ci(f['farmers']['wp'])} | "
                     f"{_ci(f['both']['wp'])} | {_ci(f['landlord']['adp'], 2, '+')} | "
                     f"{_ci(f['farmers']['adp'], 2, '+')} |")
    return "\n".join(lines)


def format_paired(reference: str, paired: dict) -> str:
    """Markdown: the agent's points minus the reference's in the same seats of the same deals."""
    lines = [f"| with bidding, minus {reference} in the same seat | points per game | games compared |",
             "|---|---|---|"]
    for role in ("all", "landlord", "farmer"):
        lines.append(f"| {role} | {_ci(paired[role], 2, '+')} | {paired[role]['pairs']:,} |")
    return "\n".join(lines)


def run_one_seat(args) -> tuple[dict, dict]:
    """The agent in one seat against each of ``--opponents``, both modes: figures and timing."""
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
    print(format_rows(results), flush=True)
    return results, timing


def run_douzero(args) -> dict:
    """DouZero's protocol against each of ``--douzero-opponents``."""
    results = {}
    for opponent in args.douzero_opponents:
        start = time.perf_counter()
        results[opponent] = landlord_and_farmers(args.agent, opponent, args.deals, seed=args.seed,
                                                 workers=args.workers)
        print(f"DouZero's protocol against {opponent}: {time.perf_counter() - start:.0f} s", flush=True)
    print(format_douzero(results), flush=True)
    return results


def run_paired(args) -> dict:
    """With bidding, the agent's points minus ``--reference``'s in the same seats of the same deals."""
    start = time.perf_counter()
    paired = paired_with_reference(args.agent, args.reference, Rules.preset("standard"), args.deals,
                                   seed=args.seed, workers=args.workers)
    print(f"paired with {args.reference}: {time.perf_counter() - start:.0f} s", flush=True)
    print(format_paired(args.reference, paired), flush=True)
    return paired


PARTS = ("one_seat", "douzero", "paired")


def build_parser() -> argparse.ArgumentParser:
    """The command-line options."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pretrained",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="pretrained", help="agent spec (default: the shipped agent)")
    parser.add_argument("--opponents", nargs="+", default=["random", "rule", "rlcard"],
                        help="one_seat: the baselines (default: random rule rlcard)")
    parser.add_argument("--douzero-opponents", nargs="+", default=["rule", "rlcard"],
                        help="douzero: the baselines of DouZero's protocol (default: rule rlcard)")
    parser.add_argument("--reference", default="rule", help="paired: the reference agent (default: rule)")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS),
                        help="which parts to run (default: all three)")
    parser.add_argument("--deals", type=int, default=10_000,
                        help=f"deals of each part, 2 to {MAX_DEALS:,} (default 10000)")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the deals, 0..2**63-1 (default 2026)")
    parser.add_argument("--json", help="write the figures to this JSON file (replaced if it exists; never "
                        "a file an agent spec names)")
    return parser


def check_args(args) -> None:
    """Every option, output and agent of every part checked before the first game of any part:
    one-line ``ValueError``s naming the option or the agent."""
    check_deals(args.deals, low=2, high=MAX_DEALS)  # the intervals need two deals
    check_count(args.workers, "--workers")
    check_seed(args.seed, "--seed")
    specs, modes = [args.agent], set()
    if "one_seat" in args.parts:
        specs += args.opponents
        modes |= {"bidding", "fixed_landlord"}
    if "douzero" in args.parts:
        for opponent in args.douzero_opponents:
            try:
                check_agent_names([args.agent, opponent])
            except ValueError:
                raise ValueError(f"--douzero-opponents: {opponent!r} is the --agent itself; DouZero's "
                                 "protocol plays the agent against another agent") from None
        specs += args.douzero_opponents
        modes.add("fixed_landlord")
    if "paired" in args.parts:
        specs.append(args.reference)
        modes.add("bidding")
    check_outputs_and_agents({"--json": args.json}, specs, [mode_rules(m) for m in sorted(modes)])


def main(argv=None) -> dict:
    parser = build_parser()
    args = parser.parse_args(argv)
    with command_errors(parser):
        check_args(args)
    out: dict = {"agent": args.agent, "deals": args.deals, "seed": args.seed, "workers": args.workers}
    if "one_seat" in args.parts:
        out["results"], out["timing"] = run_one_seat(args)
    if "douzero" in args.parts:
        out["douzero_protocol"] = run_douzero(args)
    if "paired" in args.parts:
        out["paired"] = {"reference": args.reference, "bidding": run_paired(args)}
    if args.agent == "pretrained":
        data = read_checkpoint(PRETRAINED)
        out["weights"] = {k: data.get(k) for k in ("frames", "updates", "minutes")}
    if args.json:
        write_json(args.json, out)
        print(f"figures: {args.json}")
    return out


if __name__ == "__main__":
    main()
