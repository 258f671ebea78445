"""A training run's folder, ``out_dir/run_name``: what a run writes there, the checks before it starts,
and how ``--overwrite`` replaces an earlier run without losing it too soon.

A run writes, and only these are its outputs (:func:`run_outputs`)::

    checkpoint.pt                   the latest checkpoint (agents.checkpoint.CHECKPOINT_NAME)
    checkpoints/<frames:012d>.pt    with keep_checkpoints: every periodic checkpoint, weights only
    events.out.tfevents.*           TensorBoard event files
    eval.json                       the last evaluation

Before any work (:func:`check_run_dir`): the folder can be made and written,
an earlier run's checkpoint is not replaced unless ``--resume`` continues it or
``--overwrite`` starts it again, no output is a link, and no file the run
reads is one it writes.

``--overwrite`` moves the earlier run's outputs aside (:class:`EarlierRun`)
into a hidden folder beside them, and deletes them only once the new run has
saved its first checkpoint; a run that fails before that (a bad setting found
late, a diverging loss, Ctrl-C) removes what it wrote and puts them back.
"""

from __future__ import annotations

import glob
import os
import re
import shutil

from agents.checkpoint import CHECKPOINT_NAME
from doudizhu_env.files import output_problem, remove_inside

from .config import ConfigError

#: The run's evaluation file, in its folder.
EVAL_NAME = "eval.json"
#: The folder of kept checkpoints (``keep_checkpoints``), in the run's folder.
KEPT_FOLDER = "checkpoints"
#: Where ``--overwrite`` keeps an earlier run's outputs until the new run's first checkpoint.
ASIDE_FOLDER = ".earlier-run"


def event_files(run_dir: str) -> list[str]:
    """The TensorBoard event files in ``run_dir``."""
    return glob.glob(os.path.join(glob.escape(run_dir), "events.out.tfevents.*"))


def run_outputs(run_dir: str) -> list[str]:
    """The files an earlier run left in ``run_dir`` (its checkpoint, kept checkpoints, TensorBoard
    event files, ``eval.json``); anything else in the folder is not the run's."""
    kept = os.path.join(run_dir, KEPT_FOLDER)
    names = [os.path.join(run_dir, n) for n in (CHECKPOINT_NAME, EVAL_NAME)] + event_files(run_dir)
    names += [p for p in glob.glob(os.path.join(glob.escape(kept), "*.pt"))
              if re.fullmatch(r"\d{12}\.pt", os.path.basename(p))]
    return sorted(p for p in names if os.path.isfile(p))


def check_run_dir(run_dir: str, resume: bool, overwrite: bool) -> None:
    """Refuse, before any work, a run folder that cannot be made or written, and an earlier run's
    checkpoint that this run would replace (unless ``resume`` continues it or ``overwrite`` starts
    it again). Nothing is created here."""
    existing = os.path.abspath(run_dir)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    problem = None
    if not os.path.isdir(existing):
        problem = f"{existing!r} is a file"
    elif os.path.realpath(existing).startswith(("/proc", "/sys")):
        problem = f"{existing!r} is on a kernel file system"
    elif not os.access(existing, os.W_OK | os.X_OK):
        problem = f"{existing!r} is not writable"
    elif os.path.isdir(run_dir):
        problem = output_problem(os.path.join(run_dir, CHECKPOINT_NAME))
    if problem:
        raise ConfigError(f"the run folder {run_dir!r} cannot be written: {problem}; expected out_dir to "
                             "be a writable folder (or a path where one can be made)")
    if not resume and not overwrite and os.path.exists(os.path.join(run_dir, CHECKPOINT_NAME)):
        raise ConfigError(f"{run_dir!r} already holds the checkpoint of an earlier run with this out_dir "
                             "and run_name; expected a new --run-name, --resume to continue that run, or "
                             "--overwrite to start it again (replacing its checkpoint)")
    if overwrite:
        check_no_links(run_dir)


def check_no_links(run_dir: str) -> None:
    """``--overwrite`` moves and rewrites the run's own files: refuse a run folder whose outputs (or
    its kept-checkpoints folder, or the folder it moves them aside to) are links, which would lead it
    to files outside the folder."""
    names = [CHECKPOINT_NAME, EVAL_NAME, KEPT_FOLDER, ASIDE_FOLDER]
    names += [os.path.basename(p) for p in event_files(run_dir)]
    links = [n for n in names if os.path.islink(os.path.join(run_dir, n))]
    if links:
        path = os.path.join(run_dir, links[0])
        raise ConfigError(f"--overwrite: {path!r} is a link (to {os.path.realpath(path)!r}); --overwrite "
                             "replaces only the run folder's own files: expected no link there (remove it, "
                             "or choose a new --run-name)")


def check_inputs_outside(run_dir: str, inputs: dict[str, list[str]]) -> None:
    """No file the run reads (``inputs``: by the config key that names them) may be one the run writes
    or ``--overwrite`` replaces: its checkpoints and ``eval.json``."""
    written = [os.path.join(run_dir, n) for n in (CHECKPOINT_NAME, EVAL_NAME)] + run_outputs(run_dir)
    for key, paths in inputs.items():
        for path in paths:
            if any(os.path.exists(path) and os.path.exists(w) and os.path.samefile(path, w) for w in written):
                raise ConfigError(f"{key}: {path!r} is a file this run writes (or --overwrite replaces); "
                                     "expected a file outside the run folder (copy it first), or --resume")


class EarlierRun:
    """An earlier run's outputs, moved aside while a run started again with ``--overwrite`` sets up
    and trains up to its first checkpoint (see the module docstring).

    :meth:`move_aside` (before the new run writes anything), then :meth:`discard` once the new run
    has saved a checkpoint, or :meth:`restore` when it fails before that. Without files it does
    nothing.
    """

    def __init__(self, run_dir: str, files: list[str]):
        self.run_dir = run_dir
        self.files = list(files)
        self.aside = os.path.join(run_dir, ASIDE_FOLDER)
        self.moved: list[tuple[str, str]] = []  # (where it was, where it is now)

    def move_aside(self) -> None:
        if not self.files:
            return
        if os.path.lexists(self.aside):
            raise ConfigError(f"--overwrite: {self.aside!r} exists: it holds the outputs of a run "
                                 "replaced by one that never saved a checkpoint; expected it gone (move its "
                                 "files back into the run folder or delete it), then --overwrite again")
        os.makedirs(self.aside)
        for k, path in enumerate(self.files):
            target = os.path.join(self.aside, f"{k:04d}-{os.path.basename(path)}")
            os.replace(path, target)
            self.moved.append((path, target))

    def discard(self) -> None:
        """The new run has saved a checkpoint: the earlier run's outputs are deleted (idempotent)."""
        if self.moved:
            shutil.rmtree(self.aside, ignore_errors=True)
            self.moved = []

    def restore(self) -> list[str]:
        """The new run failed before its first checkpoint: remove its outputs and put the earlier
        ones back; returns the restored paths."""
        if not self.moved:
            return []
        remove_inside(self.run_dir, run_outputs(self.run_dir))
        for path, target in self.moved:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            os.replace(target, path)
        shutil.rmtree(self.aside, ignore_errors=True)
        restored, self.moved = [path for path, _ in self.moved], []
        return restored
