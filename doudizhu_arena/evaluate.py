"""Evaluate agents against each other in the arena (:mod:`doudizhu_arena.arena`).

Examples::

    python -m doudizhu_arena.evaluate --landlord rule --farmers random --games 10000
    python -m doudizhu_arena.evaluate --landlord rule --farmers rlcard --fixed-landlord \
        --games 10000 --workers 2
    python -m doudizhu_arena.evaluate --seats rule random random --save-deals deals.json --json out.json
    python -m doudizhu_arena.evaluate --seats rule random random --games 10 --record games.jsonl
    python -m doudizhu_arena.evaluate --landlord douzero:ckpts/ --farmers rule --rules douzero
    python -m doudizhu_arena.evaluate --landlord rule --farmers random --games 100000 \
        --backend ray --ray-address auto
    python -m doudizhu_arena.evaluate --landlord pretrained --farmers rule --games 4000 --paired

``--landlord X --farmers Y`` is the line-up ``X, Y, Y``. With bidding on (the
standard rules) the positions are seats and the roles come from the bidding;
with ``--fixed-landlord`` (or ``--rules douzero``) the positions are the roles
landlord, landlord_down, landlord_up. ``--games`` counts deals: each is played
once per rotation of the line-up (``--duplicate rotate``, the default).
``--backend ray`` plays the chunks of deals as Ray tasks over a cluster
(:mod:`doudizhu_arena.ray_arena`); the report is the same as the local pool's.

``--paired`` adds, after the report, the first agent's points minus the
farmers' agent's in the same seat of the same deal
(:func:`doudizhu_arena.evaluation.paired_with_reference`): overall, where both
were landlord, where both were farmers, and in each farmer seat alone
(landlord_down, landlord_up), each beside the reference as its partner; then
``farmer_team``: two copies of the agent as the farmers against the reference
as landlord, per farmer. With bidding that answers "does it
farm better than the reference would have, on the same deals?", which the
per-role figures cannot (the bidding chooses who farms). It plays the
line-up's games again, the reference in all three seats of the same deals and
the team against the reference landlord (5/3 of the evaluation's games more
with a fixed landlord, 7/3 with bidding, on the local pool; the same deals and
seeds, so its "all" row is the report's ADP).
"""

from __future__ import annotations

import argparse
import sys
import time

from agents.registry import check_specs, spec_files
from doudizhu_arena.arena import (
    DUPLICATE_MODES,
    MAX_FILE_DEALS,
    TooManyDeals,
    format_estimate,
    format_report,
    load_deals,
    make_deals,
    one_thread,
    report_json,
    run_arena,
    save_deals,
    seatings,
)
from doudizhu_arena.cluster import ClusterUnreachable
from doudizhu_arena.evaluation import paired_with_reference
from doudizhu_arena.options import add_fixed_landlord, add_play_options, exit_error, prepare_backend
from doudizhu_arena.ray_arena import chunk_pool
from doudizhu_env.checks import check_seed
from doudizhu_env.files import atomic_write, check_outputs
from doudizhu_env.rules import Rules


def build_parser() -> argparse.ArgumentParser:
    """The command-line options."""
    p = argparse.ArgumentParser(prog="python -m doudizhu_arena.evaluate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--landlord", help="agent spec of the first position (landlord when fixed)")
    p.add_argument("--farmers", help="agent spec of the two other positions")
    p.add_argument("--seats", nargs=3, metavar="AGENT", help="three agent specs, positions 0 1 2")
    p.add_argument("--games", type=int, default=1000, help="number of deals (default 1000)")
    p.add_argument("--rules", default="standard", help="rules preset: standard or douzero")
    add_fixed_landlord(p)
    p.add_argument("--duplicate", choices=DUPLICATE_MODES, default="rotate")
    add_play_options(p, chunk_size=200)
    p.add_argument("--deals", help="load deals from this JSON file instead of shuffling")
    p.add_argument("--save-deals", help="write the deals played to this JSON file (replaced if it exists)")
    p.add_argument("--json", help="write the report to this JSON file (replaced if it exists)")
    p.add_argument("--record", help="append every game to this JSON Lines file (docs/records.md)")
    p.add_argument("--paired", action="store_true",
                   help="also the landlord's agent's points minus the farmers' agent's in the same seat "
                        "of the same deals (overall, both landlords, both farmers); needs --landlord and "
                        "--farmers")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def check_paired(args) -> None:
    """``--paired`` needs a line-up ``A, REF, REF`` rotated over shuffled deals, played locally."""
    if not args.paired:
        return
    if not (args.landlord and args.farmers) or args.seats:
        raise ValueError("--paired compares the --landlord agent with the --farmers agent; expected "
                         "--landlord A --farmers REF (not --seats)")
    for bad, why in ((args.duplicate != "rotate", f"--duplicate {args.duplicate}"),
                     (bool(args.deals), "--deals"), (args.backend != "local", f"--backend {args.backend}")):
        if bad:
            raise ValueError(f"--paired plays rotated shuffled deals on the local pool; expected no {why}")
    if args.games is not None and args.games < 2:
        raise ValueError(f"--paired needs --games 2 or more (its 95% intervals are over deals), got "
                         f"{args.games}")


def format_paired(paired: dict, agent: str, reference: str) -> str:
    """The paired differences as lines of text."""
    lines = [f"paired with {reference}: {agent}'s points minus {reference}'s in the same seat of the same "
             "deal (mean per deal, 95% interval)"]
    for name, row in paired.items():
        lines.append(f"  {name:<13} {format_estimate(row)}   ({row['pairs']:,} games)")
    return "\n".join(lines)


#: The most deals one evaluation plays (they are all dealt before the first game).
MAX_DEALS = 10_000_000


def resolve_args(args) -> tuple[list[str], Rules]:
    """The line-up and the rules of the parsed options."""
    if args.seats:
        lineup = list(args.seats)
    elif args.landlord and args.farmers:
        lineup = [args.landlord, args.farmers, args.farmers]
    else:
        raise ValueError("no line-up: give --landlord and --farmers, or --seats A B C")
    for name in ("games", "workers", "chunk_size"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.games is not None and args.games > MAX_DEALS:
        raise ValueError(f"--games must be at most {MAX_DEALS:,} (every deal is made before the first game), "
                         f"got {args.games:,}; run several evaluations with different --seed instead")
    if args.save_deals and not args.deals and args.games is not None and args.games > MAX_FILE_DEALS:
        raise ValueError(f"--save-deals writes at most {MAX_FILE_DEALS:,} deals (the most --deals reads "
                         f"back), got --games {args.games:,}")
    rules = Rules.preset(args.rules)
    if args.fixed_landlord:
        rules = Rules.preset(args.rules, bidding=False)
    return lineup, rules


def read_deals(path: str) -> list:
    """The deals of a ``--save-deals`` file, or ``ValueError`` saying what is wrong with it."""
    try:
        deals = load_deals(path)
    except TooManyDeals as err:
        raise ValueError(f"--deals {path!r}: {err}") from err
    except MemoryError:
        raise ValueError(f"--deals {path!r}: not enough memory to read it; expected a smaller deals file "
                         "(split it)") from None
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise ValueError(f"--deals {path!r} is not a deals file written by --save-deals: {err}") from err
    if not deals:
        raise ValueError(f"--deals {path!r} holds no deals; expected at least one")
    return deals


def main(argv=None) -> dict:
    """Run the evaluation, print the table, write the files asked for; returns the report."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:  # a bad option, agent or file: one line naming it (and what was expected), exit status 2
        lineup, rules = resolve_args(args)
        check_paired(args)
        seatings(lineup, args.duplicate)  # a line-up the duplicate scheme cannot seat: now, not later
        check_seed(args.seed, "--seed")
        outputs = {f"--{o.replace('_', '-')}": getattr(args, o) for o in ("json", "record", "save_deals")}
        check_outputs(outputs, inputs=[args.deals, *spec_files(lineup)])  # now, not after every game
        one_thread()
        deals = read_deals(args.deals) if args.deals else make_deals(args.seed, args.games, rules,
                                                                       args.chunk_size)
        check_specs(lineup, rules)
        prepare_backend(args)
    except (ValueError, OSError, ImportError) as err:
        exit_error(parser, err)
    if args.save_deals:
        save_deals(deals, args.save_deals)
    start = time.perf_counter()
    try:
        with chunk_pool(args.backend, args.ray_address, args.workers) as pool:
            report = run_arena(lineup, rules=rules, duplicate=args.duplicate, seed=args.seed, deals=deals,
                               workers=args.workers or 1, chunk_size=args.chunk_size,
                               progress=not args.no_progress, record=args.record, pool=pool)
    except ClusterUnreachable as err:
        exit_error(parser, err, "--ray-address")
    elapsed = time.perf_counter() - start
    report["timing"] = {"seconds": elapsed, "deals_per_s": len(deals) / elapsed,
                        "games_per_s": report["config"]["games"] / elapsed,
                        "decisions_per_s": report["decisions"] / elapsed, "workers": args.workers,
                        "backend": args.backend}
    print(f"line-up {lineup}  rules {'bidding' if rules.bidding else 'fixed landlord'}  "
          f"{len(deals)} deals x {report['config']['games'] // max(len(deals), 1)} seatings  "
          f"{elapsed:.1f}s ({report['timing']['deals_per_s']:.1f} deals/s)")
    print(format_report(report))
    if args.paired:
        print(f"paired: {args.farmers} in the seats of {args.landlord} on the same {len(deals)} deals ...",
              flush=True)
        report["paired"] = paired_with_reference(args.landlord, args.farmers, rules, len(deals), args.seed,
                                                 args.workers or 1, args.chunk_size)
        print(format_paired(report["paired"], args.landlord, args.farmers))
    if args.json:
        atomic_write(args.json, report_json(report))
    return report


if __name__ == "__main__":
    main(sys.argv[1:])
