"""Benchmarks of the doudizhu engine and environments, and of peer engines.

Every benchmark command checks its options before any work, as the judges do, through the shared
checks of :mod:`doudizhu_arena.options`: an error is one line naming the command and the option,
exit status 2. Its outputs (``--json``, ``--plot``, ...) can be written, are none of its inputs
(the files its agent specs name, its configs, the files it reads) and are written atomically; its
JSON holds no ``NaN`` or ``Infinity`` (an undefined figure is ``null``).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence

from doudizhu_arena.options import exit_error
from doudizhu_env import files


def check_output(parser, path: str | None, option: str = "--json", inputs: Sequence = ()) -> None:
    """Refuse (one line, exit 2) an output path that cannot be written or is an input, before any work."""
    check_outputs(parser, {option: path}, inputs)


def check_outputs(parser, outputs: dict, inputs: Sequence = ()) -> None:
    """:func:`check_output` for each of a command's outputs (``{option: path or None}``), none of them
    an input (``inputs``: paths, None for one not given) nor the same file as another (one line,
    exit 2, before any work)."""
    try:
        files.check_outputs(outputs, inputs=[i for i in inputs if i])
    except files.OutputPathError as err:
        exit_error(parser, err)


def write_png(path: str, fig, **savefig) -> None:
    """A matplotlib figure as PNG at ``path``, written atomically (rendered in memory, then
    :func:`doudizhu_env.files.atomic_write`)."""
    out = io.BytesIO()
    fig.savefig(out, format="png", **savefig)
    files.atomic_write(path, out.getvalue())


def finite(data):
    """``data`` with every non-finite float (``nan``, ``inf``: a figure left undefined, such as a rate
    over no time or a mean over no games) made ``None``, in nested dicts, lists and tuples."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(v) for v in data]
    return data


def write_json(path: str, data) -> None:
    """``data`` as indented strict JSON at ``path`` (non-finite numbers as ``null``: no ``NaN`` or
    ``Infinity``, which strict readers refuse), written atomically (a temporary file, then a rename)."""
    files.atomic_write(path, json.dumps(finite(data), indent=2, allow_nan=False) + "\n")
