"""PPO with a perfect-information critic: "perfect-training, imperfect-execution" (PerfectDou).

The policy is the five networks of :class:`agents.dmc.ScoreModel` (one per kind of
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
   the probability of each action under the policy that acted, pi_old, as the
   actor recorded it (its weights a few updates older than the learner's at
   most), so the ratio corrects for that lag;
2. generalized advantage estimates (:func:`gae`) over each seat's decisions in
   a hand, whose only reward is the hand's result at its end, shaped by the
   run's ``objective`` as DMC's targets are (``adp``, ``wp``, ``logadp``);
3. ``ppo_epochs`` passes of ``minibatch_size`` gradient steps on the clipped
   objective, the critic's squared error (``value_coef``) and the entropy
   bonus (``entropy_coef``), advantages normalized per batch.

Exploration is corrected for apart from the ratio ("decoupled" PPO, Hilton et
al. 2021, "Batch size-invariance for policy optimization"). Bids and
doublings are explored (``bidding_epsilon``, ``doubling_epsilon``): the
actor's move is then drawn from b = (1 - eps) pi_old + eps / n, not from
pi_old. Each sample's clipped
term is weighed by pi_old(a) / b(a) (at most 1 / (1 - eps); 1 where eps is 0)
and its ratio is pi / pi_old, so every explored move moves the policy, by its
advantage, whichever its sign. Were the ratio pi / b instead, a move explored
where pi_old is small would start below the clipping range (0.03 / 0.124 =
0.24 at eps 0.2 with two actions): a bad outcome would give no gradient, a
good one would, and such a move's probability is held up near where its
ratio enters the range (0.22 at eps 0.2 with two actions), whatever its
value. Measured so: after an hour of `configs/ppo_fast.yaml` the farmers'
probability of doubling had a median of 0.28 and no hand below 0.05; never
doubling would have gained 0.44 points a farmer hand (docs/training.md,
"Exploration and the clipped ratio").

A warm start (``warm_start_frames``) is behaviour cloning: decisions that the
warm-start agent made (``warm_start`` in the samples) are trained on the
cross-entropy of its choice in place of the clipped objective, and the critic
learns the values of its play.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from torch import nn

from agents.checkpoint import CHECKPOINT_NAME, CheckpointError, check_finite
from agents.dmc import MAX_WIDTH, NETWORKS, DMCAgent, ModelConfig, ModelOutputError, ScoreModel, StateEncoder
from agents.policy import PolicyAgent, segment_log_softmax
from doudizhu_env.checks import short
from doudizhu_env.observation import CARD_BITS, OBS_SIZE, card_bits

from .learner import Learner, Recording
from .samples import Samples, unpack_obs

#: The critic's inputs beyond the seat's observation: card bits of the two hidden hands.
CRITIC_INPUTS = 2 * CARD_BITS


def critic_input(obs: torch.Tensor, hands: np.ndarray) -> torch.Tensor:
    """``(N, OBS_SIZE + CRITIC_INPUTS)``: the observations, then the card bits of the hidden hands
    (``hands``: ``(N, 2, NUM_RANKS)`` counts, the next seat's and the one after it): what the
    separate critic reads."""
    return torch.cat([obs, hidden_bits(hands, obs.device)], dim=1)


#: Where the advantages come from (``advantages``): a pass over the batch, or each minibatch's own.
ADVANTAGES = ("batch", "minibatch")
#: The critics (``critic``): ``separate`` (:class:`Critic`, an encoder of its own) or ``shared``
#: (:class:`SharedCritic`, heads over the policy's state embedding).
CRITICS = ("separate", "shared")


def hidden_bits(hands: np.ndarray, device) -> torch.Tensor:
    """``(N, CRITIC_INPUTS)``: the card bits of the hidden hands (``hands``: ``(N, 2, NUM_RANKS)``
    counts, the next seat's and the one after it)."""
    return torch.from_numpy(card_bits(np.asarray(hands)).reshape(len(hands), -1)).to(device)


class ValueNet(StateEncoder):
    """V(s) of one network: the state embedding over the observation and the hidden hands, then one
    ReLU layer of ``head_hidden`` units and a scalar."""

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg, CRITIC_INPUTS)
        self.value = nn.Sequential(nn.Linear(cfg.hidden, cfg.head_hidden), nn.ReLU(),
                                   nn.Linear(cfg.head_hidden, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.value(self.embed(x)).squeeze(-1)


def value_head(inputs: int, width: int) -> nn.Module:
    """One ReLU layer of ``width`` units over ``inputs`` columns, then a scalar."""
    return nn.Sequential(nn.Linear(inputs, width), nn.ReLU(), nn.Linear(width, 1))


class Critic(nn.Module):
    """The five value networks (one per entry of :data:`agents.dmc.NETWORKS`), for training only:
    each encodes the observation and the hidden hands with an encoder of its own (:class:`ValueNet`,
    of the sizes ``cfg``). It reads :func:`critic_input`."""

    reads = "observation"

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.nets = nn.ModuleDict({name: ValueNet(cfg) for name in NETWORKS})

    def forward(self, x: torch.Tensor, network: np.ndarray) -> torch.Tensor:
        """V of each row of ``x`` (:func:`critic_input`) by its ``network``."""
        return by_network(self.nets, x, network)


class SharedCritic(nn.Module):
    """Five value heads over the policy's state embedding e(s) and the hidden hands' card bits, for
    training only. The hidden hands join above the policy's encoder, never inside it: what the
    policy acts on is the seat's observation alone; the value loss trains the encoder too (as the
    value head of an actor-critic network does), so the policy's embedding is encoded once for
    both. It reads ``[e(s), hidden_bits]``."""

    reads = "embedding"

    def __init__(self, cfg: ModelConfig, width: int):
        super().__init__()
        self.nets = nn.ModuleDict({name: value_head(cfg.hidden + CRITIC_INPUTS, width) for name in NETWORKS})

    def forward(self, x: torch.Tensor, network: np.ndarray) -> torch.Tensor:
        """V of each row of ``x`` (``[e(s), hidden_bits]``) by its ``network``."""
        return by_network(self.nets, x, network)


def by_network(nets: nn.ModuleDict, x: torch.Tensor, network: np.ndarray) -> torch.Tensor:
    """Each row of ``x`` through the net of its ``network`` (a scalar each)."""
    out = torch.zeros(len(x), dtype=torch.float32, device=x.device)
    for index in np.unique(network):
        rows = torch.from_numpy(np.flatnonzero(network == index)).to(x.device)
        out[rows] = nets[NETWORKS[index]](x[rows]).reshape(-1)
    return out


def make_critic(cfg, model_cfg: ModelConfig) -> nn.Module:
    """The critic the run's config asks for (``critic``, ``critic_hidden``)."""
    width = cfg.critic_hidden or model_cfg.head_hidden
    if cfg.critic == "shared":
        return SharedCritic(model_cfg, width)
    if not cfg.critic_hidden:
        return Critic(model_cfg)
    small = dataclasses.replace(model_cfg, hidden=cfg.critic_hidden, head_hidden=cfg.critic_hidden,
                                lstm_hidden=max(1, cfg.critic_hidden // 2), hand_head=False)
    return Critic(small)


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
    """Adam on the PPO loss of the policy (a :class:`~agents.dmc.ScoreModel`) and the critic together."""

    name = "ppo"
    score_kind = "logits"
    recording = Recording(hidden_hands=True, trajectories=True)
    learns_labels = True

    def __init__(self, model: ScoreModel, cfg, device: str = "cpu"):
        super().__init__(model, cfg, device)
        self.critic = make_critic(cfg, model.cfg).to(self.device)
        params = [*model.parameters(), *self.critic.parameters()]
        self.optimizer = self.adam(params, cfg.learning_rate)
        self.generator = torch.Generator().manual_seed(cfg.seed)  # the minibatches' shuffles

    @classmethod
    def check_config(cls, cfg) -> None:
        from .config import ConfigError

        if cfg.minibatch_size > cfg.batch_size:
            raise ConfigError(f"minibatch_size must be in 1..batch_size ({cfg.batch_size}), got "
                              f"{cfg.minibatch_size}")
        if cfg.advantages not in ADVANTAGES:
            raise ConfigError(f"advantages must be one of {ADVANTAGES}, got {short(cfg.advantages)}")
        if cfg.critic not in CRITICS:
            raise ConfigError(f"critic must be one of {CRITICS}, got {short(cfg.critic)}")
        if not 0 <= cfg.critic_hidden <= MAX_WIDTH:
            raise ConfigError(f"critic_hidden must be in 0..{MAX_WIDTH:,} (0: the model's sizes), got "
                              f"{cfg.critic_hidden}")

    @classmethod
    def acting_agent(cls, model: ScoreModel, rng: np.random.Generator, bidding_epsilon: float | None,
                     doubling_epsilon: float | None) -> DMCAgent:
        """The policy, drawing each move from its softmax (then the run's epsilon exploration)."""
        return PolicyAgent(model, sample=True, rng=rng, bidding_epsilon=bidding_epsilon,
                           doubling_epsilon=doubling_epsilon)

    def checkpoint_state(self) -> dict:
        """The critic and the shuffles' generator (``rng["shuffle"]``): for ``--resume`` only, no
        agent reads them."""
        return {"critic": self.critic.state_dict(), "rng": {"shuffle": self.generator.get_state()}}

    def resume(self, data: dict, path: str) -> None:
        """The critic and the shuffles' generator (first: a critic of another kind is the likelier
        mismatch), then the optimizer."""
        if not isinstance(data.get("critic"), dict):
            raise CheckpointError(f"{path!r}: no critic to resume a ppo run from; expected the "
                                  f"{CHECKPOINT_NAME} of a ppo run (an exported file has none)")
        check_finite(path, data["critic"], "critic weights")
        try:
            self.critic.load_state_dict(data["critic"])
            self.generator.set_state(data["rng"]["shuffle"])
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            raise CheckpointError(f"{path!r}: its critic does not fit this run's (critic: {self.cfg.critic}, "
                                  f"critic_hidden: {self.cfg.critic_hidden}; {short(str(err), 100)}); "
                                  "expected the settings of the run that wrote it") from None
        super().resume(data, path)

    def exploration(self, means: dict[str, float], epsilon: float, warming: bool) -> str:
        """The policy's entropy (its exploration), and whether it is still cloning the warm start."""
        return f"entropy {means.get('ppo/entropy', float('nan')):.3f}" + (" (cloning)" if warming else "")

    def forward(self, batch: Samples, obs: torch.Tensor, hidden: torch.Tensor, network: np.ndarray,
                rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Log-probability of the action taken, the policy's entropy and the critic's value at the
        samples ``rows`` (``obs``, ``hidden``: :func:`hidden_bits`, of the whole batch)."""
        at = torch.from_numpy(rows).to(self.device)
        ids, seg = legal_of(batch, rows)
        if self.critic.reads == "embedding":  # the policy's embedding, once for both
            embedding = self.model.embed(obs[at], network[rows])
            scores = self.model.score_embedded(embedding, network[rows], ids, seg)
            value = self.critic(torch.cat([embedding, hidden[at]], dim=1), network[rows])
        else:
            scores = self.model.score(obs[at], network[rows], ids, seg)
            value = self.critic(torch.cat([obs[at], hidden[at]], dim=1), network[rows])
        logp, entropy = self.log_probs(batch, scores, ids, seg, rows)
        return logp, entropy, value

    def values(self, obs: torch.Tensor, hidden: torch.Tensor, network: np.ndarray) -> np.ndarray:
        """The critic's values of a whole batch, without gradients (each network's rows on one of
        :attr:`pool`'s threads where there is one)."""
        if self.pool is None:
            return self._values(obs, hidden, network)
        out = np.empty(len(network), np.float32)

        def part(positions: np.ndarray) -> None:
            at = torch.from_numpy(positions).to(self.device)
            out[positions] = self._values(obs[at], hidden[at], network[positions])

        self.map_networks(part, network)
        return out

    def _values(self, obs: torch.Tensor, hidden: torch.Tensor, network: np.ndarray) -> np.ndarray:
        with torch.no_grad():  # per thread: a pool's thread does not inherit the caller's mode
            if self.critic.reads == "embedding":
                seen = torch.cat([self.model.embed(obs, network), hidden], dim=1)
            else:
                seen = torch.cat([obs, hidden], dim=1)
            return self.critic(seen, network).cpu().numpy()

    def log_probs(self, batch: Samples, scores: torch.Tensor, ids: np.ndarray, seg: np.ndarray,
                  rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-probability of the action taken, and the policy's entropy, at the samples ``rows``
        (``scores`` of their legal actions ``ids``, each of the row ``seg``)."""
        seg_t = torch.from_numpy(seg).to(self.device)
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
        assert batch.warm_start is not None and batch.log_prob is not None and batch.log_pi is not None
        cfg, n = self.cfg, len(batch)
        obs = self.observations(batch)
        network = batch.network.astype(np.int64)
        hidden = hidden_bits(batch.hidden_hands, self.device)
        fixed = {"old": torch.tensor(batch.log_pi, device=self.device),  # copies: a Ray batch is read-only
                 "weight": torch.tensor(np.exp(batch.log_pi - batch.log_prob), device=self.device),
                 "warm_start": torch.tensor(batch.warm_start, device=self.device)}
        if cfg.advantages == "batch":  # the critic's values of the whole batch, before its first step
            values = self.values(obs, hidden, network)
            advantages, returns = self.advantages(values, batch, np.arange(n))
            fixed.update(adv=torch.from_numpy(advantages).to(self.device),
                         ret=torch.from_numpy(returns).to(self.device))
        stats: dict[str, list[float]] = {}
        for _ in range(cfg.ppo_epochs):
            for rows in self.minibatches(batch):
                for key, value in self._step(batch, obs, hidden, network, rows, fixed).items():
                    stats.setdefault(key, []).append(value)
        out = {key: float(np.mean(values)) for key, values in stats.items()}
        for index, name in enumerate(NETWORKS):
            if (network == index).any():
                out[f"return/{name}"] = float(batch.target[network == index].mean())
        return out

    def observations(self, batch: Samples) -> torch.Tensor:
        """The batch's observations, unpacked (each network's rows on one of :attr:`pool`'s threads
        where there is one)."""
        if self.pool is None:
            return torch.from_numpy(batch.observations()).to(self.device)
        obs = np.empty((len(batch), OBS_SIZE), np.float32)

        def unpack(rows: np.ndarray) -> None:
            obs[rows] = unpack_obs(batch.obs[rows])

        self.map_networks(unpack, batch.network)
        return torch.from_numpy(obs).to(self.device)

    def advantages(self, values: np.ndarray, batch: Samples,
                   rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """GAE advantages (normalized over the rows the policy played, not the warm-start agent's)
        and returns of ``rows`` (whole trajectories, in order), from the critic's ``values`` of them."""
        assert batch.steps_left is not None and batch.warm_start is not None
        cfg = self.cfg
        advantages, returns = gae(values, batch.target[rows], batch.steps_left[rows], cfg.gamma,
                                  cfg.gae_lambda)
        played = ~batch.warm_start[rows]
        if played.sum() > 1:
            spread = advantages[played].std() + 1e-8
            advantages = (advantages - advantages[played].mean()) / spread
        return advantages.astype(np.float32), returns.astype(np.float32)

    def minibatches(self, batch: Samples) -> list[np.ndarray]:
        """One epoch's minibatches of ``minibatch_size`` samples, shuffled: any samples (``advantages:
        batch``), or whole trajectories in order, as many as make ``minibatch_size`` samples or more
        (``advantages: minibatch``, whose steps compute the advantages of their own rows)."""
        n, size = len(batch), self.cfg.minibatch_size
        if self.cfg.advantages == "batch":
            order = torch.randperm(n, generator=self.generator).numpy()
            return [order[start:start + size] for start in range(0, n, size)]
        assert batch.steps_left is not None
        ends = np.flatnonzero(batch.steps_left == 0) + 1  # one past each trajectory's last row
        starts = np.r_[0, ends[:-1]]
        out, part, count = [], [], 0
        for t in torch.randperm(len(ends), generator=self.generator).numpy():
            part.append(np.arange(starts[t], ends[t]))
            count += ends[t] - starts[t]
            if count >= size:  # full: the trajectory that filled it stays whole
                out.append(np.concatenate(part))
                part, count = [], 0
        return out + ([np.concatenate(part)] if part else [])

    def _step(self, batch: Samples, obs, hidden, network, rows: np.ndarray, fixed: dict) -> dict[str, float]:
        """One gradient step on the samples ``rows``. With :attr:`pool`, each network's forward and
        backward pass runs on one of its threads: the loss's terms are sums over rows divided by the
        minibatch's size, so the networks' terms add up to the minibatch's means and their backward
        passes give the gradients of one pass, the same bytes."""
        cfg, n = self.cfg, len(rows)
        parts = self._forward_parts(batch, obs, hidden, network, rows)
        adv, ret = self._targets(batch, rows, parts, fixed)
        at = torch.from_numpy(rows).to(self.device)
        old, weight, cloned = fixed["old"][at], fixed["weight"][at], fixed["warm_start"][at]
        terms = {}
        for first, (positions, logp, entropy, value) in parts.items():
            mine = torch.from_numpy(positions).to(self.device)
            terms[first] = self._terms(logp, entropy, value, adv[mine], ret[mine], old[mine], weight[mine],
                                       cloned[mine], n)
        total = {key: sum(t[key].item() for t in terms.values())
                 for key in ("loss", "policy", "value", "entropy")}
        if not np.isfinite(total["loss"]):  # the weights are lost; stop before they are saved or played
            raise ModelOutputError(f"the loss of update {self.updates + 1} is {total['loss']}: the policy or "
                                   "critic produced NaN or infinite outputs; expected finite numbers. Its "
                                   "weights have diverged (e.g. a learning rate too high)")
        self.optimizer.zero_grad(set_to_none=True)
        if self.pool is None:
            terms[0]["loss"].backward()
        else:
            self.map_networks(lambda positions: terms[int(positions[0])]["loss"].backward(), network[rows])
        params = [p for group in self.optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        ratio, logp = torch.empty(n, device=self.device), torch.empty(n, device=self.device)
        for first, (positions, *_) in parts.items():
            mine = torch.from_numpy(positions).to(self.device)
            ratio[mine], logp[mine] = terms[first]["ratio"], terms[first]["logp"]
        stats = {"loss/all": total["loss"], "loss/policy": total["policy"], "loss/value": total["value"],
                 "ppo/entropy": total["entropy"]}
        if not bool(cloned.all()):
            played = ~cloned
            stats["ppo/clip_fraction"] = ((ratio[played] - 1).abs() > cfg.ppo_clip).float().mean().item()
            stats["ppo/approx_kl"] = (old[played] - logp[played]).mean().item()
        if bool(cloned.any()):
            stats["ppo/cloned_share"] = cloned.float().mean().item()
        return stats

    def _forward_parts(self, batch: Samples, obs, hidden, network, rows: np.ndarray) -> dict[int, tuple]:
        """:meth:`forward` of the samples ``rows``: ``{first position: (positions in rows, log-prob,
        entropy, value)}``, one part per network on :attr:`pool`'s threads, or one of all the rows."""
        if self.pool is None:
            return {0: (np.arange(len(rows)), *self.forward(batch, obs, hidden, network, rows))}
        parts = self.map_networks(
            lambda positions: (positions, *self.forward(batch, obs, hidden, network, rows[positions])),
            network[rows])
        return {int(part[0][0]): part for part in parts}

    def _targets(self, batch: Samples, rows: np.ndarray, parts: dict[int, tuple],
                 fixed: dict) -> tuple[torch.Tensor, torch.Tensor]:
        """The advantages and returns of the samples ``rows``: the batch's (``advantages: batch``),
        or from this step's values of them (whole trajectories: no pass over the batch before it)."""
        if "adv" in fixed:
            at = torch.from_numpy(rows).to(self.device)
            return fixed["adv"][at], fixed["ret"][at]
        values = np.empty(len(rows), np.float32)
        for positions, _, _, value in parts.values():
            values[positions] = value.detach().cpu().numpy()
        advantages, returns = self.advantages(values, batch, rows)
        return torch.from_numpy(advantages).to(self.device), torch.from_numpy(returns).to(self.device)

    def _terms(self, logp: torch.Tensor, entropy: torch.Tensor, value: torch.Tensor, adv: torch.Tensor,
               ret: torch.Tensor, old: torch.Tensor, weight: torch.Tensor, cloned: torch.Tensor,
               n: int) -> dict[str, torch.Tensor]:
        """The loss and its terms over some of a minibatch's ``n`` rows (the arguments at those rows:
        ``old`` log pi_old, ``weight`` pi_old / b, the module docstring), each a sum over the rows
        divided by ``n``; the rows' probability ratios and log-probabilities, detached, for the
        statistics."""
        cfg = self.cfg
        ratio = (logp - old).exp()
        clipped = -weight * torch.min(ratio * adv, ratio.clamp(1 - cfg.ppo_clip, 1 + cfg.ppo_clip) * adv)
        policy = torch.where(cloned, -logp, clipped).sum() / n  # the warm-start agent's move: cross-entropy
        value = ((value - ret) ** 2).sum() / n
        entropy = entropy.sum() / n
        loss = policy + cfg.value_coef * value - cfg.entropy_coef * entropy
        return {"loss": loss, "policy": policy, "value": value, "entropy": entropy,
                "ratio": ratio.detach(), "logp": logp.detach()}
