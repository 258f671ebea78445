"""Benchmarks of the doudizhu engine and environments, and of peer engines."""

from __future__ import annotations

import json
import os
import tempfile


def check_output(parser, path: str | None) -> None:
    """Refuse (``parser.error``: one line, exit 2) an output path that cannot be written, before any work."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        parser.error(f"cannot write {path!r}: expected a file path in an existing, writable folder")


def write_json(path: str, data) -> None:
    """``data`` as indented JSON at ``path``, written atomically (a temporary file, then a rename)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".bench-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=2)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
