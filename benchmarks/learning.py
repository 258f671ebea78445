"""Learning curve of self-play (DMC or PPO): WP / ADP against the baselines after N minutes of training.

The targets of the project (on a 2-core machine, default config): after 10
minutes the agent beats random in every role and rlcard's rule agent
overall; after 60 minutes it beats RuleAgent with a fixed landlord as
landlord and as each farmer, and overall with bidding.

Train with kept checkpoints, then evaluate the checkpoints nearest to the
minute marks (duplicate deals, both modes, 95% intervals)::

    python -m benchmarks.learning --train --minutes 10 30 60 --deals 2000 --json learning.json
    python -m benchmarks.learning --run runs/long --minutes 10 30 60 --deals 2000 --plot learning.png

``--train`` runs ``python -m train.run --config configs/default.yaml`` (or
``--config``, e.g. ``configs/ppo.yaml``) for the last minute mark with
``checkpoint_minutes`` of the smallest gap and ``keep_checkpoints: true``
into ``runs/learning``. A run of either learner can be evaluated: a
checkpoint plays as the learner that wrote it (Q-greedy or policy-greedy). Each row gives the
checkpoint's minutes and frames and, per baseline and mode, the agent's
WP and ADP overall, as landlord and as farmer (each ``mean ± half-interval``).

A role's ADP is not a comparison with the baseline: with a fixed landlord,
RuleAgent's own landlord scores about -0.3 against its farmers (the role's
points are doubled and the landlord loses a little more often), so an agent's
landlord at -0.2 plays *better* than RuleAgent's. ``--paired`` adds, per
baseline, the fixed-landlord figures that answer "better than the baseline in
this role?": the agent's points minus the baseline's own in the same seats of
the same deals (:func:`doudizhu_arena.evaluation.paired_with_reference`),
as landlord and as farmer (``paired_landlord``, ``paired_farmer``; the JSON
also holds each farmer seat's beside a baseline partner, ``paired_landlord_down`` and
``paired_landlord_up``, and the agent's two copies as the farmers, ``paired_farmer_team``)::

    python -m benchmarks.learning --run runs/long --every --opponents rule --deals 4000 --paired
"""

from __future__ import annotations

import argparse
import glob
import os

import torch

from agents.checkpoint import load_model, read_checkpoint
from benchmarks import write_json, write_png
from doudizhu_arena.arena import mode_rules
from doudizhu_arena.evaluation import evaluate_against, paired_with_reference
from doudizhu_arena.options import (
    check_count,
    check_deals,
    check_outputs_and_agents,
    check_positive,
    command_errors,
)
from doudizhu_env.checks import check_seed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CONFIG = os.path.join(ROOT, "configs", "default.yaml")


def kept_checkpoints(run_dir: str) -> list[tuple[float, int, str]]:
    """(minutes, frames, path) of every kept checkpoint of a run, in order."""
    out = []
    for path in sorted(glob.glob(os.path.join(run_dir, "checkpoints", "*.pt"))):
        data = read_checkpoint(path)
        out.append((float(data.get("minutes", 0.0)), int(data["frames"]), path))
    if not out:
        raise SystemExit(f"no kept checkpoints in {run_dir}/checkpoints: train with --keep-checkpoints true")
    return out


def nearest(checkpoints: list[tuple[float, int, str]], minutes: float) -> tuple[float, int, str]:
    """The kept checkpoint whose training time is closest to ``minutes``."""
    return min(checkpoints, key=lambda c: abs(c[0] - minutes))


def evaluate_checkpoint(path: str, opponents: list[str], deals: int, seed: int, workers: int,
                        paired: bool = False) -> dict:
    """``{baseline/mode: figures}`` of the greedy agent of ``path`` (see :mod:`doudizhu_arena.evaluation`);
    with ``paired``, each baseline's fixed-landlord figures also hold ``paired_landlord``,
    ``paired_farmer``, ``paired_landlord_down``, ``paired_landlord_up`` and ``paired_farmer_team`` (with
    ``*_ci``): the agent's points minus the baseline's in the same seats of the same deals (the team:
    two copies of the agent as the farmers, :func:`~doudizhu_arena.evaluation.paired_with_reference`)."""
    rules = load_model(path).rules
    report = evaluate_against(f"dmc:{path}", rules, opponents, deals, seed=seed, workers=workers)
    out = {k: {f: v for f, v in figs.items() if f != "table"} for k, figs in report.items()}
    for opponent in opponents if paired else []:
        diffs = paired_with_reference(f"dmc:{path}", opponent, mode_rules("fixed_landlord", rules), deals,
                                      seed=seed, workers=workers)
        for role in ("landlord", "farmer", "landlord_down", "landlord_up", "farmer_team"):
            out[f"{opponent}/fixed_landlord"] |= {f"paired_{role}": diffs[role]["mean"],
                                                  f"paired_{role}_ci": diffs[role]["ci"]}
    return out


def format_rows(rows: list[dict]) -> str:
    """One Markdown line per (checkpoint, baseline, mode)."""
    paired = any("paired_landlord" in f for r in rows for f in r["results"].values())
    head = "| minutes | frames | against | WP | ADP | ADP as landlord | ADP as farmer | landlord share |"
    if paired:
        head += " landlord minus the baseline's (paired) | farmer minus the baseline's (paired) |"
    lines = [head, "|---|---|---|---|---|---|---|---|" + ("---|---|" if paired else "")]
    for r in rows:
        for match, f in r["results"].items():
            def pm(key, fmt="+.3f", f=f):
                return f"{f[key]:{fmt}} ± {f[key + '_ci']:.3f}" if key in f else "-"

            share = f"{f['landlord_share']:.1%}" if "landlord_share" in f else "-"
            line = (f"| {r['minutes']:.1f} | {r['frames']:,} | {match} | {pm('wp', '.3f')} | {pm('adp')} | "
                    f"{pm('adp_landlord')} | {pm('adp_farmer')} | {share} |")
            lines.append(line + (f" {pm('paired_landlord')} | {pm('paired_farmer')} |" if paired else ""))
    return "\n".join(lines)


#: The figures drawn in each panel of the plot, with their colours (the same in every panel).
CURVES = (("fixed_landlord", "adp", "fixed landlord, overall", "tab:blue"),
          ("fixed_landlord", "adp_landlord", "fixed landlord, as landlord", "tab:orange"),
          ("fixed_landlord", "adp_farmer", "fixed landlord, as farmer", "tab:green"),
          ("bidding", "adp", "with bidding, overall", "tab:purple"),
          ("fixed_landlord", "paired_landlord", "fixed landlord, landlord minus the baseline's", "tab:red"),
          ("fixed_landlord", "paired_farmer", "fixed landlord, farmer minus the baseline's", "tab:olive"))


def plot(rows: list[dict], path: str) -> None:
    """ADP over minutes of training with 95% intervals: one panel per baseline, the same curves in
    each (:data:`CURVES`; the paired ones where ``--paired`` measured them)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    baselines = list(dict.fromkeys(match.split("/")[0] for match in rows[0]["results"]))
    fig, axes = plt.subplots(1, len(baselines), figsize=(4.2 * len(baselines), 4), squeeze=False)
    for ax, baseline in zip(axes[0], baselines, strict=True):
        for mode, key, label, colour in CURVES:
            match = f"{baseline}/{mode}"
            points = [(r["minutes"], r["results"][match][key], r["results"][match][key + "_ci"])
                      for r in rows if key in r["results"].get(match, {})]
            if points:
                x, y, ci = zip(*points, strict=True)
                ax.errorbar(x, y, yerr=ci, marker="o", capsize=3, color=colour, label=label)
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_title(f"against {baseline}")
        ax.set_xlabel("minutes of training (this machine)")
    axes[0][0].set_ylabel("ADP of the trained agent (95% interval)")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    write_png(path, fig, dpi=110)


def parity(rows: list[dict], match: str = "rule/fixed_landlord") -> dict | None:
    """Minutes and frames at which the agent's ADP in ``match`` first reaches 0: linear between the
    last checkpoint below 0 and the first at or above it (the first checkpoint's own figures when it
    is already there); None when no checkpoint reaches 0."""
    prev = None
    for r in sorted(rows, key=lambda r: r["minutes"]):
        adp = r["results"][match]["adp"]
        if adp >= 0:
            if prev is None:
                return {"minutes": r["minutes"], "frames": r["frames"], "interpolated": False}
            t = -prev["results"][match]["adp"] / (adp - prev["results"][match]["adp"])
            return {key: prev[key] + t * (r[key] - prev[key]) for key in ("minutes", "frames")} | {
                "interpolated": True}
        prev = r
    return None


def train_run(run_dir: str, minutes: list[float], config: str = DEFAULT_CONFIG) -> None:
    """Train ``config`` for the last minute mark, keeping a checkpoint at every mark's gap."""
    from train.config import load_config
    from train.run import train

    marks = sorted(minutes)
    gap = min(b - a for a, b in zip([0.0] + marks[:-1], marks, strict=True))
    out_dir, name = os.path.split(os.path.abspath(run_dir))
    cfg = load_config(config, {"out_dir": out_dir, "run_name": name, "max_minutes": marks[-1],
                                       "checkpoint_minutes": gap, "keep_checkpoints": True,
                                       "eval_deals": 0})
    train(cfg)


def run_files(run_dir: str) -> list[str]:
    """The files of a run folder and of its ``checkpoints/`` (the inputs an output must not replace)."""
    return [p for folder in (run_dir, os.path.join(run_dir, "checkpoints")) if os.path.isdir(folder)
            for p in sorted(glob.glob(os.path.join(folder, "*"))) if os.path.isfile(p)]


def check_args(args) -> None:
    """Every option, output and opponent before any training or game (one-line ``ValueError``s)."""
    for mark in args.minutes:
        check_positive(mark, "--minutes")
    check_deals(args.deals, low=2)  # the intervals need two deals
    check_count(args.workers, "--workers")
    check_seed(args.seed, "--seed")
    if args.train:  # the run's own files are written there: no output among them
        run = os.path.abspath(args.run)
        for option in ("json", "plot"):
            path = getattr(args, option)
            if path and os.path.abspath(path).startswith(run + os.sep):
                raise ValueError(f"--{option}: cannot write {path!r}: it is inside the --run folder that "
                                 "--train writes; expected a file outside it")
    inputs = [args.config] if args.train else []
    check_outputs_and_agents({"--json": args.json, "--plot": args.plot}, args.opponents, [None],
                             inputs=inputs + run_files(args.run))


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.learning",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--run", default="runs/learning", help="a train.run run folder with kept checkpoints")
    parser.add_argument("--train", action="store_true", help="train that run first (with --config)")
    parser.add_argument("--config", default=DEFAULT_CONFIG, help="the training config of --train")
    parser.add_argument("--minutes", type=float, nargs="+", default=[10, 30, 60])
    parser.add_argument("--every", action="store_true",
                        help="evaluate every kept checkpoint, not only those nearest to --minutes")
    parser.add_argument("--opponents", nargs="+", default=["random", "rlcard", "rule"])
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals per baseline and mode")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--paired", action="store_true",
                        help="also each role's points minus the baseline's own in the same seats of the same "
                             "deals (fixed landlord): is the agent better than the baseline in that role?")
    parser.add_argument("--plot", help="write a PNG of ADP per role over minutes")
    parser.add_argument("--json", help="write the rows as JSON")
    args = parser.parse_args(argv)
    with command_errors(parser):
        check_args(args)
    if args.train:
        from train.config import ConfigError

        try:
            train_run(args.run, args.minutes, args.config)
        except ConfigError as err:
            parser.error(str(err))
    torch.set_num_threads(1)
    checkpoints = kept_checkpoints(args.run)
    rows = []
    chosen = checkpoints if args.every else [nearest(checkpoints, mark) for mark in args.minutes]
    for mark, (minutes, frames, path) in zip(args.minutes if not args.every else [c[0] for c in chosen],
                                             chosen, strict=True):
        print(f"== {mark:g} min: {path} ({minutes:.1f} min, {frames:,} frames)", flush=True)
        results = evaluate_checkpoint(path, args.opponents, args.deals, args.seed, args.workers, args.paired)
        rows.append({"mark": mark, "minutes": minutes, "frames": frames, "path": path, "results": results})
        print(format_rows(rows[-1:]), flush=True)
        if args.json:
            write_json(args.json, rows)
    print(format_rows(rows))
    if any("rule/fixed_landlord" in r["results"] for r in rows):
        at = parity(rows)
        print("parity with RuleAgent (fixed landlord, ADP 0): " + (
            f"{at['frames']:,.0f} frames, {at['minutes']:.1f} minutes" if at else "not reached"))
    if args.plot:
        plot(rows, args.plot)
        print(f"plot: {args.plot}")
    return rows


if __name__ == "__main__":
    main()
