"""The DMC learner: regress Q(s, a) of the chosen actions on their Monte-Carlo targets.

With a model built with ``hand_head`` (and batches that carry ``hands``), the
loss also has the hand head's cross-entropy against the two hidden hands,
weighted by ``hand_loss_weight`` (:mod:`agents.dmc`).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from agents.dmc import HAND_CLASSES, NETWORKS, DMCModel, ModelOutputError

from .buffer import unpack_obs


class AdamLearner:
    """What both learners share: an Adam ``optimizer`` whose learning rate a run sets (decay)."""

    optimizer: torch.optim.Optimizer

    @staticmethod
    def adam(params, learning_rate: float) -> torch.optim.Adam:
        """Adam over ``params``, fused (one kernel over all tensors: 6 ms a step where the per-tensor
        loop takes 16 ms for the PPO learner's 4.6 M parameters on one CPU thread)."""
        return torch.optim.Adam(params, lr=learning_rate, fused=True)

    @property
    def learning_rate(self) -> float:
        return self.optimizer.param_groups[0]["lr"]

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = value


class Learner(AdamLearner):
    """Adam on the mean squared error between Q(s, a) and the target, all networks together (plus
    the hand head's weighted cross-entropy where the model has one)."""

    def __init__(self, model: DMCModel, learning_rate: float, max_grad_norm: float, device: str = "cpu",
                 hand_loss_weight: float = 1.0):
        self.model = model
        self.hand_loss_weight = hand_loss_weight
        self.device = torch.device(device)
        self.optimizer = self.adam(model.parameters(), learning_rate)
        self.max_grad_norm = max_grad_norm
        self.updates = 0

    def _forward(self, batch: dict[str, np.ndarray], obs: torch.Tensor,
                 pos: np.ndarray) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Q of the batch's actions, and the hand head's cross-entropy (None without a hand head)."""
        ids = batch["action"].astype(np.int64)
        if not self.model.cfg.hand_head:
            return self.model.q_values(obs, pos, ids, np.arange(len(ids))), None
        if "hands" not in batch:
            raise ValueError("the model has a hand head but the batch has no 'hands': expected "
                             "samples from actors of the same model")
        q, logits = self.model.q_and_hands(obs, pos, ids)
        labels = torch.from_numpy(np.minimum(batch["hands"], HAND_CLASSES - 1).astype(np.int64))
        return q, F.cross_entropy(logits.reshape(-1, HAND_CLASSES), labels.to(self.device).reshape(-1))

    def update(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        """One gradient step on ``batch``; returns the loss and mean target overall and per network."""
        obs = torch.from_numpy(unpack_obs(batch["obs"])).to(self.device)
        pos = batch["network"].astype(np.int64)
        target = torch.from_numpy(batch["target"].astype(np.float32)).to(self.device)
        q, hands = self._forward(batch, obs, pos)
        errors = (q - target) ** 2
        loss = errors.mean() if hands is None else errors.mean() + self.hand_loss_weight * hands
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        stats = {"loss/all": loss.item()}
        if hands is not None:
            stats["loss/hands"] = hands.item()
        if not np.isfinite(stats["loss/all"]):  # the weights are lost; stop before they are saved or played
            raise ModelOutputError(f"the loss of update {self.updates} is {stats['loss/all']}: the model "
                                   "produced NaN or infinite Q-values; expected finite numbers. Its weights "
                                   "have diverged (e.g. a learning rate too high)")
        per_sample, returns = errors.detach().cpu().numpy(), batch["target"]
        for p, name in enumerate(NETWORKS):
            rows = pos == p
            if rows.any():
                stats[f"loss/{name}"] = float(per_sample[rows].mean())
                stats[f"return/{name}"] = float(returns[rows].mean())
        return stats
