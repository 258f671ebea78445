"""Deep Monte-Carlo (DouZero's learner): regress Q(s, a) of the chosen actions on their Monte-Carlo targets.

Each update is one Adam step on the mean squared error between the Q-values of
a batch's actions and the results of their hands (the run's ``objective``),
all five networks together, gradients clipped at ``max_grad_norm``. The actors
play epsilon-greedily on the same Q-values.

With a model built with ``hand_head`` (and samples that carry the
``hidden_hands``), the loss also has the hand head's cross-entropy against the
two hidden hands, weighted by ``hand_loss_weight`` (:mod:`agents.dmc`).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from agents.dmc import HAND_CLASSES, NETWORKS, ModelOutputError, ScoreModel

from .learner import Learner
from .samples import Samples


class DMCLearner(Learner):
    """Adam on the mean squared error between Q(s, a) and the target (plus the hand head's weighted
    cross-entropy where the model has one)."""

    name = "dmc"
    score_kind = "q_values"

    def __init__(self, model: ScoreModel, cfg, device: str = "cpu"):
        super().__init__(model, cfg, device)
        self.optimizer = self.adam(model.parameters(), cfg.learning_rate)

    def _forward(self, batch: Samples, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Q of the batch's actions, and the hand head's cross-entropy (None without a hand head)."""
        ids, network = batch.action.astype(np.int64), batch.network.astype(np.int64)
        if not self.model.cfg.hand_head:
            return self.model.score(obs, network, ids, np.arange(len(ids))), None
        if batch.hidden_hands is None:
            raise ValueError("the model has a hand head but the batch has no hidden_hands: expected "
                             "samples from actors of the same model")
        q, logits = self.model.q_and_hands(obs, network, ids)
        labels = torch.from_numpy(np.minimum(batch.hidden_hands, HAND_CLASSES - 1).astype(np.int64))
        return q, F.cross_entropy(logits.reshape(-1, HAND_CLASSES), labels.to(self.device).reshape(-1))

    def update(self, batch: Samples) -> dict[str, float]:
        """One gradient step on ``batch``; the loss and mean target overall and per network."""
        obs = torch.from_numpy(batch.observations()).to(self.device)
        target = torch.from_numpy(batch.target.astype(np.float32)).to(self.device)
        q, hands = self._forward(batch, obs)
        errors = (q - target) ** 2
        loss = errors.mean() if hands is None else errors.mean() + self.cfg.hand_loss_weight * hands
        stats = {"loss/all": loss.item()}
        if not np.isfinite(stats["loss/all"]):  # stop before the step: the weights stay the last good ones
            raise ModelOutputError(f"the loss of update {self.updates + 1} is {stats['loss/all']}: the model "
                                   "produced NaN or infinite Q-values; expected finite numbers. Its weights "
                                   "have diverged (e.g. a learning rate too high)")
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        if hands is not None:
            stats["loss/hands"] = hands.item()
        per_sample = errors.detach().cpu().numpy()
        for index, name in enumerate(NETWORKS):
            rows = batch.network == index
            if rows.any():
                stats[f"loss/{name}"] = float(per_sample[rows].mean())
                stats[f"return/{name}"] = float(batch.target[rows].mean())
        return stats
