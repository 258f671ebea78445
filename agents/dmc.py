"""The score model (:class:`ScoreModel`): networks that score every legal action of the whole game,
and DMC's agent, which plays the scores as Q-values (:class:`DMCAgent`).

The scores are Deep Monte-Carlo (DMC) Q-values, or a softmax policy's logits for PPO
(:attr:`ScoreModel.score_kind`, :mod:`agents.policy`). There is one network per kind of
decision (:data:`NETWORKS`): bidding (before roles exist), doubling, and the three roles of the
play phase (landlord, the farmer after it, the farmer before it).

Each network scores all legal actions of a decision at once::

    state  s --[MLP over the observation pieces + history encoder]--> e(s)
    action a --[MLP over the action features]-------------------------> f(a)
    Q(s, a) = w . head(relu(U e(s) + V f(a) + b)) + c

The history encoder reads the last 15 moves: an LSTM (``history: lstm``,
as in DouZero) or one ReLU layer over the flattened moves (``history: mlp``,
the default config's: a tenth of the compute, which keeps the learner up
with the actors on 2 cores; ``docs/benchmarks.md`` has the measurements).

``head`` is ``head_layers - 1`` more ReLU layers (none by default), so
the joint layer is the first layer of an MLP over ``[e(s), f(a)]``.

With ``hand_head`` a network also has an auxiliary head over ``e(s)`` that
predicts the cards of the two seats it cannot see (the next seat's and the
one after, per rank: 0 to 4 cards, :data:`HAND_CLASSES` classes), as the
opponent-modelling module of DouZero+ (Zhao et al., 2022) does. It is a
training signal only: the learner adds its cross-entropy against the true
hands to the loss (``hand_loss_weight``), to push the state embedding towards
what the public history says about the hidden cards (``benchmarks.hand_head``
measures how far it gets); acting never calls it and its
input is the seat's own observation, so nothing hidden reaches a decision.

``U e(s)`` is computed once per decision; per action the cost is the small
action MLP, ``V f(a)`` and one dot product, instead of a large MLP run on the
state again for every action (as in DouZero). Sizes come from
:data:`doudizhu_env.observation.PIECES` and :data:`~doudizhu_env.observation.ACTION_PIECES`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import cast

import numpy as np
import torch
from torch import nn

from doudizhu_env import engine
from doudizhu_env.cards import NUM_RANKS
from doudizhu_env.checks import short
from doudizhu_env.engine import ROLE_NAMES, role_of
from doudizhu_env.legal import bits_to_ids, sample_bits
from doudizhu_env.observation import (
    ACTION_SIZE,
    HISTORY_MOVES,
    OBS_SIZE,
    action_features,
    observe,
    piece_slice,
)

from .base import Agent

NETWORKS = ("bidding", "doubling", *ROLE_NAMES)
_HISTORY_CARDS, _HISTORY_SEATS = piece_slice("history_cards"), piece_slice("history_seats")
_MOVE_CARDS = (_HISTORY_CARDS.stop - _HISTORY_CARDS.start) // HISTORY_MOVES
_MOVE_SEATS = (_HISTORY_SEATS.stop - _HISTORY_SEATS.start) // HISTORY_MOVES
_NOT_HISTORY = np.setdiff1d(np.arange(OBS_SIZE), np.r_[_HISTORY_CARDS, _HISTORY_SEATS])


def network_of(state: engine.State) -> np.ndarray:
    """``(B,)`` index into :data:`NETWORKS` of each game's decision (-1 when over)."""
    role = role_of(state.to_act, state.landlord)
    return np.select(
        [state.phase == engine.BIDDING, state.phase == engine.DOUBLING, state.phase == engine.PLAY],
        [0, 1, 2 + role], -1,
    )


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of one of the networks (:class:`ScoreNet`)."""

    hidden: int = 256
    """Width of the state MLP and of the state embedding e(s)."""
    lstm_hidden: int = 128
    """Width of the history encoder's output (the LSTM's hidden state, or the MLP's width)."""
    history: str = "lstm"
    """Encoder of the last moves: ``lstm`` (over the moves, oldest first, as in DouZero) or ``mlp``
    (one ReLU layer over the flattened moves: a tenth of the LSTM's compute)."""
    action_hidden: int = 64
    """Width of the action embedding f(a)."""
    head_hidden: int = 128
    """Width of the joint layer relu(U e(s) + V f(a) + b)."""
    head_layers: int = 1
    """Layers of ``head_hidden`` units over each (state, action) pair: 1 is the joint layer
    alone; each more adds ``relu(W h + b)``, computed for the legal actions only."""
    hand_head: bool = False
    """An auxiliary head over e(s) predicting the two hidden hands (module docstring): a training
    signal only, never used to act."""

    def __post_init__(self):
        if self.history not in HISTORY_ENCODERS:
            raise ValueError(f"history must be one of {HISTORY_ENCODERS}, got {short(self.history)}")
        for name in ("hidden", "lstm_hidden", "action_hidden", "head_hidden", "head_layers"):
            value, most = getattr(self, name), MAX_LAYERS if name == "head_layers" else MAX_WIDTH
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
                raise ValueError(f"model.{name} must be an integer in 1..{most:,}, got {short(value)}")
        gib = self.parameters() * 4 * 3 / 2**30  # float32 weights, and Adam's two moments
        if gib > MAX_MODEL_GIB:
            raise ValueError(f"the model sizes {self.to_dict()} need about {gib:,.0f} GiB for the weights "
                             f"and Adam's state; expected at most {MAX_MODEL_GIB} GiB (smaller sizes)")

    def parameters(self) -> int:
        """Weights of the five networks of these sizes: those of the :class:`ScoreNet` modules themselves,
        built on the ``meta`` device (shapes only: no memory is allocated)."""
        with torch.device("meta"):
            return sum(p.numel() for _ in NETWORKS for p in ScoreNet(self).parameters())

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


HISTORY_ENCODERS = ("lstm", "mlp")
#: The hand head's classes per rank of a hidden hand: 0, 1, 2, 3 or 4 cards.
HAND_CLASSES = 5
#: The hand head's outputs: 2 hidden seats x NUM_RANKS ranks x HAND_CLASSES.
HAND_OUTPUTS = 2 * NUM_RANKS * HAND_CLASSES
#: The largest model a config may ask for (weights and Adam's state), in GiB.
MAX_MODEL_GIB = 8
#: The most units of a layer (``hidden``, ``lstm_hidden``, ``action_hidden``, ``head_hidden``): 16 times
#: the default config's widest.
MAX_WIDTH = 4096
#: The most ``head_layers``: each is a module built per network, so a count of thousands takes minutes
#: to build whatever the widths.
MAX_LAYERS = 32


#: The layers of :class:`StateEncoder` (the history is ``lstm`` or ``history_mlp``).
ENCODER_MODULES = ("state_mlp", "lstm", "history_mlp", "state_out")


class StateEncoder(nn.Module):
    """The state embedding e(s) of one network: an MLP over the observation pieces other than the
    history, the history encoder, and a layer over both (see the module docstring).

    ``extra_inputs`` more columns after the observation join the MLP's input: the critic of
    :mod:`train.ppo` reads the hidden hands there. The networks that act have none.
    """

    not_history: torch.Tensor  # a buffer: the observation columns the MLP reads

    def __init__(self, cfg: ModelConfig, extra_inputs: int = 0):
        super().__init__()
        flat = len(_NOT_HISTORY) + extra_inputs
        self.state_mlp = nn.Sequential(nn.Linear(flat, cfg.hidden), nn.ReLU(),
                                       nn.Linear(cfg.hidden, cfg.hidden), nn.ReLU())
        move = _MOVE_CARDS + _MOVE_SEATS
        if cfg.history == "lstm":
            self.lstm = nn.LSTM(move, cfg.lstm_hidden, batch_first=True)
        else:
            self.history_mlp = nn.Sequential(nn.Linear(HISTORY_MOVES * move, cfg.lstm_hidden), nn.ReLU())
        self.state_out = nn.Sequential(nn.Linear(cfg.hidden + cfg.lstm_hidden, cfg.hidden), nn.ReLU())
        columns = np.r_[_NOT_HISTORY, OBS_SIZE + np.arange(extra_inputs)]
        self.register_buffer("not_history", torch.from_numpy(columns), persistent=False)

    def encoder_parameters(self) -> list[nn.Parameter]:
        """The weights of the state embedding e(s) alone (the layers this class builds), not those of
        a subclass's head."""
        modules = [m for m in (getattr(self, n, None) for n in ENCODER_MODULES) if m is not None]
        return [p for m in modules for p in m.parameters()]

    def embed(self, obs: torch.Tensor) -> torch.Tensor:
        """``(N, OBS_SIZE + extra_inputs)`` -> ``(N, hidden)``: the state embedding e(s)."""
        n = len(obs)
        flat = obs[:, self.not_history]
        moves = torch.cat([obs[:, _HISTORY_CARDS].reshape(n, HISTORY_MOVES, _MOVE_CARDS),
                           obs[:, _HISTORY_SEATS].reshape(n, HISTORY_MOVES, _MOVE_SEATS)], dim=2)
        if hasattr(self, "lstm"):
            _, (h, _) = self.lstm(moves.flip(1))  # oldest move first
            history = h[-1]
        else:
            history = self.history_mlp(moves.reshape(n, -1))
        return self.state_out(torch.cat([self.state_mlp(flat), history], dim=1))


class ScoreNet(StateEncoder):
    """The scores of one network: one per (state, legal action) pair (see the module docstring), which
    :attr:`ScoreModel.score_kind` reads as Q(s, a) or as a policy's logit."""

    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        self.action_mlp = nn.Sequential(nn.Linear(ACTION_SIZE, cfg.action_hidden), nn.ReLU())
        self.state_proj = nn.Linear(cfg.hidden, cfg.head_hidden)
        self.action_proj = nn.Linear(cfg.action_hidden, cfg.head_hidden, bias=False)
        self.head = nn.Sequential(*[m for _ in range(cfg.head_layers - 1)
                                    for m in (nn.Linear(cfg.head_hidden, cfg.head_hidden), nn.ReLU())])
        self.out = nn.Linear(cfg.head_hidden, 1)
        if cfg.hand_head:
            self.hand_out = nn.Linear(cfg.hidden, HAND_OUTPUTS)

    def encode_state(self, obs: torch.Tensor) -> torch.Tensor:
        """``(N, OBS_SIZE)`` -> ``(N, head_hidden)``: U e(s) + b."""
        return self.state_proj(self.embed(obs))

    def hand_logits(self, e: torch.Tensor) -> torch.Tensor:
        """The hand head's ``(N, 2, NUM_RANKS, HAND_CLASSES)`` logits from embeddings ``e``."""
        return self.hand_out(e).view(len(e), 2, NUM_RANKS, HAND_CLASSES)

    def action_code(self, actions: torch.Tensor) -> torch.Tensor:
        """``(M, ACTION_SIZE)`` action features -> ``(M, head_hidden)``: W f(a), the action's part of
        the head's first layer."""
        return self.action_proj(self.action_mlp(actions))

    def score_codes(self, state_code: torch.Tensor, action_code: torch.Tensor) -> torch.Tensor:
        """Q from the ``(M, head_hidden)`` codes of states and of actions, row by row."""
        return self.out(self.head(torch.relu(state_code + action_code))).squeeze(-1)

    def score(self, state_code: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """Q of ``(M, ACTION_SIZE)`` actions given the ``(M, head_hidden)`` code of their state."""
        return self.score_codes(state_code, self.action_code(actions))


#: What a model's scores of (state, action) are: ``q_values`` (played greedily, as DMC's) or
#: ``logits`` of a softmax policy over the legal actions (:mod:`agents.policy`).
SCORE_KINDS = ("q_values", "logits")


class ScoreModel(nn.Module):
    """The five networks (:data:`NETWORKS`) that score each legal action, and the action features of one
    rule set. What the scores are is :attr:`score_kind`: Q-values for DMC (played greedily by
    :class:`DMCAgent`) or a softmax policy's logits for PPO (:class:`agents.policy.PolicyAgent`)."""

    action_feats: torch.Tensor  # a buffer: the features of every action id

    def __init__(self, rules, cfg: ModelConfig | None = None, score_kind: str = "q_values"):
        super().__init__()
        self.cfg = cfg or ModelConfig()
        self.rules = rules
        if score_kind not in SCORE_KINDS:
            raise ValueError(f"score_kind must be one of {SCORE_KINDS}, got {score_kind!r}")
        self.score_kind = score_kind
        """What the scores are: ``q_values`` (DMC's, the hand's expected result) or ``logits`` (a
        softmax policy's, PPO's); checkpoints record it (:func:`agents.checkpoint.load_model`)."""
        self.nets = nn.ModuleDict({name: ScoreNet(self.cfg) for name in NETWORKS})
        self.register_buffer("action_feats", torch.from_numpy(action_features(rules)), persistent=False)

    def net(self, network: int) -> ScoreNet:
        """The network of decision kind ``network`` (an index into :data:`NETWORKS`)."""
        return cast(ScoreNet, self.nets[NETWORKS[network]])

    def score(self, obs: torch.Tensor, network: np.ndarray, ids: np.ndarray, seg: np.ndarray) -> torch.Tensor:
        """The scores (Q-values, or a policy's logits: :attr:`score_kind`) of flat candidate actions
        ``ids`` (``(M,)``), each for the state row ``seg[m]``.

        ``obs`` is ``(N, OBS_SIZE)``, ``network`` the network (index into :data:`NETWORKS`) of each
        state row.
        """
        return self.score_embedded(self.embed(obs, network), network, ids, seg)

    def embed(self, obs: torch.Tensor, network: np.ndarray) -> torch.Tensor:
        """``(N, hidden)``: the state embedding e(s) of each row of ``obs`` by its network (each
        network's rows in one pass)."""
        out = torch.zeros((len(obs), self.cfg.hidden), dtype=torch.float32, device=obs.device)
        for index in np.unique(network):
            rows = torch.from_numpy(np.flatnonzero(network == index)).to(obs.device)
            out[rows] = self.net(index).embed(obs[rows])
        return out

    def score_embedded(self, embedding: torch.Tensor, network: np.ndarray, ids: np.ndarray,
                       seg: np.ndarray) -> torch.Tensor:
        """:meth:`score` from the rows' embeddings (:meth:`embed`), for a learner that reads them
        too."""
        q = torch.zeros(len(ids), dtype=torch.float32, device=embedding.device)
        seg_network = network[seg]
        for index in np.unique(network):
            rows = np.flatnonzero(network == index)
            cand = np.flatnonzero(seg_network == index)
            net = self.net(index)
            code = net.state_proj(embedding[torch.from_numpy(rows).to(embedding.device)])
            local = np.searchsorted(rows, seg[cand])  # state row of each candidate within `rows`
            # each distinct action once: a batch repeats ids (2,300 distinct among 30,000 candidates)
            distinct, which = np.unique(ids[cand], return_inverse=True)
            acts = net.action_code(self.action_feats[torch.from_numpy(distinct)])
            q[torch.from_numpy(cand)] = net.score_codes(code[torch.from_numpy(local)],
                                                        acts[torch.from_numpy(which.reshape(-1))])
        return q

    def q_and_hands(self, obs: torch.Tensor, network: np.ndarray,
                    ids: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """Q of one action per state row (``ids``: ``(N,)``) and the hand head's
        ``(N, 2, NUM_RANKS, HAND_CLASSES)`` logits of each row (the learner's pass; needs ``hand_head``)."""
        if not self.cfg.hand_head:
            raise ValueError("q_and_hands needs a model built with hand_head: true")
        q = torch.zeros(len(ids), dtype=torch.float32, device=obs.device)
        logits = torch.zeros((len(ids), 2, NUM_RANKS, HAND_CLASSES), dtype=torch.float32, device=obs.device)
        for index in np.unique(network):
            rows = torch.from_numpy(np.flatnonzero(network == index))
            net = self.net(index)
            e = net.embed(obs[rows])
            q[rows] = net.score(net.state_proj(e), self.action_feats[torch.from_numpy(ids)[rows]])
            logits[rows] = net.hand_logits(e)
        return q, logits


class ModelOutputError(ValueError):
    """The model's Q-values are not numbers (NaN or infinite): its weights have diverged."""


def raise_non_finite(q: np.ndarray, network: np.ndarray) -> None:
    """Raise :class:`ModelOutputError` naming how many Q-values of which networks are NaN or infinite."""
    bad = ~np.isfinite(q)
    where = ", ".join(NETWORKS[index] for index in np.unique(network[bad]))
    raise ModelOutputError(
        f"the model produced {int(np.isnan(q).sum())} NaN and {int(np.isinf(q).sum())} infinite Q-values "
        f"among {len(q)} (networks: {where}); expected finite numbers. Its weights have diverged "
        "(e.g. a learning rate too high): stop, and train again from a good checkpoint or other settings")


def segment_argmax(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Index (into ``values``) of the first maximum of each segment ``offsets[i]:offsets[i+1]``."""
    starts = offsets[:-1]
    seg = np.repeat(np.arange(len(starts)), np.diff(offsets))
    best = np.maximum.reduceat(values, starts)
    hits = np.flatnonzero(values >= best[seg])
    _, first = np.unique(seg[hits], return_index=True)
    return hits[first]


class DMCAgent(Agent):
    """Plays greedily (or epsilon-greedily) by a :class:`ScoreModel`; implements the arena's interface."""

    name = "dmc"

    def __init__(self, model: ScoreModel, epsilon: float = 0.0, rng: np.random.Generator | None = None,
                 bidding_epsilon: float | None = None, doubling_epsilon: float | None = None):
        self.model = model
        self.epsilon = epsilon
        self.bidding_epsilon = bidding_epsilon
        """Exploration at the bidding network's decisions (default: ``epsilon``)."""
        self.doubling_epsilon = doubling_epsilon
        """Exploration at the doubling network's decisions (default: ``epsilon``)."""
        self.rng = rng or np.random.default_rng(0)

    def epsilons(self, network: np.ndarray) -> np.ndarray:
        """The probability of a uniformly random legal action at each row's network (``network``: indices
        into :data:`NETWORKS`)."""
        def given(eps):
            return self.epsilon if eps is None else eps

        return np.select([network == 0, network == 1],
                         [given(self.bidding_epsilon), given(self.doubling_epsilon)], self.epsilon)

    def act(self, view: engine.State) -> np.ndarray:
        return self.decide(view)[0]

    @torch.no_grad()
    def action_values(self, state: engine.State, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Q-values of the flat actions ``ids`` (game ``i``'s are ``ids[offsets[i]:offsets[i + 1]]``)."""
        return self._q(observe(state), network_of(state), ids, offsets)

    def _q(self, obs: np.ndarray, network: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Q-values of the flat actions ``ids`` of the state rows ``obs`` (finite, or an error)."""
        seg = np.repeat(np.arange(len(obs)), np.diff(offsets))
        q = self.model.score(torch.from_numpy(obs), network, ids, seg).numpy()
        if not np.isfinite(q).all():
            raise_non_finite(q, network[seg])
        return q

    @torch.no_grad()
    def decide(self, state: engine.State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Actions, observations and networks of every unfinished game of ``state``.

        Games that are over get ``PASS`` and network -1. The legal actions it chose among stay in
        :attr:`last_legal` (``(ids, offsets)``, as :func:`doudizhu_env.legal.bits_to_ids` gives them)
        and their scores in :attr:`last_scores` (one per id).
        """
        obs = observe(state)
        network = network_of(state)
        bits = engine.legal_bits(state)  # computed once: for the Q candidates and for exploration
        ids, offsets = bits_to_ids(bits)
        actions = np.zeros(state.num_games, dtype=np.int64)
        live = np.flatnonzero(np.diff(offsets) > 0)
        self.last_scores = np.zeros(0, np.float32)
        if len(live):
            q = self.last_scores = self._q(obs, network, ids, offsets)
            live_offsets = np.concatenate([offsets[live], [offsets[-1]]])
            actions[live] = ids[self.pick(q, live_offsets)]
            drawn = self.rng.random(state.num_games) < self.epsilons(network)
            explore = np.flatnonzero(drawn & (network >= 0))
            if len(explore):
                actions[explore] = sample_bits(bits[explore], self.rng)
        self.last_legal = ids, offsets
        return actions, obs, network

    def pick(self, scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Index (into ``scores``) of the action chosen in each segment ``offsets[i]:offsets[i+1]``
        (none empty): the best (:func:`segment_argmax`)."""
        return segment_argmax(scores, offsets)

    def chosen_log_pi(self, actions: np.ndarray, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """log pi of each game's action (games with a decision) before exploration: 0 where it is the
        greedy choice, -inf elsewhere."""
        live = np.diff(offsets) > 0
        best = ids[segment_argmax(self.last_scores, offsets[np.r_[live, True]])]
        return np.where(actions[live] == best, 0.0, -np.inf)

    def decision_log_probs(self, actions: np.ndarray, network: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(log pi, log b)`` of the last :meth:`decide`'s ``actions``: pi is the choice before
        exploration (:meth:`chosen_log_pi`), b what drew them, the choice mixed with a uniformly
        random legal action at the seat's epsilon, b(a) = (1 - eps) pi(a) + eps / n. NaN for the
        games that had no decision. The PPO learner clips its ratio around pi and weighs each
        sample by pi / b (the exploration's importance weight)."""
        ids, offsets = self.last_legal
        counts = np.diff(offsets)
        live = counts > 0
        log_pi = self.chosen_log_pi(actions, ids, offsets)
        eps = self.epsilons(network)[live]
        pi, b = np.full(len(counts), np.nan), np.full(len(counts), np.nan)
        pi[live] = log_pi
        with np.errstate(divide="ignore"):  # log 0 where eps is 0 or 1: logaddexp takes -inf
            b[live] = np.logaddexp(np.log1p(-eps) + log_pi, np.log(eps / counts[live]))
        return pi.astype(np.float32), b.astype(np.float32)
