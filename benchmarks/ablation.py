"""Ablation of the DMC training choices: each variant trained on the same budget, evaluated on the same deals.

Every variant is ``configs/default.yaml`` with a few overrides, trained with
``num_actors: 0`` (one actor alternating with the learner in one process, so
no variant gets more CPU than another from the scheduler) for the same
minutes and seed, then evaluated against RuleAgent on the same duplicate
deals, with bidding and with a fixed landlord. A faster variant makes more
frames in its minutes: that is part of what is measured.

Run (from the repository root)::

    python -m benchmarks.ablation --minutes 6 --deals 500 --json ablation.json
    python -m benchmarks.ablation --variants old default --minutes 0.5 --deals 50

Prints one row per variant: frames, minutes, and the agent's WP / ADP with
95% intervals, overall with bidding (and its landlord share), and with a
fixed landlord overall, as landlord and as farmer.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from agents.checkpoint import load_model, read_checkpoint
from agents.dmc import DMCAgent
from agents.evaluation import evaluate_against
from train.config import load_config
from train.dmc import train

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CONFIG = os.path.join(ROOT, "configs", "default.yaml")

#: Variant name -> overrides of the default config.
VARIANTS: dict[str, dict] = {
    "old": {"objective": "adp", "fixed_landlord_share": 0.0, "model.history": "lstm"},
    "fixed_share": {"objective": "adp", "model.history": "lstm"},
    "logadp": {"model.history": "lstm"},
    "default": {},
    "deep_head": {"model.head_layers": 3},
    "wp": {"objective": "wp"},
}


def run_variant(name: str, overrides: dict, minutes: float, deals: int, out_dir: str, seed: int) -> dict:
    """Train one variant for ``minutes`` and evaluate it against RuleAgent on ``deals`` deals."""
    cfg = load_config(DEFAULT_CONFIG, {
        "run_name": f"ablation-{name}", "out_dir": out_dir, "seed": seed, "num_actors": 0,
        "total_frames": 0, "max_minutes": minutes, "eval_deals": 0, "log_seconds": 30,
        "checkpoint_minutes": 1e6, **overrides,
    })
    start = time.monotonic()
    train(cfg)
    minutes = (time.monotonic() - start) / 60
    path = os.path.join(out_dir, cfg.run_name, "checkpoint.pt")
    model = load_model(path)
    report = evaluate_against(DMCAgent(model), model.rules, ["rule"], deals, seed=seed + 1000)
    row = {"variant": name, "overrides": overrides, "frames": read_checkpoint(path)["frames"],
           "minutes": minutes}
    for key, figures in report.items():
        row[key] = {k: v for k, v in figures.items() if k != "table"}
    return row


def format_rows(rows: list[dict]) -> str:
    """The ablation table (Markdown)."""
    head = ("| variant | frames | minutes | bidding WP | bidding ADP | landlord share | "
            "fixed WP | fixed ADP | ADP as landlord | ADP as farmer |")
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for r in rows:
        b, f = r["rule/bidding"], r["rule/fixed_landlord"]

        def pm(fig, key, fmt="+.3f"):
            return f"{fig[key]:{fmt}} ± {fig[key + '_ci']:.3f}"

        share = b.get("landlord_share", float("nan"))
        lines.append(
            f"| {r['variant']} | {r['frames']:,} | {r['minutes']:.1f} | "
            f"{pm(b, 'wp', '.3f')} | {pm(b, 'adp')} | {share:.1%} | "
            f"{pm(f, 'wp', '.3f')} | {pm(f, 'adp')} | {pm(f, 'adp_landlord')} | {pm(f, 'adp_farmer')} |")
    return "\n".join(lines)


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--minutes", type=float, default=6.0, help="training minutes per variant")
    parser.add_argument("--deals", type=int, default=500, help="evaluation deals per mode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", default="runs", help="where the variants' runs go")
    parser.add_argument("--json", help="write the rows as JSON")
    args = parser.parse_args(argv)
    rows = []
    for name in args.variants:
        print(f"== variant {name}: {VARIANTS[name] or 'the default config'}", flush=True)
        rows.append(run_variant(name, VARIANTS[name], args.minutes, args.deals, args.out_dir, args.seed))
        print(format_rows(rows), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(rows, f, indent=2)
    return rows


if __name__ == "__main__":
    main()
