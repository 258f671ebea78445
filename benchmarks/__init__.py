"""Benchmarks of the doudizhu engine and environments, and of peer engines."""

from __future__ import annotations

import json

from doudizhu_env import files


def check_output(parser, path: str | None) -> None:
    """Refuse (``parser.error``: one line, exit 2) an output path that cannot be written, before any work."""
    try:
        files.check_output(path)
    except files.OutputPathError as err:
        parser.error(str(err))


def write_json(path: str, data) -> None:
    """``data`` as indented JSON at ``path``, written atomically (a temporary file, then a rename)."""
    files.atomic_write(path, json.dumps(data, indent=2))
