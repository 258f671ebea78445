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
from doudizhu_env.files import OutputPathError, check_output


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m train.export", description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a train.run checkpoint (checkpoint.pt)")
    parser.add_argument("out", help="the file to write")
    parser.add_argument("--float32", action="store_true", help="keep float32 weights (twice the size)")
    parser.add_argument("--force", action="store_true", help="replace OUT if it is an existing file")
    args = parser.parse_args(argv)
    try:  # never the input itself, a folder, a device, or (without --force) an existing file
        check_output(args.out, "out", inputs=[args.checkpoint], overwrite=args.force)
        meta = export_weights(args.checkpoint, args.out, half=not args.float32)
    except (CheckpointError, OutputPathError) as err:
        message = str(err) + (" (--force replaces it)" if "exists" in str(err) else "")
        parser.exit(2, f"{parser.prog}: error: {' '.join(message.split())}\n")
    size = os.path.getsize(args.out) / 2**20
    print(f"wrote {args.out} ({size:.1f} MiB; {meta.get('frames', 0):,} frames of training)")


if __name__ == "__main__":
    main()
