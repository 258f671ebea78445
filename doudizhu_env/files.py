"""Safe files: inputs and outputs checked before any work, writes that are atomic, appends on a
fresh line, removals that stay inside their folder.

Every command of the project (``train.run``, ``doudizhu_arena.evaluate``, ``doudizhu_arena.tournament``,
``doudizhu_arena.sprt``, the tables, the replay viewer) checks its files here, before the work starts:

- :func:`check_output` refuses a path that could not be written afterwards: empty, a folder,
  something that exists and is not a regular file (a device, a pipe), a missing or unwritable
  parent folder, or the same file as one of the inputs. :func:`check_outputs` checks all the
  outputs of a command at once, so that no two of them are the same file either.
- :func:`check_folder` does the same for an output folder (created if missing): a regular file
  on the way, a dangling or looping link, an unwritable parent, a kernel file system.
- :func:`check_input` refuses a file to load that is not a regular file (a FIFO would hang the
  read, a device never ends) or is larger than the reader's bound, saying what the path is;
  a reader of records may also take a pipe (``replay <(cat games.jsonl)``).
- :func:`read_bounded` reads at most a bound of bytes from a stream (a zip member, a pipe).
- :func:`atomic_write` writes the whole content to a temporary file in the same folder and
  renames it over the target: a reader sees the old file or the new one, never half of one,
  and an error on the way leaves the old file as it was.
- :func:`append_text` adds to a file (records are a log: appending never destroys what is
  there), starting on a fresh line when the file's last line was cut off.
"""

from __future__ import annotations

import io
import os
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence


class OutputPathError(ValueError):
    """An output path that cannot (or must not) be written."""


class InputPathError(ValueError):
    """An input path that cannot (or must not) be read: not a regular file, or too large."""


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a regular file"))


def kind_of(path) -> str:
    """What ``path`` is, in words: ``a regular file``, ``a folder``, ``a FIFO (named pipe)``, a
    device, ``a socket``, ``a dangling or looping link`` or ``missing``."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return "a dangling or looping link" if os.path.islink(path) else "missing"
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


INPUT_PROBLEM = "it is an input of this command"


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
        return INPUT_PROBLEM
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
        expected = ("another file (an output never replaces an input)" if problem == INPUT_PROBLEM
                    else "a file path in an existing, writable folder")
        raise OutputPathError(f"{what}: cannot write {short_path(path)}: {problem}; expected {expected}")


def _same_output(a: str, b: str) -> bool:
    """Whether two output paths name one file (existing or not)."""
    if os.path.exists(a) and os.path.exists(b):
        return _same_file(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def check_outputs(outputs: Mapping, inputs: Sequence = (), overwrite: bool = True) -> None:
    """:func:`check_output` for every output of a command (``{option: path or None}``), and none
    the same file as another: one output must never replace an input or another output."""
    given = [(option, os.fspath(path)) for option, path in outputs.items() if path is not None]
    for k, (option, path) in enumerate(given):
        check_output(path, option, inputs, overwrite)
        for other, earlier in given[:k]:
            if _same_output(path, earlier):
                raise OutputPathError(f"{option}: cannot write {short_path(path)}: it is also the file of "
                                      f"{other}; expected a different file for each output")


def short_path(path) -> str:
    """A path as a message quotes it (``repr``, at most 120 characters)."""
    return repr(os.fspath(path))[:120]


def folder_problem(path) -> str | None:
    """Why ``path`` cannot be used as an output folder (created if missing), or None."""
    path = os.fspath(path) if path is not None else ""
    if not path or "\0" in path:
        return "the path is empty" if not path else "the path holds a NUL character"
    if os.path.islink(path) and not os.path.exists(path):
        return "it is a dangling or looping link"
    if os.path.exists(path) and not os.path.isdir(path):
        return f"it is {kind_of(path)}"
    existing = os.path.abspath(path)
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        return f"{short_path(existing)} on its way is {kind_of(existing)}"
    if os.path.realpath(existing).startswith(("/proc", "/sys")):
        return f"{short_path(existing)} is on a kernel file system"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{short_path(existing)} is not writable"
    return None


def check_folder(path, what: str = "output folder") -> None:
    """Raise :class:`OutputPathError` (one line) when ``path`` cannot be an output folder."""
    problem = folder_problem(path)
    if problem:
        raise OutputPathError(f"{what}: cannot write in {short_path(path or '')}: {problem}; expected a "
                              "folder (created if missing) in a writable place")


def input_problem(path, max_bytes: int | None = None, streams: bool = False) -> str | None:
    """Why ``path`` must not be loaded as a file (None when it can): not a regular file (a pipe is
    allowed with ``streams``; its size is then bounded while reading), or larger than ``max_bytes``."""
    path = os.fspath(path) if path is not None else ""
    if not path or "\0" in path:
        return "the path is empty" if not path else "the path holds a NUL character"
    kind = kind_of(path)
    if kind == "missing":
        return "no such file"
    if kind != "a regular file" and not (streams and kind == "a FIFO (named pipe)"):
        return f"it is {kind}"
    if kind == "a regular file" and max_bytes is not None and os.path.getsize(path) > max_bytes:
        return f"it holds {os.path.getsize(path):,} bytes, more than the {max_bytes:,} allowed"
    if not os.access(path, os.R_OK):
        return "it is not readable"
    return None


def input_refusal(path, thing: str, expected: str, max_bytes: int | None = None) -> str | None:
    """Why ``path`` cannot be read as the ``thing`` file, as one line with what was ``expected``
    (``no config file at 'x.yaml'; expected ...``), or None when it can (:func:`input_problem`)."""
    problem = input_problem(path, max_bytes)
    if problem is None:
        return None
    if problem == "no such file":
        return f"no {thing} file at {path!r}; expected {expected}"
    return f"cannot read the {thing} file {path!r}: {problem}; expected {expected}"


def check_input(path, what: str = "input", max_bytes: int | None = None, streams: bool = False) -> str:
    """``path`` (as a string) if :func:`input_problem` finds nothing wrong, else :class:`InputPathError`:
    one line naming ``what``, the path, what it is and what was expected."""
    problem = input_problem(path, max_bytes, streams)
    if problem:
        expected = "a regular file" + (" or a pipe" if streams else "")
        shown = short_path(path if path is not None else "")
        raise InputPathError(f"{what}: cannot read {shown}: {problem}; expected {expected}")
    return os.fspath(path)


def read_bounded(stream, max_bytes: int, what: str = "input") -> bytes:
    """All of ``stream`` (a binary file object), or :class:`InputPathError` once it holds more than
    ``max_bytes``: at most ``max_bytes + 1`` bytes are ever read (a zip bomb, ``/dev/zero``)."""
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputPathError(f"{what} holds more than {max_bytes:,} bytes; expected at most that")
    return data


def remove_inside(folder, paths: Sequence) -> list[str]:
    """Remove the files ``paths`` that lie inside ``folder`` (an earlier run's outputs), and only
    those: a path that is a link, or that reaches outside ``folder`` through a linked subfolder, is
    left alone. Returns what was removed."""
    root = os.path.realpath(folder)
    removed = []
    for path in paths:
        path = os.fspath(path)
        parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
        inside = parent == root or parent.startswith(root + os.sep)
        links = any(os.path.islink(p) for p in _steps_below(folder, path))
        if inside and not links and os.path.isfile(path):
            os.remove(path)
            removed.append(path)
    return removed


def _steps_below(folder, path: str) -> list[str]:
    """The paths from just below ``folder`` down to ``path`` (each a folder or the file itself)."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(folder))
    parts = rel.split(os.sep)
    return [os.path.join(os.path.abspath(folder), *parts[: k + 1]) for k in range(len(parts))]


def echo(text: str = "") -> None:
    """Print ``text`` to stdout; once stdout is a closed pipe (``| head -1``, ``| true``), print
    nothing more, without a traceback: the command goes on, and its files are written."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        devnull = open(os.devnull, "w")  # noqa: SIM115 - stdout from now on
        try:
            os.dup2(devnull.fileno(), sys.stdout.fileno())  # the interpreter's last flush goes here too
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass
        sys.stdout = devnull


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
