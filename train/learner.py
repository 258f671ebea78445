"""The DMC learner: regress Q(s, a) of the chosen actions on their Monte-Carlo targets."""

from __future__ import annotations

import numpy as np
import torch

from agents.dmc import NETWORKS, DMCModel, ModelOutputError

from .buffer import unpack_obs


class Learner:
    """Adam on the mean squared error between Q(s, a) and the target, all networks together."""

    def __init__(self, model: DMCModel, learning_rate: float, max_grad_norm: float, device: str = "cpu"):
        self.model = model
        self.device = torch.device(device)
        self.optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
        self.max_grad_norm = max_grad_norm
        self.updates = 0

    @property
    def learning_rate(self) -> float:
        return self.optimizer.param_groups[0]["lr"]

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = value

    def update(self, batch: dict[str, np.ndarray]) -> dict[str, float]:
        """One gradient step on ``batch``; returns the loss and mean target overall and per network."""
        obs = torch.from_numpy(unpack_obs(batch["obs"])).to(self.device)
        pos = batch["network"].astype(np.int64)
        target = torch.from_numpy(batch["target"].astype(np.float32)).to(self.device)
        n = len(target)
        q = self.model.q_values(obs, pos, batch["action"].astype(np.int64), np.arange(n))
        errors = (q - target) ** 2
        loss = errors.mean()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        stats = {"loss/all": loss.item()}
        if not np.isfinite(stats["loss/all"]):  # the weights are lost; stop before they are saved or played
            raise ModelOutputError(f"the loss of update {self.updates} is {stats['loss/all']}: the model "
                                   "produced NaN or infinite Q-values; expected finite numbers. Its weights "
                                   "have diverged (e.g. a learning rate too high)")
        errors, target = errors.detach().cpu().numpy(), batch["target"]
        for p, name in enumerate(NETWORKS):
            rows = pos == p
            if rows.any():
                stats[f"loss/{name}"] = float(errors[rows].mean())
                stats[f"return/{name}"] = float(target[rows].mean())
        return stats
