"""The learner interface: what a training algorithm is to the rest of the run.

A run (:mod:`train.run`) and its actors (:mod:`train.actor`) never ask which
learner they hold; they ask the learner. A learner is one class in one module
(:class:`train.dmc.DMCLearner`, :class:`train.ppo.PPOLearner`), named in
:data:`LEARNERS` by its config value (``learner: dmc``). What it implements:

==========================  ================================================================
``name``                    its config value, written into checkpoints (``learner``)
``score_kind``              what the networks' scores are: ``q_values`` or ``logits``; the
                            agents that play its checkpoints read them so
                            (:func:`agents.policy.policy_agent`)
``recording``               what the actors record for it (:class:`Recording`)
``learns_labels``           whether it can learn a warm-start agent's labels of moves it did
                            not play (``warm_start_mode: dagger``)
``check_config(cfg)``       its own config checks (``ConfigError``), run by the config
``torch_threads(cfg)``      the torch threads of its process (one by default: see below)
``acting_agent(...)``       the agent the actors play with (exploration included)
``take(buffer, n)``         its next batch from the :class:`~train.buffer.SampleBuffer`
``update(batch)``           gradient steps on a :class:`~train.samples.Samples`; statistics
``checkpoint_state()``      what it adds to a checkpoint for ``--resume`` beside its optimizer
``resume(data, path)``      reads that back (``CheckpointError`` where it does not fit)
``exploration(...)``        the progress line's word on exploration
==========================  ================================================================

A third learner (an A2C, or the exploitability judge's best response) is one
new module with a subclass of :class:`Learner`, plus its entry in
:data:`LEARNERS`.

**Threads.** The five networks share no weights, so a loss that is a mean over
a batch's rows is a sum of one term per network, and each term's backward pass
writes only its own network's gradients. With ``threads`` above 1 on the CPU a
learner has a :attr:`Learner.pool` of that many threads and runs work per
network on it (:meth:`Learner.map_networks`: whole networks to each thread, the
largest first, each to the thread with the fewest rows so far), every
operation on one torch thread (:meth:`Learner.torch_threads`). A network's
matrices stay whole, where splitting each operation over torch's threads
splits matrices of a few hundred rows; and the weights come out the same bytes
as on one thread.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np
import torch

from agents.checkpoint import CheckpointError
from agents.dmc import DMCAgent, ModelConfig, ScoreModel
from doudizhu_env.checks import short
from doudizhu_env.rules import Rules

from .buffer import SampleBuffer
from .samples import Samples

T = TypeVar("T")

#: The learners, by their config value: ``module:class`` (imported when first asked for).
LEARNERS = {"dmc": "train.dmc:DMCLearner", "ppo": "train.ppo:PPOLearner"}


@dataclass(frozen=True)
class Recording:
    """What the actors record for a learner beyond the four fields every sample has
    (:mod:`train.samples`)."""

    hidden_hands: bool = False
    """The two hidden hands at each decision (a critic's input; a model with a hand head records
    them whatever the learner)."""
    trajectories: bool = False
    """Whole hands with each decision's legal actions, ``steps_left``, ``warm_start`` and the
    log-probabilities of each action (``log_prob`` under what drew it, ``log_pi`` under the policy
    alone), cut only between hands."""


#: The recording of a learner that needs only the four fields every sample has.
NOTHING_MORE = Recording()


class Learner(ABC):
    """Adam on one loss over the five networks of a :class:`~agents.dmc.ScoreModel` (see the module
    docstring for what a subclass sets and implements)."""

    name: ClassVar[str]
    score_kind: ClassVar[str]
    recording: ClassVar[Recording] = NOTHING_MORE
    learns_labels: ClassVar[bool] = False

    def __init__(self, model: ScoreModel, cfg, device: str = "cpu"):
        self.model, self.cfg = model, cfg
        self.device = torch.device(device)
        self.updates = 0
        threaded = cfg.threads > 1 and self.device.type == "cpu"
        self.pool = ThreadPoolExecutor(cfg.threads, f"{self.name}-learner") if threaded else None
        """With ``threads`` above 1 on the CPU, the threads that run the networks' work
        (:meth:`map_networks`); None on one thread."""
        if cfg.trainable == "heads":  # the state encoders stay as loaded
            for network in range(len(model.nets)):
                for p in model.net(network).encoder_parameters():
                    p.requires_grad_(False)

    # -- what the run and the actors ask before any training ----------------

    @classmethod
    def new_model(cls, rules: Rules, cfg: ModelConfig) -> ScoreModel:
        """A freshly initialized model whose scores are this learner's kind."""
        return ScoreModel(rules, cfg, score_kind=cls.score_kind)

    @classmethod
    def check_config(cls, cfg) -> None:
        """Raise ``ConfigError`` for settings this learner cannot train with (none by default)."""
        return None

    @classmethod
    def torch_threads(cls, cfg) -> int:
        """The torch threads of the learner's process (``torch.set_num_threads``): one, as the
        learner's own threads run the networks' work (:meth:`map_networks`), each operation on the
        thread that calls it (two levels of threads would oversubscribe the cores)."""
        return 1

    @classmethod
    def acting_agent(cls, model: ScoreModel, rng: np.random.Generator, bidding_epsilon: float | None,
                     doubling_epsilon: float | None) -> DMCAgent:
        """The agent the actors play with: epsilon-greedy on the scores (the run sets ``epsilon``)."""
        return DMCAgent(model, rng=rng, bidding_epsilon=bidding_epsilon, doubling_epsilon=doubling_epsilon)

    # -- training ------------------------------------------------------------

    def take(self, buffer: SampleBuffer, n: int) -> Samples | None:
        """The next batch of at least ``n`` samples (whole hands where :attr:`recording` asks for
        trajectories), or None while the buffer holds fewer."""
        return buffer.take_whole(n) if self.recording.trajectories else buffer.take(n)

    @abstractmethod
    def update(self, batch: Samples) -> dict[str, float]:
        """Train on ``batch``; the statistics to log (``loss/all`` among them)."""

    def map_networks(self, work: Callable[[np.ndarray], T], network: np.ndarray) -> list[T]:
        """``work(positions)`` for each network's positions in ``network`` (ascending), on
        :attr:`pool`'s threads (:func:`plan_networks`); the results thread by thread, in the plan's
        order (the same for the same ``network``)."""
        assert self.pool is not None, "map_networks without threads"
        done = self.pool.map(lambda parts: [work(positions) for positions in parts],
                             plan_networks(network, self.cfg.threads))
        return [result for results in done for result in results]

    @staticmethod
    def adam(params, learning_rate: float) -> torch.optim.Adam:
        """Adam over those of ``params`` that train (``requires_grad``), fused (one kernel over all
        tensors: 6 ms a step where the per-tensor loop takes 16 ms for the PPO learner's 4.6 M
        parameters on one CPU thread)."""
        return torch.optim.Adam([p for p in params if p.requires_grad], lr=learning_rate, fused=True)

    optimizer: torch.optim.Optimizer

    @property
    def learning_rate(self) -> float:
        return self.optimizer.param_groups[0]["lr"]

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = value

    # -- checkpoints and logs ------------------------------------------------

    def checkpoint_state(self) -> dict[str, Any]:
        """The entries this learner adds to a training checkpoint beside its :attr:`optimizer`'s
        state (``rng`` entries are merged with the run's): none by default."""
        return {}

    def resume(self, data: dict, path: str) -> None:
        """Read back what :meth:`checkpoint_state` wrote into ``data`` (the checkpoint at ``path``)."""
        if not isinstance(data.get("optimizer"), dict) or not data["optimizer"]:
            raise CheckpointError(f"{path!r} holds no optimizer state to resume from (a checkpoint of "
                                  "train.run has one; an exported file does not)")
        try:
            self.optimizer.load_state_dict(data["optimizer"])
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as err:
            raise CheckpointError(f"{path!r}: its optimizer state does not fit this model's optimizer "
                                  f"({short(str(err), 120)})") from None

    def exploration(self, means: dict[str, float], epsilon: float, warming: bool) -> str:
        """The progress line's word on exploration (``means``: the logged statistics since the last)."""
        return f"eps {epsilon:.3f}"


def plan_networks(network: np.ndarray, threads: int) -> list[list[np.ndarray]]:
    """Each thread's share of the rows whose networks are ``network``: the positions of whole
    networks, largest first, each to the thread with the fewest rows so far (threads left without
    one get none)."""
    loads = [0] * threads
    work: list[list[np.ndarray]] = [[] for _ in loads]
    groups = [np.flatnonzero(network == index) for index in np.unique(network)]
    for rows in sorted(groups, key=len, reverse=True):
        thread = loads.index(min(loads))
        loads[thread] += len(rows)
        work[thread].append(rows)
    return [parts for parts in work if parts]


def learner_class(name: str) -> type[Learner]:
    """The learner class of config value ``name`` (a :data:`LEARNERS` key)."""
    if name not in LEARNERS:
        raise ValueError(f"learner must be one of {tuple(LEARNERS)}, got {short(name)}")
    module, _, attr = LEARNERS[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def make_learner(cfg, model: ScoreModel, device: str = "cpu") -> Learner:
    """The learner ``cfg.learner`` names, training ``model`` on ``device``."""
    return learner_class(cfg.learner)(model, cfg, device)
