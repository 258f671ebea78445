"""The search agent's strength against its budget, and its cost per decision.

For each budget (``WxCxS``: worlds x candidates x samples) and inference mode,
a duplicate match of ``search:BASE`` against ``--opponent`` (the line-up
``search, opponent, opponent`` in its 3 rotations, fixed landlord unless
``--bidding``) gives WP and ADP with 95% intervals per role; the same budget
is then timed one decision at a time (one game per call, one thread) on
positions of RuleAgent self-play, the way a person at the table meets it::

    python -m benchmarks.search --base rule --budgets 4x4x16 16x8x64 32x12x128 \\
        --inference moves none --deals 500 --workers 2 --json docs/search.json

prints a Markdown table (``docs/search.md`` has the committed figures).
``--latency-only`` skips the matches.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import numpy as np

from agents.registry import make_agent
from agents.rule import RuleAgent
from benchmarks import write_json, write_png
from doudizhu_arena.arena import REPORT_ROLES, run_arena
from doudizhu_arena.options import check_count, check_deals, check_outputs_and_agents, command_errors
from doudizhu_env import engine
from doudizhu_env.actions import action_table
from doudizhu_env.checks import MAX_SEED, check_seed
from doudizhu_env.driver import drive
from doudizhu_env.engine import PLAY, ROLE_NAMES
from doudizhu_env.observation import seat_view
from doudizhu_env.rules import Rules


def parse_budget(text: str) -> tuple[int, int, int]:
    """``"16x8x64"`` -> (worlds, candidates, samples)."""
    try:
        worlds, cands, samples = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a budget is WORLDSxCANDIDATESxSAMPLES, e.g. 16x8x64; "
                                         f"got {text!r}") from None
    return worlds, cands, samples


def spec_of(base: str, budget: tuple[int, int, int], inference: str, rollout: str | None) -> str:
    worlds, cands, samples = budget
    samples = samples if inference != "none" else worlds
    spec = f"search:{base},worlds={worlds},candidates={cands},samples={samples},inference={inference}"
    return spec + (f",rollout={rollout}" if rollout else "")


def decision_positions(rules: Rules, num: int, seed: int) -> list[engine.State]:
    """``num`` one-game seat views of RuleAgent self-play with a real choice (not forced, no going out)."""
    rule, table = RuleAgent(), action_table(rules)
    state = engine.reset(np.random.default_rng(seed), max(8, num // 4), rules)
    out: list[engine.State] = []
    for turn in drive(state, np.zeros((state.num_games, 3), np.int64), [rule]):
        view = seat_view(turn.before, np.flatnonzero(turn.live))
        ids, offsets = engine.legal_actions(view)
        own = view.hands[np.arange(view.num_games), view.to_act].sum(axis=1)
        for i in np.flatnonzero((view.phase == PLAY) & (np.diff(offsets) > 1)):
            if not np.any(table.num_cards[ids[offsets[i] : offsets[i + 1]]] == own[i]):
                out.append(engine.take(view, [i]))
        if len(out) >= num:
            break
    return out[:num]


def latency(spec: str, rules: Rules, positions: list[engine.State]) -> dict:
    """Seconds per decision (median, p90) deciding one game at a time."""
    agent = make_agent(spec, rules, seed=0)
    times = []
    for view in positions:
        start = time.perf_counter()
        agent.act(view)
        times.append(time.perf_counter() - start)
    times = np.array(times)
    return {"median_s": float(np.median(times)), "p90_s": float(np.quantile(times, 0.9)),
            "decisions_per_s": float(len(times) / times.sum())}


def strength(spec: str, opponent: str, rules: Rules, deals: int, seed: int, workers: int) -> dict:
    """WP / ADP of ``spec`` against ``opponent`` per role, and the match's decisions/s."""
    start = time.perf_counter()
    report = run_arena((spec, opponent, opponent), deals, rules, seed=seed, workers=workers, chunk_size=50,
                       progress=True)
    seconds = time.perf_counter() - start
    entry = report["agents"][spec]
    out = {"seconds": seconds}
    for role in REPORT_ROLES:
        if entry[role]["games"]:
            for key in ("wp", "adp"):
                out[f"{key}_{role}"] = [entry[role][key]["mean"], entry[role][key]["ci"]]
    return out


def _figure(s: dict, key: str, digits: int = 3, signed: bool = False) -> str:
    if key not in s:
        return "-"
    mean, ci = s[key]
    return f"{mean:{'+' if signed else ''}.{digits}f} ± {ci:.{digits}f}"


def format_rows(rows: list[dict]) -> str:
    """Markdown: one line per budget and inference mode."""
    head = ("| budget (W x C x S) | inference | WP | ADP | ADP landlord | ADP down | ADP up "
            "| median s | p90 s |")
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        s, lat = r.get("strength", {}), r["latency"]
        adp = [_figure(s, f"adp_{role}", 2, True) for role in ("all", *ROLE_NAMES)]
        lines.append(f"| {r['budget']} | {r['inference']} | {_figure(s, 'wp_all')} | {' | '.join(adp)} | "
                     f"{lat['median_s']:.3f} | {lat['p90_s']:.3f} |")
    return "\n".join(lines)


def plot(rows: list[dict], path: str, title: str) -> None:
    """WP against the budget's worlds, one line per inference mode, 95% intervals as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    labels = {"moves": "inferred worlds (play)", "all": "inferred worlds (bids, doubles, play)",
              "none": "uniform worlds"}
    for inference, marker in (("moves", "o"), ("all", "^"), ("none", "s")):
        mine = sorted((r for r in rows if r["inference"] == inference and "strength" in r),
                      key=lambda r: r["latency"]["median_s"])
        if mine:
            x = [r["latency"]["median_s"] for r in mine]
            wp = np.array([r["strength"]["wp_all"] for r in mine])
            ax.errorbar(x, wp[:, 0], yerr=wp[:, 1], marker=marker, capsize=3,
                        label=labels[inference])
            for xi, yi, r in zip(x, wp[:, 0], mine, strict=True):
                ax.annotate(r["budget"], (xi, yi), textcoords="offset points", xytext=(4, -10), fontsize=7)
    ax.axhline(0.5, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%.2f"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%.2f"))
    ax.set_xlabel("median seconds per decision (one thread)")
    ax.set_ylabel("WP")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    write_png(path, fig)
    plt.close(fig)


def read_runs(paths: list[str]) -> list[dict]:
    """The figures of earlier ``--json`` files, or a one-line ``ValueError`` naming the file."""
    from doudizhu_env.files import check_input

    runs = []
    for path in paths:
        try:
            check_input(path, "--merge", max_bytes=100_000_000)
            with open(path) as f:
                run = json.load(f)
            if not (isinstance(run, dict) and isinstance(run.get("rows"), list)
                    and all(k in run for k in ("base", "opponent", "bidding"))):
                raise ValueError("it holds no rows of benchmarks.search")
        except (OSError, ValueError, RecursionError) as err:
            raise ValueError(f"--merge {path!r} is not a --json file of benchmarks.search: {err}") from None
        runs.append(run)
    return runs


def _merge(args, runs: list[dict]) -> dict:
    """The rows of earlier runs as one table, JSON and plot."""
    out = {**runs[0], "rows": [row for run in runs for row in run["rows"]]}
    print(format_rows(out["rows"]))
    if args.json:
        write_json(args.json, out)
    if args.plot:
        mode = "with bidding" if out["bidding"] else "fixed landlord"
        plot(out["rows"], args.plot, f"search:{out['base']} against {out['opponent']}, {mode}")
    return out


#: The most positions timed per budget (each kept as a one-game state).
MAX_POSITIONS = 100_000


def check_args(args) -> Rules:
    """Every option, output and agent (each budget's search agent included) before the first game;
    the rules of the matches."""
    inputs = list(args.merge or [])
    if args.merge:
        check_outputs_and_agents({"--json": args.json, "--plot": args.plot}, inputs=inputs)
        return Rules.preset("standard")
    check_deals(args.deals, low=2)  # the intervals need two deals
    check_count(args.positions, "--positions", 1, MAX_POSITIONS, "each is kept as a one-game state")
    check_count(args.workers, "--workers")
    check_seed(args.seed, "--seed")
    if args.seed == MAX_SEED:  # the timed positions are seeded seed + 1
        raise ValueError(f"--seed must be at most {MAX_SEED - 1} (the timed positions use seed + 1)")
    rules = Rules.preset(args.rules)
    rules = rules if args.bidding else dataclasses.replace(rules, bidding=False)
    specs = [spec_of(args.base, b, i, args.rollout) for b in args.budgets for i in args.inference]
    check_outputs_and_agents({"--json": args.json, "--plot": args.plot}, [*specs, args.opponent], [rules])
    return rules


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(prog="python -m benchmarks.search", description=__doc__.splitlines()[0])
    p.add_argument("--base", default="rule", help="base agent spec (default rule)")
    p.add_argument("--rollout", help="rollout agent spec (default: the base)")
    p.add_argument("--opponent", default="rule")
    p.add_argument("--budgets", nargs="+", type=parse_budget, default=[(16, 8, 64)])
    p.add_argument("--inference", nargs="+", choices=("moves", "all", "none"),
                   default=["moves", "none"])
    p.add_argument("--deals", type=int, default=500)
    p.add_argument("--bidding", action="store_true", help="with bidding (default: fixed landlord)")
    p.add_argument("--rules", default="standard")
    p.add_argument("--positions", type=int, default=60, help="decisions timed per budget")
    p.add_argument("--latency-only", action="store_true")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=2027)
    p.add_argument("--json", help="write the figures to this JSON file")
    p.add_argument("--plot", help="draw WP against the cost per decision to this PNG file")
    p.add_argument("--merge", nargs="+", metavar="JSON", help="play nothing: the rows of these earlier "
                   "--json files, as one table (and --json / --plot)")
    args = p.parse_args(argv)
    with command_errors(p):
        rules = check_args(args)
        runs = read_runs(args.merge) if args.merge else []
    if args.merge:
        return _merge(args, runs)
    positions = decision_positions(rules, args.positions, args.seed + 1)
    rows = []
    for budget in args.budgets:
        for inference in args.inference:
            spec = spec_of(args.base, budget, inference, args.rollout)
            row = {"spec": spec, "budget": "x".join(map(str, budget)), "inference": inference,
                   "latency": latency(spec, rules, positions)}
            if not args.latency_only:
                row["strength"] = strength(spec, args.opponent, rules, args.deals, args.seed, args.workers)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(format_rows(rows))
    out = {"base": args.base, "rollout": args.rollout, "opponent": args.opponent, "deals": args.deals,
           "bidding": args.bidding, "seed": args.seed, "rows": rows}
    if args.json:
        write_json(args.json, out)
        print(f"figures: {args.json}")
    if args.plot:
        mode = "with bidding" if args.bidding else "fixed landlord"
        plot(rows, args.plot, f"search:{args.base} against {args.opponent}, {mode}, {args.deals} deals")
        print(f"plot: {args.plot}")
    return out


if __name__ == "__main__":
    main()
