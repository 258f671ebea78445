"""Safe output files: paths checked before any work, writes that are atomic, appends on a fresh line.

Every command and function of the package that writes a file goes through here:

- :func:`check_output` refuses, before the work starts, a path that could not be written
  afterwards: empty, a folder, something that exists and is not a regular file (a device, a
  pipe), a missing or unwritable parent folder, or the same file as one of the inputs.
- :func:`atomic_write` writes the whole content to a temporary file in the same folder and
  renames it over the target: a reader sees the old file or the new one, never half of one,
  and an error on the way leaves the old file as it was.
- :func:`append_text` adds to a file (records are a log: appending never destroys what is
  there), starting on a fresh line when the file's last line was cut off.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Sequence


class OutputPathError(ValueError):
    """An output path that cannot (or must not) be written."""


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def output_problem(path, inputs: Sequence = (), overwrite: bool = True) -> str | None:
    """Why ``path`` cannot be written as an output file (None when it can)."""
    path = os.fspath(path) if path is not None else ""
    if not path or "\0" in path:
        return "the path is empty" if not path else "the path holds a NUL character"
    if any(_same_file(path, os.fspath(i)) for i in inputs if i is not None and os.path.exists(os.fspath(i))):
        return "it is an input of this command"
    if os.path.lexists(path):
        mode = os.stat(path).st_mode if os.path.exists(path) else 0
        if stat.S_ISDIR(mode):
            return "it is a folder"
        if not stat.S_ISREG(mode):
            return "it exists and is not a regular file"
        if not overwrite:
            return "it exists (this command does not overwrite files)"
        if not os.access(path, os.W_OK):
            return "it is not writable"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"its folder {folder!r} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder!r} is not writable"
    if folder.startswith(("/proc/", "/sys/")) or folder in ("/proc", "/sys"):
        return f"its folder {folder!r} is a kernel file system"
    return None


def check_output(path, what: str = "output", inputs: Sequence = (), overwrite: bool = True) -> None:
    """Raise :class:`OutputPathError` (one line: the option, the path, why, what is expected) when
    :func:`output_problem` finds a problem with ``path``; ``None`` (an option not given) passes."""
    if path is None:
        return
    problem = output_problem(path, inputs, overwrite)
    if problem:
        shown = repr(os.fspath(path))[:120]
        raise OutputPathError(f"{what}: cannot write {shown}: {problem}; expected a file path in an "
                              "existing, writable folder")


def atomic_write(path, content: str | bytes) -> None:
    """Replace ``path`` with ``content`` atomically (a temporary file in its folder, fsynced, renamed)."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def append_text(path, text: str) -> None:
    """Append ``text`` to ``path`` (created if missing) in one write, on a fresh line when the file
    does not end with a newline (a torn last line stays apart from the new text)."""
    path = os.fspath(path)
    with open(path, "ab+") as f:
        f.seek(0, os.SEEK_END)
        if f.tell():
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":
                text = "\n" + text
        f.write(text.encode())
        f.flush()
        os.fsync(f.fileno())
