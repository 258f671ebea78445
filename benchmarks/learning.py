"""Learning curve of DMC self-play: WP / ADP against the baselines over wall-clock training time.

Run a training with periodic evaluations, then read its TensorBoard events::

    python -m train.dmc --config configs/default.yaml --run-name learning --max-minutes 60 \\
        --eval-minutes 10 --eval-deals 100
    python -m benchmarks.learning runs/learning --plot learning.png --json learning.json

Prints, for every evaluation, the minutes of training, the frames, and the
agent's WP and ADP per role against each baseline (``eval/<baseline>/<mode>/...``
tags written by :mod:`train.dmc`), and plots ADP per role over minutes.
"""

from __future__ import annotations

import argparse
import json

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

FIGURES = ("adp_landlord", "adp_farmer", "wp_landlord", "wp_farmer", "adp", "wp")


def read_evaluations(run_dir: str) -> list[dict]:
    """One row per evaluation: minutes since the run's first event, frames, and every eval figure."""
    acc = EventAccumulator(run_dir, size_guidance={"scalars": 0})
    acc.Reload()
    tags = [t for t in acc.Tags()["scalars"] if t.startswith("eval/")]
    if not tags:
        raise SystemExit(f"no eval/ scalars in {run_dir!r}: was the run evaluated?")
    start = min(e.wall_time for t in acc.Tags()["scalars"] for e in acc.Scalars(t))
    rows: dict[int, dict] = {}
    for tag in tags:
        for event in acc.Scalars(tag):
            row = rows.setdefault(event.step, {"frames": event.step, "minutes": 0.0})
            row["minutes"] = max(row["minutes"], (event.wall_time - start) / 60.0)
            row[tag.removeprefix("eval/")] = event.value
    return [rows[k] for k in sorted(rows)]


def format_rows(rows: list[dict]) -> str:
    """One line per evaluation and match (baseline/mode), one column per figure."""
    lines = [f"{'minutes':>8} {'frames':>12}  {'against':<24}" + "".join(f"{f:>14}" for f in FIGURES)]
    for r in rows:
        matches = sorted({k.rsplit("/", 1)[0] for k in r if "/" in k})
        for m in matches:
            values = "".join(f"{r.get(f'{m}/{f}', float('nan')):>14.3f}" for f in FIGURES)
            lines.append(f"{r['minutes']:>8.1f} {r['frames']:>12,}  {m:<24}{values}")
    return "\n".join(lines)


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted({k for r in rows for k in r if k.endswith(("adp_landlord", "adp_farmer"))})
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for key in keys:
        points = [(r["minutes"], r[key]) for r in rows if key in r]
        ax.plot(*zip(*points, strict=True), marker="o", label=key)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("minutes of training (this machine)")
    ax.set_ylabel("ADP of the trained agent")
    ax.set_title("DMC self-play: ADP per role against the baselines")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="a train.dmc run folder (out_dir/run_name)")
    parser.add_argument("--plot", help="write a PNG of ADP per role over minutes")
    parser.add_argument("--json", help="write the rows as JSON")
    args = parser.parse_args(argv)
    rows = read_evaluations(args.run_dir)
    print(format_rows(rows))
    if args.plot:
        plot(rows, args.plot)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return rows


if __name__ == "__main__":
    main()
