"""Ablation of the training choices: each variant trained on the same budget, evaluated on the same deals.

Every variant is ``configs/default.yaml`` with a few overrides, trained with
``num_actors: 0`` (one actor alternating with the learner in one process, so
no variant gets more CPU than another from the scheduler) for the same
budget and seed, then evaluated against RuleAgent on the same duplicate
deals, with a fixed landlord and with bidding. The budget is either
**minutes** (a faster variant makes more frames: that is part of what is
measured; needs a quiet machine) or **frames** (``--frames``: what each
variant learns per frame; with ``num_actors: 0`` the run is deterministic,
so this one does not depend on the machine's load).

Run (from the repository root)::

    python -m benchmarks.ablation --frames 2000000 --deals 2000 --json ablation.json
    python -m benchmarks.ablation --minutes 5 --actors 2 --deals 2000 --variants default lstm
    python -m benchmarks.ablation --variants old default --minutes 0.5 --deals 50

Prints one row per variant: frames, minutes, and the agent's WP / ADP with
95% intervals with a fixed landlord, overall and in each role, and with
bidding overall, as farmer, and its landlord share.
"""

from __future__ import annotations

import argparse
import os
import time

from agents.checkpoint import checkpoint_path, load_model, read_checkpoint
from agents.policy import policy_agent
from benchmarks import write_json
from doudizhu_arena.evaluation import evaluate_against
from doudizhu_arena.options import (
    check_count,
    check_deals,
    check_outputs_and_agents,
    check_positive,
    command_errors,
)
from doudizhu_env.checks import MAX_SEED, check_seed
from doudizhu_env.files import check_folder
from train.config import load_config
from train.run import train

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CONFIG = os.path.join(ROOT, "configs", "default.yaml")

#: The PPO learner with no exploration but its softmax and no warm start (the first ``configs/ppo.yaml``).
PPO = {"learner": "ppo", "epsilon": 0.0, "epsilon_final": 0.0, "bidding_epsilon": 0.0,
       "doubling_epsilon": 0.0, "batch_size": 4096, "minibatch_size": 1024}
#: configs/ppo.yaml's overrides of the default config: PPO, bids and doublings explored as DMC's,
#: RuleAgent cloned for the first million frames
PPO_CONFIG = {**PPO, "bidding_epsilon": 0.2, "doubling_epsilon": 0.2, "warm_start_frames": 1_000_000}
#: Variant name -> overrides of the default config.
VARIANTS: dict[str, dict] = {
    "default": {},
    "seed_1": {"seed": 1},  # the default config again, another training seed: how far seeds alone move a row
    # the network
    "lstm": {"model.history": "lstm"},
    "wide": {"model.hidden": 512, "model.head_hidden": 256},
    "narrow": {"model.hidden": 128, "model.head_hidden": 64},
    "deep_head": {"model.head_layers": 3},
    "douzero_sized": {"model.history": "lstm", "model.hidden": 512, "model.head_hidden": 512,
                      "model.head_layers": 6},
    # the learner
    "batch_256": {"batch_size": 256},
    "batch_256_seed_1": {"batch_size": 256, "seed": 1},
    "batch_4096": {"batch_size": 4096},
    "lr_1e-4": {"learning_rate": 1e-4},
    "lr_6e-4": {"learning_rate": 6e-4},
    "lr_1e-3": {"learning_rate": 1e-3},
    "lr_decay_0.1": {"learning_rate_end_factor": 0.1},
    "lr_decay_0.3": {"learning_rate_end_factor": 0.3},
    "doubling_eps_0.01": {"doubling_epsilon": 0.01},
    # the auxiliary head that predicts the two hidden hands (DouZero+'s opponent modelling), a training signal
    "hand_head": {"model.hand_head": True},
    "hand_head_seed_1": {"model.hand_head": True, "seed": 1},
    "hand_head_0.3": {"model.hand_head": True, "hand_loss_weight": 0.3},
    "hand_head_0.3_seed_1": {"model.hand_head": True, "hand_loss_weight": 0.3, "seed": 1},
    # who the model plays with
    "rule_opponents": {"opponents": ["rule"], "opponent_share": 0.5},
    "lstm_rule_opponents": {"model.history": "lstm", "opponents": ["rule"], "opponent_share": 0.5},
    # RuleAgent in half the games as in the default, the model's own past (a frozen copy every
    # 1 M frames, the last 8 kept) in a quarter, self-play in the last quarter
    "past_opponents": {"opponents": ["rule", "rule", "past"], "opponent_share": 0.75},
    "past_opponents_seed_1": {"opponents": ["rule", "rule", "past"], "opponent_share": 0.75, "seed": 1},
    # four fifths of the games against RuleAgent (the default: half), as in the shipped agent's stage 7
    "rule_share_0.8": {"opponent_share": 0.8},
    "rule_share_0.8_seed_1": {"opponent_share": 0.8, "seed": 1},
    "warm_start": {"warm_start_frames": 1_000_000},
    "warm_rule_opponents": {"warm_start_frames": 1_000_000, "opponents": ["rule"], "opponent_share": 0.5},
    # the earlier ablation (objective, fixed-landlord games)
    "old": {"objective": "adp", "fixed_landlord_share": 0.0, "model.history": "lstm"},
    "fixed_share": {"objective": "adp", "model.history": "lstm"},
    "logadp": {"model.history": "lstm", "objective": "logadp"},
    "wp": {"objective": "wp"},
    # the PPO learner with a critic that sees the hidden hands, no exploration but its softmax (the
    # first configs/ppo.yaml), and the same after a warm start by cloning RuleAgent
    "ppo": PPO,
    "ppo_warm": {**PPO, "warm_start_frames": 100_000},
    # one pass over each batch instead of two: about half the learner's time per frame
    "ppo_warm_epochs_1": {**PPO, "warm_start_frames": 100_000, "ppo_epochs": 1},
    # a longer warm start: RuleAgent cloned for the first million frames (about 4 minutes here)
    "ppo_warm_1m": {**PPO, "warm_start_frames": 1_000_000},
    # the same with bids and doublings explored at 0.2, as DMC's: configs/ppo.yaml's settings
    "ppo_warm_1m_explore": PPO_CONFIG,
    # search distillation by cloning: the teacher is search:rule on a small budget (4 worlds x 4
    # candidates x 16 samples: WP 0.59 against RuleAgent, docs/search.md), for 200,000 frames
    "ppo_warm_search": {**PPO, "warm_start_frames": 200_000,
                        "warm_start_agent": "search:rule,worlds=4,candidates=4,samples=16"},
    # the same teacher as a labeller (DAgger): the policy plays, search:rule labels its decisions
    "ppo_dagger_search": {**PPO, "warm_start_frames": 200_000, "warm_start_mode": "dagger",
                          "warm_start_agent": "search:rule,worlds=4,candidates=4,samples=16"},
}
#: The variants run when none are named.
DEFAULT_VARIANTS = ("default", "lstm", "wide", "narrow", "deep_head", "douzero_sized", "batch_256",
                    "batch_4096", "lr_1e-4", "lr_1e-3", "doubling_eps_0.01", "rule_opponents", "warm_start",
                    "warm_rule_opponents")


def run_variant(name: str, overrides: dict, minutes: float, deals: int, out_dir: str, seed: int,
                frames: int = 0, actors: int = 0, eval_workers: int = 1) -> dict:
    """Train one variant for ``minutes`` (or ``frames``, when given) with ``actors`` actor processes
    and evaluate it against RuleAgent on ``deals`` deals per mode (in ``eval_workers`` processes:
    the same figures with any number)."""
    cfg = load_config(DEFAULT_CONFIG, {
        "run_name": f"ablation-{name}", "out_dir": out_dir, "seed": seed, "num_actors": actors,
        "total_frames": frames, "max_minutes": 0 if frames else minutes, "eval_deals": 0,
        "log_seconds": 30, "checkpoint_minutes": 1e6, **overrides,
    })
    start = time.monotonic()
    train(cfg, overwrite=True)  # the benchmark's own runs, one folder per variant, made again
    minutes = (time.monotonic() - start) / 60
    path = checkpoint_path(os.path.join(out_dir, cfg.run_name))
    model = load_model(path)
    agent = policy_agent(model) if eval_workers <= 1 else f"dmc:{path}"
    report = evaluate_against(agent, model.rules, ["rule"], deals, seed=seed + 1000, workers=eval_workers)
    row = {"variant": name, "overrides": overrides, "frames": read_checkpoint(path)["frames"],
           "minutes": minutes}
    for key, figures in report.items():
        row[key] = {k: v for k, v in figures.items() if k != "table"}
    return row


def _pm(fig: dict, key: str, fmt: str = "+.2f") -> str:
    return f"{fig[key]:{fmt}} ± {fig[key + '_ci']:.2f}" if key in fig else "-"


def format_rows(rows: list[dict]) -> str:
    """The ablation table (Markdown)."""
    head = ("| variant | frames | minutes | fixed WP | fixed ADP | landlord | landlord_down | landlord_up | "
            "bidding ADP | bidding, as farmer | landlord share |")
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for r in rows:
        f, b = r["rule/fixed_landlord"], r["rule/bidding"]
        share = b.get("landlord_share", float("nan"))
        lines.append(
            f"| {r['variant']} | {r['frames']:,} | {r['minutes']:.1f} | {_pm(f, 'wp', '.3f')} | "
            f"{_pm(f, 'adp')} | {_pm(f, 'adp_landlord')} | {_pm(f, 'adp_landlord_down')} | "
            f"{_pm(f, 'adp_landlord_up')} | {_pm(b, 'adp')} | {_pm(b, 'adp_farmer')} | {share:.1%} |")
    return "\n".join(lines)


#: The most evaluation deals per mode (every deal is made before the first game).
MAX_DEALS = 1_000_000


def check_args(args) -> None:
    """Every option, output and variant's config before the first variant trains (one-line
    ``ValueError``s): a variant that cannot run fails now, not after the hours of those before it."""
    check_positive(args.minutes, "--minutes")
    check_count(args.frames, "--frames", 0)
    check_deals(args.deals, low=2, high=MAX_DEALS)  # the intervals need two deals
    check_count(args.actors, "--actors", 0)
    check_count(args.eval_workers, "--eval-workers")
    check_seed(args.seed, "--seed")
    if args.seed > MAX_SEED - 1000:  # the evaluation's deals are seeded seed + 1000
        raise ValueError(f"--seed must be at most {MAX_SEED - 1000} (the evaluation uses seed + 1000), "
                         f"got {args.seed}")
    check_folder(args.out_dir, "--out-dir")
    runs = [os.path.abspath(os.path.join(args.out_dir, f"ablation-{name}")) for name in args.variants]
    if args.json and any(os.path.abspath(args.json).startswith(run + os.sep) for run in runs):
        raise ValueError(f"--json: cannot write {args.json!r}: it is inside a variant's run folder, which "
                         "the variant's training replaces; expected a file outside them")
    for name in args.variants:
        load_config(DEFAULT_CONFIG, {"run_name": f"ablation-{name}", "out_dir": args.out_dir,
                                     "seed": args.seed, "num_actors": args.actors,
                                     "total_frames": args.frames,
                                     "max_minutes": 0 if args.frames else args.minutes, "eval_deals": 0,
                                     **VARIANTS[name]})
    check_outputs_and_agents({"--json": args.json}, ["rule"], [None], inputs=[DEFAULT_CONFIG])


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ablation",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=list(DEFAULT_VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--minutes", type=float, default=6.0, help="training minutes per variant")
    parser.add_argument("--frames", type=int, default=0,
                        help="train each variant for this many frames instead of --minutes")
    parser.add_argument("--deals", type=int, default=500, help="evaluation deals per mode")
    parser.add_argument("--actors", type=int, default=0,
                        help="actor processes (default 0: one process, deterministic; 2 is the default "
                             "config's, for budgets in minutes as a user's run gets them)")
    parser.add_argument("--eval-workers", type=int, default=1,
                        help="processes for the evaluation (the figures do not depend on it)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", default="runs", help="where the variants' runs go")
    parser.add_argument("--json", help="write the rows as JSON")
    args = parser.parse_args(argv)
    with command_errors(parser):
        check_args(args)
    rows = []
    for name in args.variants:
        print(f"== variant {name}: {VARIANTS[name] or 'the default config'}", flush=True)
        rows.append(run_variant(name, VARIANTS[name], args.minutes, args.deals, args.out_dir, args.seed,
                                args.frames, args.actors, args.eval_workers))
        print(format_rows(rows), flush=True)
        if args.json:
            write_json(args.json, rows)
    return rows


if __name__ == "__main__":
    main()
