"""Benchmarks of the doudizhu engine and environments, and of peer engines."""

from __future__ import annotations

import io
import json

from doudizhu_env import files


def check_output(parser, path: str | None) -> None:
    """Refuse (``parser.error``: one line, exit 2) an output path that cannot be written, before any work."""
    try:
        files.check_output(path)
    except files.OutputPathError as err:
        parser.error(str(err))


def check_outputs(parser, outputs: dict) -> None:
    """:func:`check_output` for each of a command's outputs (``{option: path or None}``), and none the
    same file as another (``parser.error`` before any work)."""
    try:
        files.check_outputs(outputs)
    except files.OutputPathError as err:
        parser.error(str(err))


def write_png(path: str, fig, **savefig) -> None:
    """A matplotlib figure as PNG at ``path``, written atomically (rendered in memory, then
    :func:`doudizhu_env.files.atomic_write`)."""
    out = io.BytesIO()
    fig.savefig(out, format="png", **savefig)
    files.atomic_write(path, out.getvalue())


def write_json(path: str, data) -> None:
    """``data`` as indented JSON at ``path``, written atomically (a temporary file, then a rename)."""
    files.atomic_write(path, json.dumps(data, indent=2))
