"""Self-play actors: B games on the batched engine, one forward pass per step for all of them.

An :class:`Actor` plays its games with the current :class:`~agents.dmc.ScoreModel`
(epsilon-greedy), records each decision the model makes, and turns finished
hands into (observation, action, network, target) samples
(:mod:`train.buffer`). :func:`actor_process` is the loop of an actor process:
chunks of samples go to the learner through a bounded queue.

Two options bring other players into the actor's games:

- **Opponents** (``opponents``, ``opponent_share``): in that share of the
  games the model plays one or two seats (equally often, the seats drawn
  anew for every hand) and an opponent agent, drawn from ``opponents``, plays
  the others. Only the model's decisions become samples, so it learns Q
  against the players it meets (a best response to them), not only against
  itself. The spec ``past`` names the model's own past (:class:`PastSelves`):
  frozen copies of it taken every ``past_every_frames`` of the actor's frames,
  the newest ``past_pool_size`` kept, one drawn for each hand, as the past
  players of fictitious self-play and of a league.
- **Warm start** (``warm_start_frames``, ``warm_start_agent``): while the run
  is younger than that many frames, the warm-start agent (RuleAgent by
  default) plays every seat of every game, epsilon-greedily with the same
  exploration as the model, and all its decisions become samples. The model
  learns Q of that agent's play (Monte-Carlo returns of its games), and the
  greedy policy over that Q is one step of policy improvement over it before
  any self-play; the PPO learner clones its decisions (marked ``warm_start``
  in the samples). Hands in progress at the switch are finished by the model.
  With ``warm_start_mode: dagger`` (PPO) the model plays instead, as it does
  after the warm start, and the warm-start agent only labels: each of the
  model's decisions is recorded with the move the agent would have made
  there (``warm_start``), so the policy learns the agent's choices on the
  states its own play reaches (DAgger).

The learner decides how the model plays and what is recorded
(:class:`train.learner.Learner`): DMC's model plays epsilon-greedily on its
Q-values; PPO's is a policy that draws each move from the softmax of its
scores over the legal actions (:class:`agents.policy.PolicyAgent`), and its
samples are whole trajectories with the hidden hands (the critic's input), the
legal actions and ``steps_left`` (:mod:`train.samples`).

A third option seats the model by **role** (``model_role``, for a best response to the
opponents, :mod:`train.exploit`): ``"landlord"`` puts it in the landlord's seat of every game with
opponents and the opponent in both farmers' seats, ``"farmers"`` puts it in both farmers' seats (two
networks, each seat seeing only its own observation) against the opponent as the landlord. The
landlord's seat must be known when the hand is dealt, so it needs games without bidding; a
warm-start agent (clone) then plays only the model's seats. ``None`` (the default) draws the seats
as above.

*Frames* are the decisions that become samples; an opponent's moves are part
of the environment, as a Gymnasium opponent's are.
"""

from __future__ import annotations

import copy
import dataclasses
import multiprocessing as mp
import queue as queue_lib
import signal

import numpy as np
import torch

from agents.base import Agent
from agents.dmc import DMCAgent, ScoreModel, network_of
from doudizhu_env import engine
from doudizhu_env.driver import drive
from doudizhu_env.legal import bits_to_ids, sample_bits
from doudizhu_env.observation import observe, seat_view

from .buffer import EpisodeRecorder
from .config import TrainConfig
from .learner import NOTHING_MORE, Recording, learner_class
from .samples import Samples


def epsilon_at(frames: int, start: float, final: float, decay_frames: int) -> float:
    """Linear decay from ``start`` to ``final`` over ``decay_frames`` frames."""
    if decay_frames <= 0:
        return final
    return start + (final - start) * min(1.0, frames / decay_frames)


def explore(actions: np.ndarray, state: engine.State, network: np.ndarray, eps: np.ndarray,
            rng: np.random.Generator) -> np.ndarray:
    """``actions`` with each replaced by a uniformly random legal one with probability ``eps`` (per
    game, e.g. :meth:`agents.dmc.DMCAgent.epsilons`); games that are over (network -1) keep theirs."""
    games = np.flatnonzero((rng.random(state.num_games) < eps) & (network >= 0))
    out = actions.copy()
    if len(games):
        out[games] = sample_bits(engine.legal_bits(engine.take(state, games)), rng)
    return out


#: The opponent spec that names the model's own past (:class:`PastSelves`), not an agent of the registry.
PAST = "past"


class PastSelves:
    """The model's own past as an opponent: frozen copies of it, the first taken at the start and one
    more every ``every`` frames of the actor, the newest ``size`` kept.

    Each hand against it draws one copy uniformly (:meth:`draw`), which plays greedily for the
    whole hand, as the past players of fictitious self-play and of a league do. The copies live in
    the actor, so a resumed run starts the pool anew from the weights it resumes.
    """

    def __init__(self, model: ScoreModel, every: int, size: int):
        if every < 1 or size < 1:
            raise ValueError(f"every and size must be >= 1, got {every} and {size}")
        self.every, self.size = every, size
        self.players: list[DMCAgent] = []
        self.taken_at: list[int] = []
        self.take(model, 0)

    def take(self, model: ScoreModel, frames: int) -> None:
        """Add a frozen copy of ``model`` (made after ``frames`` frames); drop the oldest beyond ``size``."""
        frozen = copy.deepcopy(model)
        for p in getattr(frozen, "parameters", list)():
            p.requires_grad_(False)
        self.players = [*self.players, DMCAgent(frozen)][-self.size:]
        self.taken_at = [*self.taken_at, frames][-self.size:]

    def update(self, model: ScoreModel, frames: int) -> None:
        """Take a copy of ``model`` if ``every`` frames have passed since the last one."""
        if frames >= self.taken_at[-1] + self.every:
            self.take(model, frames)

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` copies drawn uniformly (an object array of agents), one for each hand."""
        out = np.empty(n, object)
        out[:] = [self.players[i] for i in rng.integers(0, len(self.players), n)]
        return out


class _GameGroup:
    """The games of an actor under one rule set, who plays which seat, and the decisions of its hands
    in progress.

    ``seat_player[g, k]`` is 0 where the model plays seat ``k`` of game ``g``, and ``1 + i`` where
    opponent ``i`` does; ``player_of[g]`` is the agent that plays the opponent seats of game ``g``
    this hand (one of :class:`PastSelves`'s copies where opponent ``i`` is one). The first
    ``opponent_share`` of the games have opponents. ``model_role`` (``"landlord"``, ``"farmers"``
    or None: drawn seats) seats the model by role in those games (rules without bidding only).
    """

    def __init__(self, rules, num_games: int, objective: str, rng: np.random.Generator,
                 opponents=(), opponent_share: float = 0.0, recording: Recording = NOTHING_MORE,
                 model_role: str | None = None):
        if model_role is not None and rules.bidding:
            raise ValueError("model_role needs games without bidding: with bidding the landlord's seat is "
                             "not known when the hand is dealt")
        self.model_role = check_model_role(model_role)
        self.state = engine.reset(rng, num_games, rules)
        self.recorder = EpisodeRecorder(num_games, objective, recording.hidden_hands, recording.trajectories)
        self.games = np.arange(num_games)
        self.rng = rng
        self.opponents = list(opponents)
        mixed = int(round(num_games * opponent_share)) if self.opponents else 0
        self.mixed = self.games < mixed
        self.seat_player = np.zeros((num_games, 3), np.int64)
        self.player_of = np.full(num_games, None, object)
        self._draw_seats(self.games[self.mixed])

    def _draw_seats(self, games: np.ndarray) -> None:
        """New seats for the mixed ``games``: the model at 1 or 2 random seats, one opponent at the rest."""
        if not len(games):
            return
        if self.model_role is None:
            mine = self.rng.integers(1, 3, len(games))
            rank = self.rng.random((len(games), 3)).argsort(1).argsort(1)
            seated = rank < mine[:, None]
        else:  # by role: the landlord's seat is the deal's (no bidding)
            landlord = self.state.landlord[games].astype(np.int64)
            seated = np.arange(3)[None, :] == landlord[:, None]
            if self.model_role == "farmers":
                seated = ~seated
        opponent = self.rng.integers(0, len(self.opponents), len(games))
        self.seat_player[games] = np.where(seated, 0, 1 + opponent[:, None])
        for i, player in enumerate(self.opponents):
            drawn = games[opponent == i]
            if isinstance(player, PastSelves):
                self.player_of[drawn] = player.draw(self.rng, len(drawn))
            else:
                self.player_of[drawn] = player

    def step(self, agent: DMCAgent, warm_start_agent=None,
             dagger: bool = False) -> tuple[list[Samples], int]:
        """One decision in every game: the samples of the hands that ended or were redealt, and the
        number of decisions recorded. With a ``warm_start_agent`` it plays (and records) every seat;
        with ``dagger`` too, the model plays its seats and that agent's choices there are recorded."""
        s = self.state
        model = _ModelPlayer(agent, warm_start_agent, legal=self.recorder.legal is not None, dagger=dagger)
        if warm_start_agent is not None and not dagger and self.model_role is None:
            by_seat, players = np.zeros((len(self.games), 3), np.int64), [model]
        else:
            by_seat, players = self._seat_players(model)
        # the driver's one step, unchecked: every player here picks among the legal actions, and the
        # engine's check more than doubles a step at these batch sizes (B=4096: 2.4 ms, 1.0 without)
        turn = next(drive(s, by_seat, players, auto_reset=True, max_steps=1, check=False))
        mine = np.flatnonzero(by_seat[self.games, s.to_act] == 0)
        if len(mine):
            hidden = hidden_hands(s, mine) if self.recorder.hidden_hands is not None else None
            actions = turn.actions[mine] if model.labels is None else model.labels
            self.recorder.record(mine, s.to_act[mine], model.network, actions, model.obs, hidden, model.legal,
                                 warm_start=warm_start_agent is not None, log_prob=model.log_prob,
                                 log_pi=model.log_pi)
        self.state = turn.after
        return self._finished(s.redeals), len(mine)

    def _seat_players(self, model) -> tuple[np.ndarray, list]:
        """Who plays each seat this step, for the driver: 0 the model, ``1 + k`` the k-th distinct
        opponent object (a past self is one object per copy)."""
        mixed = np.flatnonzero(self.mixed)
        groups = _grouped(self.player_of[mixed], mixed)
        by_seat = self.seat_player.copy()
        for k, (_, games) in enumerate(groups):
            by_seat[games] = np.where(self.seat_player[games] > 0, 1 + k, 0)
        return by_seat, [model, *(player for player, _ in groups)]

    def _finished(self, redeals_before: np.ndarray) -> list[Samples]:
        out = []
        ended = np.flatnonzero(self.state.ended)
        if len(ended):
            out.append(self.recorder.finish(ended, self.state.rewards[ended]))
            self._draw_seats(ended[self.mixed[ended]])
        # all three passed and the cards were dealt again: those bids are worth what a new deal
        # is worth (0 by symmetry), not the result of a hand played with other cards
        redealt = np.flatnonzero((self.state.redeals > redeals_before) & ~self.state.ended)
        if len(redealt):
            out.append(self.recorder.finish(redealt, np.zeros((len(redealt), 3), np.float32)))
        return out


class _ModelPlayer:
    """The model's agent as a player of the driver, keeping what the recorder needs of its step:
    the observations and networks of its games and, for PPO's trajectories, their legal actions and
    the log-probabilities of the actions the policy drew.
    With a ``warm_start_agent``, that agent chooses (with the model's exploration) and the model's
    side records; with ``dagger`` too, the model chooses and that agent's choices are kept as
    ``labels``."""

    needs_view = False  # the model observes the acting seat's own view (observation.observe)
    legal_by_construction = True

    def __init__(self, agent: DMCAgent, warm_start_agent=None, legal: bool = False, dagger: bool = False):
        self.agent, self.warm_start_agent = agent, warm_start_agent
        self.keep_legal, self.dagger = legal, dagger
        self.labels: np.ndarray | None = None
        self.obs = self.network = np.zeros(0)
        self.legal: tuple[np.ndarray, np.ndarray] | None = None
        self.log_prob: np.ndarray | None = None
        self.log_pi: np.ndarray | None = None

    def act(self, state: engine.State) -> np.ndarray:
        if self.warm_start_agent is None or self.dagger:
            actions, self.obs, self.network = self.agent.decide(state)
            if self.keep_legal:
                self.legal = self.agent.last_legal
                self.log_pi, self.log_prob = self.agent.decision_log_probs(actions, self.network)
            if self.warm_start_agent is not None:  # DAgger: the model's move is played, the label is learnt
                self.labels = np.asarray(self.warm_start_agent.act(seat_view(state)), np.int64)
            return actions
        self.obs, self.network = observe(state), network_of(state)
        chosen = self.warm_start_agent.act(seat_view(state))
        if self.keep_legal:
            self.legal = bits_to_ids(engine.legal_bits(state))
        return explore(chosen, state, self.network, self.agent.epsilons(self.network), self.agent.rng)


#: The roles :class:`Actor` can seat the model in (``model_role``; None: seats drawn).
MODEL_ROLES = ("landlord", "farmers")


def check_model_role(role: str | None) -> str | None:
    """``role`` if it is one of :data:`MODEL_ROLES` or None; a one-line ``ValueError`` otherwise."""
    if role is not None and role not in MODEL_ROLES:
        raise ValueError(f"model_role must be one of {MODEL_ROLES} or None, got {role!r}")
    return role


def hidden_hands(state: engine.State, games: np.ndarray) -> np.ndarray:
    """``(len(games), 2, NUM_RANKS)``: the hands of the seat after the one to act and of the seat
    after that, in each of ``games`` (the hand head's labels)."""
    seat = state.to_act[games]
    return np.stack([state.hands[games, (seat + 1) % 3], state.hands[games, (seat + 2) % 3]], axis=1)


def _grouped(players: np.ndarray, games: np.ndarray) -> list[tuple[Agent, np.ndarray]]:
    """``(player, its games)`` for each distinct player (by identity) of ``players``, first seen first."""
    groups: dict[int, tuple[Agent, list[int]]] = {}
    for player, game in zip(players, games, strict=True):
        groups.setdefault(id(player), (player, []))[1].append(game)
    return [(player, np.array(mine, np.int64)) for player, mine in groups.values()]


class Actor:
    """Steps ``num_games`` games and yields Monte-Carlo samples of the model's decisions.

    ``fixed_landlord_share`` of the games are dealt by the same rules without
    bidding (the landlord drawn at random), the others play the full game;
    both kinds are chosen for by the same model. ``opponents`` (agents, or a
    :class:`PastSelves`) play the other seats of ``opponent_share`` of the games, and
    ``warm_start_agent`` plays every seat while :meth:`step` is asked to warm up (see the module
    docstring).

    ``learner`` (a :data:`train.learner.LEARNERS` name) says how the model plays
    (:meth:`~train.learner.Learner.acting_agent`) and what the samples carry
    (:attr:`~train.learner.Learner.recording`); a model with a hand head records the hidden hands
    (its labels) whatever the learner. ``model_role`` seats the model by role in the games with
    opponents (see the module docstring; all games dealt without bidding).
    """

    def __init__(self, model: ScoreModel, num_games: int, objective: str, rng: np.random.Generator,
                 bidding_epsilon: float | None = None, fixed_landlord_share: float = 0.0,
                 opponents: list | None = None, opponent_share: float = 0.0, warm_start_agent=None,
                 doubling_epsilon: float | None = None, learner: str = "dmc", dagger: bool = False,
                 model_role: str | None = None):
        check_model_role(model_role)
        kind = learner_class(learner)
        self.agent = kind.acting_agent(model, rng, bidding_epsilon, doubling_epsilon)
        self.rng = rng
        self.opponents = list(opponents or [])
        self.warm_start_agent, self.dagger = warm_start_agent, dagger
        rules = model.rules
        fixed = int(round(num_games * fixed_landlord_share)) if rules.bidding else 0
        sizes = [(rules, num_games - fixed), (dataclasses.replace(rules, bidding=False), fixed)]
        recording = kind.recording
        if model.cfg.hand_head:  # the hand head's labels
            recording = dataclasses.replace(recording, hidden_hands=True)
        if model_role is not None and rules.bidding and fixed < num_games:
            raise ValueError("model_role needs games without bidding (rules without bidding, or "
                             "fixed_landlord_share 1): with bidding the landlord's seat is not known when "
                             "the hand is dealt")
        self.groups = [_GameGroup(r, n, objective, rng, self.opponents, opponent_share, recording, model_role)
                       for r, n in sizes if n > 0]
        self.frames = 0
        self.hands = 0

    @classmethod
    def from_config(cls, model: ScoreModel, cfg: TrainConfig, rng: np.random.Generator) -> Actor:
        """The actor a :class:`~train.config.TrainConfig` asks for (its games, objective, bidding
        epsilon, fixed-landlord share, opponents and warm start), choosing with ``model`` and
        drawing from ``rng``."""
        from agents.registry import make_agent

        def build(spec):
            if spec == PAST:
                return PastSelves(model, cfg.past_every_frames, cfg.past_pool_size)
            return make_agent(spec, rules=model.rules, seed=rng.integers(2**63))

        opponents = [build(spec) for spec in cfg.opponents] if cfg.opponent_share else []
        warm_start_agent = build(cfg.warm_start_agent) if cfg.warm_start_frames else None
        return cls(model, cfg.games_per_actor, cfg.objective, rng, cfg.bidding_epsilon,
                   cfg.fixed_landlord_share, opponents, cfg.opponent_share, warm_start_agent,
                   cfg.doubling_epsilon, learner=cfg.learner, dagger=cfg.warm_start_mode == "dagger")

    def step(self, epsilon: float, warm: bool = False) -> list[Samples]:
        """One decision in every game; the samples of the hands that ended (possibly none).

        ``warm``: the warm-start agent plays every seat, or with ``dagger`` labels the model's
        decisions (an actor without one plays as usual).
        """
        self.agent.epsilon = epsilon
        warm_start_agent = self.warm_start_agent if warm else None
        out = []
        for group in self.groups:
            samples, made = group.step(self.agent, warm_start_agent, self.dagger)
            out += samples
            self.frames += made
            self.hands += int(group.state.ended.sum())
        for opponent in self.opponents:
            if isinstance(opponent, PastSelves):
                opponent.update(self.agent.model, self.frames)
        return out

    def collect(self, num_samples: int, epsilon: float, warm: bool = False,
                stop=None) -> Samples:
        """Step until at least ``num_samples`` samples are ready (or ``stop()`` says the run is over,
        checked every step, so a large chunk never outlives the run's budget); return them."""
        chunks, count = [], 0
        with torch.no_grad():
            while count < num_samples and not (stop is not None and stop()):
                for out in self.step(epsilon, warm):
                    if len(out):
                        chunks.append(out)
                        count += len(out)
        return Samples.concat(chunks)


def actor_process(model: ScoreModel, cfg: TrainConfig, seed_seq: list[int], samples, frames, stop) -> None:
    """Loop of one actor process: collect chunks, put them on the ``samples`` queue until ``stop``
    is set or the learner's process is gone (killed without setting it: the actor must not outlive it).

    ``model`` lives in shared memory and is updated in place by the learner;
    ``frames`` is a shared counter of decisions made by all actors.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the learner stops us
    torch.set_num_threads(cfg.threads)
    actor = Actor.from_config(model, cfg, np.random.default_rng(seed_seq))
    learner = mp.parent_process()

    def over() -> bool:
        return stop.is_set() or (learner is not None and not learner.is_alive())

    while not over():
        eps = epsilon_at(frames.value, cfg.epsilon, cfg.epsilon_final, cfg.epsilon_decay_frames)
        before = actor.frames
        warm = frames.value < cfg.warm_start_frames
        chunk = actor.collect(cfg.chunk_size, eps, warm=warm, stop=over)
        if not len(chunk):
            continue
        with frames.get_lock():
            frames.value += actor.frames - before
        while not over():
            try:
                samples.put(chunk, timeout=0.5)
                break
            except queue_lib.Full:
                continue
