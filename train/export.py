"""Export a training checkpoint as a file to ship: weights only (float16), no optimizer.

Run::

    python -m train.export runs/long/checkpoint.pt agents/weights/pretrained.pt

The result loads anywhere an agent spec is taken (``dmc:PATH``, or
``pretrained`` for the file above) with ``torch.load(..., weights_only=True)``.
"""

from __future__ import annotations

import argparse
import os

from agents.checkpoint import CheckpointError, export_weights


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m train.export", description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a train.dmc checkpoint (checkpoint.pt)")
    parser.add_argument("out", help="the file to write")
    parser.add_argument("--float32", action="store_true", help="keep float32 weights (twice the size)")
    args = parser.parse_args(argv)
    try:
        meta = export_weights(args.checkpoint, args.out, half=not args.float32)
    except CheckpointError as err:
        parser.exit(2, f"error: {err}\n")
    size = os.path.getsize(args.out) / 2**20
    print(f"wrote {args.out} ({size:.1f} MiB; {meta.get('frames', 0):,} frames of training)")


if __name__ == "__main__":
    main()
