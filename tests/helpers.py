"""Constants and helpers shared by the test modules: ``from helpers import ...``.

``tests/`` is on the import path of the test run (``pythonpath`` in pyproject's
``[tool.pytest.ini_options]``). Nothing here needs torch at import time: the
model helpers import it when called, from test modules that skip without it.
"""

from __future__ import annotations

import dataclasses
import glob
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from doudizhu_env import action_table, engine
from doudizhu_env.rules import Rules

ROOT = Path(__file__).resolve().parent.parent
#: The config of the end-to-end training runs (a few thousand frames, small networks).
TINY = str(ROOT / "configs" / "tiny.yaml")

STANDARD = Rules.preset("standard")
DOUZERO = Rules.preset("douzero")
NO_ROCKET_KICKERS = Rules.preset("standard", rocket_as_kickers=False)

#: The rank characters, by rank index (3 .. 2, then the jokers X and D).
RANKS = "3456789TJQKA2XD"


def sweep(values, default: int) -> list:
    """Parameters of a long sweep: the first ``default`` of ``values`` run by ``make test``, the rest
    are marked ``slow`` (``make test-slow`` runs them; see pyproject's pytest markers)."""
    values = list(values)
    if not 0 < default <= len(values):
        raise ValueError(f"default must be 1..{len(values)} (the values make test runs), got {default}")
    return [v if i < default else pytest.param(v, marks=pytest.mark.slow) for i, v in enumerate(values)]


def state_fields(state: engine.State) -> dict:
    """Every array field of an engine state (or seat view) by name: all fields but ``rules``."""
    return {f.name: getattr(state, f.name) for f in dataclasses.fields(state) if f.name != "rules"}


def action_ids(state: engine.State, *names: str) -> np.ndarray:
    """The ids of action names (or loose card strings) in ``state``'s action table."""
    table = action_table(state.rules)
    return np.array([table.index(n) for n in names])


def play_names(state: engine.State, names) -> engine.State:
    """Step a one-game ``state`` through action names, one decision each, in turn order."""
    for name in names:
        assert not state.done[0], f"the hand is over before {name!r}"
        state = engine.step(state, action_ids(state, name))
    return state


def random_states(rules, seed, num_games: int, steps: int | None = None,
                  auto_reset: bool = False) -> Iterator[engine.State]:
    """Every state of ``num_games`` games of uniformly random legal play, from the deal on.

    ``seed`` is an int (the deal is ``engine.reset(seed)``'s, the play draws from
    ``np.random.default_rng(seed)``) or a Generator (deals and plays, in that order).
    It stops after ``steps`` states, and without ``auto_reset`` at the first state
    in which every game is over.
    """
    if auto_reset and steps is None:
        raise ValueError("random_states with auto_reset never ends: give steps")
    rng = np.random.default_rng(seed)  # the Generator itself when seed is one
    state = engine.reset(seed, num_games, rules)
    k = 0
    while steps is None or k < steps:
        yield state
        if not auto_reset and state.done.all():
            return
        state = engine.step(state, engine.sample_legal(state, rng), auto_reset=auto_reset)
        k += 1


def scalars(run_dir, files=None) -> dict[str, list[tuple[int, float]]]:
    """``{tag: [(step, value), ...]}`` of the TensorBoard event files of ``run_dir`` (or ``files``;
    tensorboard needed)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out: dict[str, list[tuple[int, float]]] = {}
    for path in sorted(files if files is not None else glob.glob(os.path.join(run_dir, "events.*"))):
        acc = EventAccumulator(path, size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            out.setdefault(tag, []).extend((e.step, e.value) for e in acc.Scalars(tag))
    return out


def get_dotted(cfg, dotted: str):
    """The config field named by a dotted key such as ``model.hidden``."""
    for part in dotted.split("."):
        cfg = getattr(cfg, part)
    return cfg


def small_config():
    """The small network sizes of the training tests (a :class:`agents.dmc.ModelConfig`; torch needed)."""
    from agents.dmc import ModelConfig

    return ModelConfig(hidden=16, lstm_hidden=8, action_hidden=8, head_hidden=16)


def small_model(rules: Rules = STANDARD, cfg=None, seed: int = 0):
    """A freshly initialised :class:`agents.dmc.ScoreModel` of ``cfg`` (default: :func:`small_config`),
    its weights drawn from ``torch.manual_seed(seed)``."""
    import torch

    from agents.dmc import ScoreModel

    torch.manual_seed(seed)
    return ScoreModel(rules, small_config() if cfg is None else cfg)


def dmc_learner(model, **settings):
    """A :class:`train.dmc.DMCLearner` of ``model`` with the :class:`train.config.TrainConfig` defaults
    but for ``settings`` (e.g. ``learning_rate``, ``max_grad_norm``, ``hand_loss_weight``)."""
    from train.config import TrainConfig
    from train.dmc import DMCLearner

    return DMCLearner(model, TrainConfig(**settings))


def without(batch, *fields: str):
    """``batch`` (a :class:`train.samples.Samples`) with ``fields`` left out (None)."""
    return dataclasses.replace(batch, **{name: None for name in fields})
