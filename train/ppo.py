"""PPO with a perfect-information critic: "perfect-training, imperfect-execution" (PerfectDou).

The policy is the five networks of :class:`agents.dmc.DMCModel` (one per kind of
decision: bidding, doubling and the three roles), their scores read as logits
over the legal actions of each decision (:mod:`agents.policy`); it reads the
seat's observation only. The critic (:class:`Critic`) has five networks of the
same shapes with no action part: V(s) from the seat's observation **plus** the
two hidden hands (the cards of the next seat and of the one after it; the
hole cards follow from them and the seat's own). It exists only here, in the
learner: checkpoints keep it apart from the policy's weights, and no agent
built from a checkpoint reads it.

One update (:meth:`PPOLearner.update`) takes a batch of whole hands from the
actors (:class:`train.buffer.EpisodeRecorder` with ``trajectories``):

1. the critic's values at the start of the update; the ratio's denominator is
   the log-probability of each action under the policy that drew it, as the
   actor recorded it (its weights a few updates older than the learner's at
   most; exploration included), so the ratio corrects for that lag;
2. generalized advantage estimates (:func:`gae`) over each seat's decisions in
   a hand, whose only reward is the hand's result at its end, shaped by the
   run's ``objective`` as DMC's targets are (``adp``, ``wp``, ``logadp``);
3. ``ppo_epochs`` passes of ``minibatch_size`` gradient steps on the clipped
   objective, the critic's squared error (``value_coef``) and the entropy
   bonus (``entropy_coef``), advantages normalized per batch.

A warm start (``warm_start_frames``) is behaviour cloning: decisions that the
warm-start agent made (``warm_start`` in the samples) are trained on the
cross-entropy of its choice in place of the clipped objective, and the critic
learns the values of its play.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from agents.checkpoint import CheckpointError, check_finite
from agents.dmc import NETWORKS, DMCAgent, DMCModel, ModelConfig, ModelOutputError, StateEncoder
from agents.policy import PolicyAgent, segment_log_softmax
from doudizhu_env.checks import short
from doudizhu_env.observation import CARD_BITS, card_bits

from .learner import Learner, Recording
from .samples import Samples

#: The critic's inputs beyond the seat's observation: card bits of the two hidden hands.
CRITIC_INPUTS = 2 * CARD_BITS


def critic_input(obs: torch.Tensor, hands: np.ndarray) -> torch.Tensor:
    """``(N, OBS_SIZE + CRITIC_INPUTS)``: the observations, then the card bits of the hidden hands
    (``hands``: ``(N, 2, NUM_RANKS)`` counts, the next seat's and the one after it)."""
    hidden = torch.from_numpy(card_bits(np.asarray(hands)).reshape(len(hands), -1)).to(obs.device)
    return torch.cat([obs, hidden], dim=1)


class ValueNet(StateEncoder):
    """V(s) of one network: the state embedding over the observation and the hidden hands, then one
    ReLU layer of ``head_hidden`` units and a scalar."""

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg, CRITIC_INPUTS)
        self.value = nn.Sequential(nn.Linear(cfg.hidden, cfg.head_hidden), nn.ReLU(),
                                   nn.Linear(cfg.head_hidden, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.value(self.embed(x)).squeeze(-1)


class Critic(nn.Module):
    """The five value networks (one per entry of :data:`agents.dmc.NETWORKS`), for training only."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.nets = nn.ModuleDict({p: ValueNet(cfg) for p in NETWORKS})

    def forward(self, x: torch.Tensor, network: np.ndarray) -> torch.Tensor:
        """V of each row of ``x`` (:func:`critic_input`) by its ``network``."""
        out = torch.zeros(len(x), dtype=torch.float32, device=x.device)
        for index in np.unique(network):
            rows = torch.from_numpy(np.flatnonzero(network == index)).to(x.device)
            out[rows] = self.nets[NETWORKS[index]](x[rows])
        return out


def gae(values: np.ndarray, target: np.ndarray, steps_left: np.ndarray, gamma: float,
        lam: float) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns of whole trajectories laid out one after the other (each seat's
    decisions in a hand, in order; ``steps_left`` of them after each row, 0 at a trajectory's last,
    whose reward is its ``target``; every other reward is 0, and nothing follows the last)."""
    values = values.astype(np.float64)
    last = steps_left == 0
    following = np.where(last, 0.0, np.r_[values[1:], 0.0])
    delta = np.where(last, target, 0.0) + gamma * following - values
    advantages = delta.copy()
    for k in range(1, int(steps_left.max(initial=0)) + 1):  # from each trajectory's end backwards
        rows = np.flatnonzero(steps_left == k)
        advantages[rows] += gamma * lam * advantages[rows + 1]
    return advantages, advantages + values


def legal_of(batch: Samples, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The legal action ids of the samples ``rows`` of ``batch``, one after the other, and the row
    (an index into ``rows``) of each."""
    assert batch.legal is not None and batch.legal_count is not None, "samples without trajectories"
    counts = batch.legal_count.astype(np.int64)
    starts = np.cumsum(counts) - counts
    mine = counts[rows]
    seg = np.repeat(np.arange(len(rows)), mine)
    within = np.arange(len(seg)) - np.repeat(np.cumsum(mine) - mine, mine)
    return batch.legal[np.repeat(starts[rows], mine) + within].astype(np.int64), seg


class PPOLearner(Learner):
    """Adam on the PPO loss of the policy (a :class:`~agents.dmc.DMCModel`) and the critic together."""

    name = "ppo"
    score_kind = "logits"
    recording = Recording(hidden_hands=True, trajectories=True)
    learns_labels = True

    def __init__(self, model: DMCModel, cfg, device: str = "cpu"):
        super().__init__(model, cfg, device)
        self.critic = Critic(model.cfg).to(self.device)
        params = [*model.parameters(), *self.critic.parameters()]
        self.optimizer = self.adam(params, cfg.learning_rate)
        self.generator = torch.Generator().manual_seed(cfg.seed)  # the minibatches' shuffles

    @classmethod
    def check_config(cls, cfg) -> None:
        from .config import ConfigError

        if cfg.minibatch_size > cfg.batch_size:
            raise ConfigError(f"minibatch_size must be in 1..batch_size ({cfg.batch_size}), got "
                              f"{cfg.minibatch_size}")

    @classmethod
    def acting_agent(cls, model: DMCModel, rng: np.random.Generator, bidding_epsilon: float | None,
                     doubling_epsilon: float | None) -> DMCAgent:
        """The policy, drawing each move from its softmax (then the run's epsilon exploration)."""
        return PolicyAgent(model, sample=True, rng=rng, bidding_epsilon=bidding_epsilon,
                           doubling_epsilon=doubling_epsilon)

    def checkpoint_state(self) -> dict:
        """The critic and the shuffles' generator (``rng["shuffle"]``): for ``--resume`` only, no
        agent reads them."""
        return {"critic": self.critic.state_dict(), "rng": {"shuffle": self.generator.get_state()}}

    def resume(self, data: dict, path: str) -> None:
        super().resume(data, path)
        if isinstance(data.get("critic"), dict):
            check_finite(path, data["critic"], "critic weights")
        try:
            self.critic.load_state_dict(data["critic"])
            self.generator.set_state(data["rng"]["shuffle"])
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            raise CheckpointError(f"{path!r}: no critic of this model to resume a ppo run from "
                                  f"({short(str(err), 120)})") from None

    def exploration(self, means: dict[str, float], epsilon: float, warming: bool) -> str:
        """The policy's entropy (its exploration), and whether it is still cloning the warm start."""
        return f"entropy {means.get('ppo/entropy', float('nan')):.3f}" + (" (cloning)" if warming else "")

    def log_probs(self, batch: Samples, obs: torch.Tensor, network: np.ndarray,
                  rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-probability of the action taken, and the policy's entropy, at the samples ``rows``."""
        ids, seg = legal_of(batch, rows)
        seg_t = torch.from_numpy(seg).to(self.device)
        scores = self.model.q_values(obs[torch.from_numpy(rows).to(self.device)], network[rows], ids, seg)
        logp = segment_log_softmax(scores, seg_t, len(rows))
        chosen = ids == batch.action[rows][seg]
        if chosen.sum() != len(rows):
            raise ValueError("a sample's action is not among its legal actions; expected samples of "
                             "train.actor with trajectories")
        entropy = -torch.zeros(len(rows), device=self.device).index_add(0, seg_t, logp.exp() * logp)
        return logp[torch.from_numpy(chosen).to(self.device)], entropy

    def update(self, batch: Samples) -> dict[str, float]:
        """``ppo_epochs`` passes of minibatch steps over ``batch`` (whole hands); the mean statistics."""
        assert batch.hidden_hands is not None and batch.steps_left is not None, "samples without trajectories"
        assert batch.warm_start is not None and batch.log_prob is not None
        cfg, n = self.cfg, len(batch)
        obs = torch.from_numpy(batch.observations()).to(self.device)
        network = batch.network.astype(np.int64)
        seen = critic_input(obs, batch.hidden_hands)
        with torch.no_grad():
            values = self.critic(seen, network).cpu().numpy()
        advantages, returns = gae(values, batch.target, batch.steps_left, cfg.gamma, cfg.gae_lambda)
        played = ~batch.warm_start
        if played.sum() > 1:
            spread = advantages[played].std() + 1e-8
            advantages = (advantages - advantages[played].mean()) / spread
        fixed = {"adv": torch.from_numpy(advantages.astype(np.float32)).to(self.device),
                 "ret": torch.from_numpy(returns.astype(np.float32)).to(self.device),
                 "old": torch.from_numpy(batch.log_prob).to(self.device),
                 "warm_start": torch.from_numpy(batch.warm_start).to(self.device)}
        stats: dict[str, list[float]] = {}
        for _ in range(cfg.ppo_epochs):
            order = torch.randperm(n, generator=self.generator).numpy()
            for start in range(0, n, cfg.minibatch_size):
                rows = order[start:start + cfg.minibatch_size]
                for key, value in self._step(batch, obs, seen, network, rows, fixed).items():
                    stats.setdefault(key, []).append(value)
        out = {key: float(np.mean(values)) for key, values in stats.items()}
        for index, name in enumerate(NETWORKS):
            if (network == index).any():
                out[f"return/{name}"] = float(batch.target[network == index].mean())
        return out

    def _step(self, batch: Samples, obs, seen, network, rows: np.ndarray, fixed: dict) -> dict[str, float]:
        """One gradient step on the samples ``rows``."""
        cfg, at = self.cfg, torch.from_numpy(rows).to(self.device)
        logp, entropy = self.log_probs(batch, obs, network, rows)
        ratio = (logp - fixed["old"][at]).exp()
        adv, cloned = fixed["adv"][at], fixed["warm_start"][at]
        clipped = -torch.min(ratio * adv, ratio.clamp(1 - cfg.ppo_clip, 1 + cfg.ppo_clip) * adv)
        policy = torch.where(cloned, -logp, clipped).mean()  # the warm-start agent's move: cross-entropy
        value = ((self.critic(seen[at], network[rows]) - fixed["ret"][at]) ** 2).mean()
        loss = policy + cfg.value_coef * value - cfg.entropy_coef * entropy.mean()
        if not torch.isfinite(loss):  # the weights are lost; stop before they are saved or played
            raise ModelOutputError(f"the loss of update {self.updates + 1} is {loss.item()}: the policy or "
                                   "critic produced NaN or infinite outputs; expected finite numbers. Its "
                                   "weights have diverged (e.g. a learning rate too high)")
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        params = [p for group in self.optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        stats = {"loss/all": loss.item(), "loss/policy": policy.item(), "loss/value": value.item(),
                 "ppo/entropy": entropy.mean().item()}
        if not bool(cloned.all()):
            played = ~cloned
            stats["ppo/clip_fraction"] = ((ratio[played] - 1).abs() > cfg.ppo_clip).float().mean().item()
            stats["ppo/approx_kl"] = (fixed["old"][at][played] - logp[played]).mean().item()
        if bool(cloned.any()):
            stats["ppo/cloned_share"] = cloned.float().mean().item()
        return stats
