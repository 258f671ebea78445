"""Learning curve of DMC self-play: the agent's WP / ADP against the baselines after N minutes of training.

The targets of the project (on a 2-core machine, default config): after 10
minutes the agent beats random in every role and rlcard's rule agent
overall; after 60 minutes it beats RuleAgent with a fixed landlord as
landlord and as each farmer, and overall with bidding.

Train with kept checkpoints, then evaluate the checkpoints nearest to the
minute marks (duplicate deals, both modes, 95% intervals)::

    python -m benchmarks.learning --train --minutes 10 30 60 --deals 2000 --json learning.json
    python -m benchmarks.learning --run runs/long --minutes 10 30 60 --deals 2000 --plot learning.png

``--train`` runs ``python -m train.dmc --config configs/default.yaml`` for
the last minute mark with ``checkpoint_minutes`` of the smallest gap and
``keep_checkpoints: true`` into ``runs/learning``. Each row gives the
checkpoint's minutes and frames and, per baseline and mode, the agent's
WP and ADP overall, as landlord and as farmer (each ``mean ± half-interval``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os

import torch

from agents.arena import one_thread
from agents.checkpoint import load_model, read_checkpoint
from agents.evaluation import evaluate_against

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


def evaluate_checkpoint(path: str, opponents: list[str], deals: int, seed: int, workers: int) -> dict:
    """``{baseline/mode: figures}`` of the greedy agent of ``path`` (see :mod:`agents.evaluation`)."""
    rules = load_model(path).rules
    report = evaluate_against(f"dmc:{path}", rules, opponents, deals, seed=seed, workers=workers)
    return {k: {f: v for f, v in figs.items() if f != "table"} for k, figs in report.items()}


def format_rows(rows: list[dict]) -> str:
    """One Markdown line per (checkpoint, baseline, mode)."""
    lines = ["| minutes | frames | against | WP | ADP | ADP as landlord | ADP as farmer | landlord share |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for match, f in r["results"].items():
            def pm(key, fmt="+.3f", f=f):
                return f"{f[key]:{fmt}} ± {f[key + '_ci']:.3f}" if key in f else "-"

            share = f"{f['landlord_share']:.1%}" if "landlord_share" in f else "-"
            lines.append(f"| {r['minutes']:.1f} | {r['frames']:,} | {match} | {pm('wp', '.3f')} | "
                         f"{pm('adp')} | "
                         f"{pm('adp_landlord')} | {pm('adp_farmer')} | {share} |")
    return "\n".join(lines)


def plot(rows: list[dict], path: str) -> None:
    """ADP as landlord and as farmer over minutes of training, one line per baseline and mode."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for match in rows[0]["results"]:
        for role in ("landlord", "farmer"):
            key = f"adp_{role}"
            points = [(r["minutes"], r["results"][match][key]) for r in rows if key in r["results"][match]]
            if points:
                ax.plot(*zip(*points, strict=True), marker="o", label=f"{match} as {role}")
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("minutes of training (this machine)")
    ax.set_ylabel("ADP of the trained agent")
    ax.set_title("DMC self-play: ADP per role against the baselines")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def train_run(run_dir: str, minutes: list[float]) -> None:
    """Train the default config for the last minute mark, keeping a checkpoint at every mark's gap."""
    from train.config import load_config
    from train.dmc import train

    marks = sorted(minutes)
    gap = min(b - a for a, b in zip([0.0] + marks[:-1], marks, strict=True))
    out_dir, name = os.path.split(os.path.abspath(run_dir))
    cfg = load_config(DEFAULT_CONFIG, {"out_dir": out_dir, "run_name": name, "max_minutes": marks[-1],
                                       "checkpoint_minutes": gap, "keep_checkpoints": True,
                                       "eval_deals": 0})
    train(cfg)


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", default="runs/learning", help="a train.dmc run folder with kept checkpoints")
    parser.add_argument("--train", action="store_true", help="train that run first (default config)")
    parser.add_argument("--minutes", type=float, nargs="+", default=[10, 30, 60])
    parser.add_argument("--opponents", nargs="+", default=["random", "rlcard", "rule"])
    parser.add_argument("--deals", type=int, default=2000, help="duplicate deals per baseline and mode")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--plot", help="write a PNG of ADP per role over minutes")
    parser.add_argument("--json", help="write the rows as JSON")
    args = parser.parse_args(argv)
    if args.train:
        train_run(args.run, args.minutes)
    one_thread()
    torch.set_num_threads(1)
    checkpoints = kept_checkpoints(args.run)
    rows = []
    for mark in args.minutes:
        minutes, frames, path = nearest(checkpoints, mark)
        print(f"== {mark:g} min: {path} ({minutes:.1f} min, {frames:,} frames)", flush=True)
        results = evaluate_checkpoint(path, args.opponents, args.deals, args.seed, args.workers)
        rows.append({"mark": mark, "minutes": minutes, "frames": frames, "path": path, "results": results})
        print(format_rows(rows[-1:]), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=2)
    print(format_rows(rows))
    if args.plot:
        plot(rows, args.plot)
        print(f"plot: {args.plot}")
    return rows


if __name__ == "__main__":
    main()
