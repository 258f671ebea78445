"""Deep Monte-Carlo (DouZero's learner): regress Q(s, a) of the chosen actions on their Monte-Carlo targets.

Each update is one Adam step on the mean squared error between the Q-values of
a batch's actions and the results of their hands (the run's ``objective``),
all five networks together, gradients clipped at ``max_grad_norm``. The actors
play epsilon-greedily on the same Q-values.

With a model built with ``hand_head`` (and samples that carry the
``hidden_hands``), the loss also has the hand head's cross-entropy against the
two hidden hands, weighted by ``hand_loss_weight`` (:mod:`agents.dmc`).

With ``threads`` above 1 (on the CPU) the update runs the five networks'
forward and backward passes on that many threads at once, whole networks to
each thread (:meth:`train.learner.Learner.map_networks`), each thread unpacking
its own rows' observations; the weights come out the same bytes as on one
thread.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from agents.dmc import HAND_CLASSES, NETWORKS, ModelOutputError, ScoreModel
from doudizhu_env.cards import NUM_RANKS

from .learner import Learner
from .samples import Samples, unpack_obs

#: The hand head's labels per sample: the two hidden hands' counts of each rank.
HAND_LABELS = 2 * NUM_RANKS


class DMCLearner(Learner):
    """Adam on the mean squared error between Q(s, a) and the target (plus the hand head's weighted
    cross-entropy where the model has one)."""

    name = "dmc"
    score_kind = "q_values"

    def __init__(self, model: ScoreModel, cfg, device: str = "cpu"):
        super().__init__(model, cfg, device)
        self.optimizer = self.adam(model.parameters(), cfg.learning_rate)

    def _forward(self, action: np.ndarray, network: np.ndarray, hidden_hands: np.ndarray | None,
                 obs: torch.Tensor, reduction: str = "mean") -> tuple[torch.Tensor, torch.Tensor | None]:
        """Q of the rows' actions, and the hand head's cross-entropy, its ``reduction`` over the rows'
        labels (None without a hand head)."""
        ids, network = action.astype(np.int64), network.astype(np.int64)
        if not self.model.cfg.hand_head:
            return self.model.score(obs, network, ids, np.arange(len(ids))), None
        if hidden_hands is None:
            raise ValueError("the model has a hand head but the batch has no hidden_hands: expected "
                             "samples from actors of the same model")
        q, logits = self.model.q_and_hands(obs, network, ids)
        labels = torch.from_numpy(np.minimum(hidden_hands, HAND_CLASSES - 1).astype(np.int64))
        return q, F.cross_entropy(logits.reshape(-1, HAND_CLASSES), labels.to(self.device).reshape(-1),
                                  reduction=reduction)

    def update(self, batch: Samples) -> dict[str, float]:
        """One gradient step on ``batch``; the loss and mean target overall and per network."""
        target = torch.from_numpy(batch.target.astype(np.float32)).to(self.device)
        if self.pool is not None:
            return self._step(*self._backward_by_network(batch, target), batch)
        obs = torch.from_numpy(batch.observations()).to(self.device)
        q, hands = self._forward(batch.action, batch.network, batch.hidden_hands, obs)
        errors = (q - target) ** 2
        loss = errors.mean() if hands is None else errors.mean() + self.cfg.hand_loss_weight * hands
        self._check_finite(loss.item())
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        hand_loss = None if hands is None else hands.item()
        return self._step(loss.item(), errors.detach().cpu().numpy(), hand_loss, batch)

    def _check_finite(self, loss: float) -> None:
        """Stop before the step where the loss is not a number: the weights stay the last good ones."""
        if not np.isfinite(loss):
            raise ModelOutputError(f"the loss of update {self.updates + 1} is {loss}: the model "
                                   "produced NaN or infinite Q-values; expected finite numbers. Its weights "
                                   "have diverged (e.g. a learning rate too high)")

    def _step(self, loss: float, per_sample: np.ndarray, hands: float | None,
              batch: Samples) -> dict[str, float]:
        """Clip the gradients, step Adam; the statistics of the update."""
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        stats = {"loss/all": loss}
        if hands is not None:
            stats["loss/hands"] = hands
        for index, name in enumerate(NETWORKS):
            rows = batch.network == index
            if rows.any():
                stats[f"loss/{name}"] = float(per_sample[rows].mean())
                stats[f"return/{name}"] = float(batch.target[rows].mean())
        return stats

    def _backward_by_network(self, batch: Samples,
                             target: torch.Tensor) -> tuple[float, np.ndarray, float | None]:
        """The gradients of the batch's loss, each network's term (its forward and backward pass) on
        one of :attr:`pool`'s threads; the loss, the per-sample errors and the hand head's loss.

        A network's rows run as in one pass (:meth:`_forward` on them alone), so the gradients are
        the same bytes as one pass over the batch."""
        n = len(batch)
        self.optimizer.zero_grad(set_to_none=True)
        passes = self.map_networks(lambda rows: self._network_pass(rows, batch, target), batch.network)
        per_sample = np.zeros(n, np.float32)
        hand_sums = []
        for rows, errors, hands in passes:
            per_sample[rows] = errors
            hand_sums += [] if hands is None else [hands]
        loss = float(per_sample.astype(np.float64).mean())
        hand_loss = sum(hand_sums) / (n * HAND_LABELS) if hand_sums else None
        if hand_loss is not None:
            loss += self.cfg.hand_loss_weight * hand_loss
        self._check_finite(loss)
        return loss, per_sample, hand_loss

    def _network_pass(self, rows: np.ndarray, batch: Samples,
                      target: torch.Tensor) -> tuple[np.ndarray, np.ndarray, float | None]:
        """Forward and backward pass of one network's ``rows`` of the batch (its term of the loss, its
        observations unpacked here); the rows, their squared errors and the sum of their hand head's
        cross-entropy."""
        n, at = len(batch), torch.from_numpy(rows).to(self.device)
        obs = torch.from_numpy(unpack_obs(batch.obs[rows])).to(self.device)
        hidden = None if batch.hidden_hands is None else batch.hidden_hands[rows]
        q, hands = self._forward(batch.action[rows], batch.network[rows], hidden, obs, "sum")
        errors = (q - target[at]) ** 2
        loss = errors.sum() / n
        if hands is not None:  # the mean over the batch's labels, as on one thread
            loss = loss + hands * (self.cfg.hand_loss_weight / (n * HAND_LABELS))
        loss.backward()
        return rows, errors.detach().cpu().numpy(), None if hands is None else hands.item()
