"""Self-play actors: B games on the batched engine, one forward pass per step for all of them.

An :class:`Actor` plays every seat of its games with the current
:class:`~agents.dmc.DMCModel` (epsilon-greedy), records each decision, and
turns finished hands into (observation, action, position, target) samples
(:mod:`train.buffer`). :func:`actor_process` is the loop of an actor process:
chunks of samples go to the learner through a bounded queue.
"""

from __future__ import annotations

import dataclasses
import queue as queue_lib

import numpy as np
import torch

from agents.dmc import DMCAgent, DMCModel
from doudizhu_env import engine

from .buffer import EpisodeRecorder, concat_samples
from .config import TrainConfig


def epsilon_at(frames: int, start: float, final: float, decay_frames: int) -> float:
    """Linear decay from ``start`` to ``final`` over ``decay_frames`` frames."""
    if decay_frames <= 0:
        return final
    return start + (final - start) * min(1.0, frames / decay_frames)


class _Table:
    """One batch of self-play games under one rule set, and the decisions of its hands in progress."""

    def __init__(self, rules, num_games: int, objective: str, rng: np.random.Generator):
        self.state = engine.reset(rng, num_games, rules)
        self.recorder = EpisodeRecorder(num_games, objective)
        self.games = np.arange(num_games)

    def step(self, agent: DMCAgent) -> list[dict[str, np.ndarray]]:
        """One decision in every game; the samples of the hands that ended or were redealt."""
        actions, obs, pos = agent.decide(self.state)
        before = self.state.redeals
        self.recorder.record(self.games, self.state.to_act, pos, actions, obs)
        self.state = engine.step(self.state, actions, check=False, auto_reset=True)
        out = []
        ended = np.flatnonzero(self.state.ended)
        if len(ended):
            out.append(self.recorder.finish(ended, self.state.rewards[ended]))
        # all three passed and the cards were dealt again: those bids are worth what a new deal
        # is worth (0 by symmetry), not the result of a hand played with other cards
        redealt = np.flatnonzero((self.state.redeals > before) & ~self.state.ended)
        if len(redealt):
            out.append(self.recorder.finish(redealt, np.zeros((len(redealt), 3), np.float32)))
        return out


class Actor:
    """Steps ``num_games`` self-play games and yields Monte-Carlo samples.

    ``fixed_landlord_share`` of the games are dealt by the same rules without
    bidding (the landlord drawn at random), the others play the full game;
    both kinds are chosen for by the same model.
    """

    def __init__(self, model: DMCModel, num_games: int, objective: str, rng: np.random.Generator,
                 bidding_epsilon: float | None = None, fixed_landlord_share: float = 0.0):
        self.agent = DMCAgent(model, rng=rng, bidding_epsilon=bidding_epsilon)
        self.rng = rng
        rules = model.rules
        fixed = int(round(num_games * fixed_landlord_share)) if rules.bidding else 0
        sizes = [(rules, num_games - fixed), (dataclasses.replace(rules, bidding=False), fixed)]
        self.tables = [_Table(r, n, objective, rng) for r, n in sizes if n > 0]
        self.frames = 0
        self.hands = 0

    @classmethod
    def from_config(cls, model: DMCModel, cfg: TrainConfig, rng: np.random.Generator) -> Actor:
        """The actor a :class:`~train.config.TrainConfig` asks for (its games, objective, bidding
        epsilon and fixed-landlord share), choosing with ``model`` and drawing from ``rng``."""
        return cls(model, cfg.games_per_actor, cfg.objective, rng, cfg.bidding_epsilon,
                   cfg.fixed_landlord_share)

    def step(self, epsilon: float) -> list[dict[str, np.ndarray]]:
        """One decision in every game; the samples of the hands that ended (possibly none)."""
        self.agent.epsilon = epsilon
        out = []
        for table in self.tables:
            out += table.step(self.agent)
            self.frames += len(table.games)
            self.hands += int(table.state.ended.sum())
        return out

    def collect(self, num_samples: int, epsilon: float) -> dict[str, np.ndarray]:
        """Step until at least ``num_samples`` samples are ready; return them."""
        chunks, count = [], 0
        with torch.no_grad():
            while count < num_samples:
                for out in self.step(epsilon):
                    if len(out["target"]):
                        chunks.append(out)
                        count += len(out["target"])
        return concat_samples(chunks)


def actor_process(model: DMCModel, cfg: TrainConfig, seed_seq: list[int], samples, frames, stop) -> None:
    """Loop of one actor process: collect chunks, put them on the ``samples`` queue until ``stop``.

    ``model`` lives in shared memory and is updated in place by the learner;
    ``frames`` is a shared counter of decisions made by all actors.
    """
    torch.set_num_threads(cfg.threads)
    actor = Actor.from_config(model, cfg, np.random.default_rng(seed_seq))
    while not stop.is_set():
        eps = epsilon_at(frames.value, cfg.epsilon, cfg.epsilon_final, cfg.epsilon_decay_frames)
        before = actor.frames
        chunk = actor.collect(cfg.chunk_size, eps)
        with frames.get_lock():
            frames.value += actor.frames - before
        while not stop.is_set():
            try:
                samples.put(chunk, timeout=0.5)
                break
            except queue_lib.Full:
                continue
