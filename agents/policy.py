"""Policy agents: a softmax over the legal actions of each decision.

The policy learner (:mod:`train.ppo`) trains the same five networks as DMC
(:class:`agents.dmc.ScoreModel`: one per kind of decision, each scoring
(state, action) features, so a decision costs only its legal actions) but reads
their scores as logits::

    pi(a | s) = exp(score(s, a)) / sum over the legal b of exp(score(s, b))

A checkpoint of that learner holds the same weights as a DMC one (and the
entry ``score_kind: logits``); :class:`PolicyAgent` plays it. It sees what a DMC
agent sees and nothing more: the seat's observation and its legal actions.
The critic that the learner trains beside it (which reads the hidden hands) is
not part of the agent, nor of what the registry loads.

Played greedily (the default, as in the arena) it takes the most probable
action; with ``sample`` it draws from the softmax (the actors' play).
"""

from __future__ import annotations

import numpy as np
import torch

from doudizhu_env import engine
from doudizhu_env.legal import bits_to_ids

from .dmc import DMCAgent, ScoreModel, segment_argmax


def segment_log_softmax(logits: torch.Tensor, seg: torch.Tensor, segments: int) -> torch.Tensor:
    """Log-softmax of ``logits`` within each segment: ``seg[m]`` is the segment (state row) of
    ``logits[m]``, one of ``segments``; differentiable."""
    top = torch.full((segments,), -torch.inf, dtype=logits.dtype, device=logits.device)
    top = top.scatter_reduce(0, seg, logits.detach(), reduce="amax", include_self=True)
    shifted = logits - top[seg]
    total = torch.zeros(segments, dtype=logits.dtype, device=logits.device).index_add(0, seg, shifted.exp())
    return shifted - total.log()[seg]


class PolicyAgent(DMCAgent):
    """Plays the softmax policy of a :class:`~agents.dmc.ScoreModel`'s scores over the legal actions:
    greedily (its most probable action), or drawing from it with ``sample``."""

    name = "ppo"

    def __init__(self, model: ScoreModel, sample: bool = False, rng: np.random.Generator | None = None,
                 epsilon: float = 0.0, bidding_epsilon: float | None = None,
                 doubling_epsilon: float | None = None):
        super().__init__(model, epsilon, rng, bidding_epsilon, doubling_epsilon)
        self.sample = sample

    def pick(self, scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """The most probable action of each segment, or (``sample``) one drawn from the softmax of
        its scores (the Gumbel-max trick: the best of the scores plus Gumbel noise)."""
        if not self.sample:
            return segment_argmax(scores, offsets)
        return segment_argmax(scores + self.rng.gumbel(size=len(scores)).astype(scores.dtype), offsets)

    def chosen_log_pi(self, actions: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """log pi of each game's action (games with a decision): of the softmax when drawing from
        it (``sample``), else greedy's (:meth:`agents.dmc.DMCAgent.chosen_log_pi`)."""
        if not self.sample:
            return super().chosen_log_pi(actions, ids, offsets)
        counts = np.diff(offsets)
        seg = np.repeat(np.arange(len(counts)), counts)
        chosen = np.flatnonzero(ids == actions[seg])  # one per game with a decision, in game order
        logp = segment_log_softmax(torch.from_numpy(self.last_scores), torch.from_numpy(seg), len(counts))
        return logp.numpy()[chosen].astype(np.float64)

    @torch.no_grad()
    def action_probs(self, state: engine.State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(ids, offsets, probs)``: the legal actions of each game (``ids[offsets[i]:offsets[i+1]]``)
        and the policy's probability of each."""
        ids, offsets = bits_to_ids(engine.legal_bits(state))
        scores = self.action_values(state, ids, offsets)
        seg = torch.from_numpy(np.repeat(np.arange(state.num_games), np.diff(offsets)))
        logp = segment_log_softmax(torch.from_numpy(scores), seg, state.num_games)
        return ids, offsets, logp.exp().numpy()


def policy_agent(model: ScoreModel) -> DMCAgent:
    """The greedy agent of a model by what its scores are (:attr:`~agents.dmc.ScoreModel.score_kind`):
    Q-values (:class:`~agents.dmc.DMCAgent`) or a policy's logits (:class:`PolicyAgent`)."""
    return PolicyAgent(model) if model.score_kind == "logits" else DMCAgent(model)

