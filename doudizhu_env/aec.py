"""Dou Dizhu as a PettingZoo AEC environment: ``doudizhu_v0``.

::

    from doudizhu_env import env

    game = env(render_mode="ansi")
    game.reset(seed=42)
    for agent in game.agent_iter():
        obs, reward, termination, truncation, info = game.last()
        mask = obs["action_mask"]
        action = None if termination or truncation else game.action_space(agent).sample(mask)
        game.step(action)

**Agents** ``player_0``, ``player_1``, ``player_2`` are the three seats. One episode is one hand,
from the deal (redeals after three passes included) to the score.

**Infos** numbers only (:mod:`doudizhu_env.infos`): ``infos[agent]`` is ``{"seat": 0..2, "role": r,
"phase": p}``, the role from bidding (-1 while bidding, then 0 landlord, 1 landlord_down, the farmer
after the landlord, 2 landlord_up, the farmer before it) and the phase (0 bidding, 1 doubling, 2 play,
3 over); :func:`doudizhu_env.info_names` gives the names.

**Actions** ``Discrete(A)``: the ids of :func:`doudizhu_env.action_table` for
the rules in use (13,557 for ``standard``); ``action_table(rules).index("333444+5+7")``
is the id to send. Bids, doubling and passes are actions too (ids 0..6).

**Observations** a dict, the same shape for every agent:

- ``"observation"``: float32 ``(1358,)`` of 0s and 1s with the pieces of
  :data:`doudizhu_env.observation.PIECES` (own hand, role, bids, doublings,
  hole cards once shown, cards played per seat, cards left per seat, the
  combination to beat and who played it, multiplier, the last 15 moves).
  Never anything the agent cannot see.
- ``"action_mask"``: int8 ``(A,)``, ones at the legal actions of the agent
  to act, all zeros for the others.

**Rewards** at the end of the hand, per ``reward=``: ``"score"`` (default,
the points of ``docs/rules.md``: 2:1:1 x base x multiplier), ``"win"`` (+1 /
-1), ``"log_score"`` (sign x log2(1 + |points|)). A hand truncated after too
many redeals ends with truncations and zero rewards.

**Arguments** ``rules`` (a :class:`~doudizhu_env.Rules` or preset name),
``reward``, ``render_mode`` (``"ansi"`` or ``"human"``), ``perspective`` (a
seat whose view the rendering shows: other hands hidden; default all cards),
``illegal_action`` (``"raise"``, default: an :class:`IllegalActionError` and
no change; ``"penalty"``: PettingZoo's terminate-with-penalty behaviour, the
offender gets ``illegal_reward``). A bad value raises ``ValueError`` naming
the argument; the checks and the spaces are those of the Gymnasium envs too
(:mod:`doudizhu_env.spaces`).

**Scripted deals** ``reset(seed=..., options={"deal": {"hands": [h0, h1, h2],
"hole": "...", "first_bidder": 0}})`` with 17-card hands in card notation.

**One game, no batch.** The hand is stepped on the single-game path
(:mod:`doudizhu_env.game`): the batched engine's deals (the same seed
gives the same cards), legal actions, observations and points, without
its per-call overhead. ``raw_env.game`` is the
:class:`~doudizhu_env.game.Game`; ``raw_env.state`` is the one-game
:class:`~doudizhu_env.engine.State` it stands at (built when asked for),
which :func:`~doudizhu_env.observation.observe`, the renderer and the
engine's functions take.
"""

from __future__ import annotations

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector, wrappers

from . import engine
from .checks import check_seat
from .engine import Deal
from .game import Game
from .infos import seat_info
from .render import emit, render_text
from .rewards import shape_reward
from .rules import resolve_rules
from .spaces import RENDER_MODES, action_space, check_common, observation_space


def env(**kwargs) -> AECEnv:
    """The wrapped environment, as PettingZoo's classic environments are wrapped (the same wrappers,
    reading the per-step attributes through the wrapped env's without a failed lookup per layer)."""
    illegal = kwargs.get("illegal_action", "raise")
    game = raw_env(**kwargs)  # checks every argument
    if illegal == "penalty":
        game = wrappers.TerminateIllegalWrapper(game, illegal_reward=game.illegal_reward)
    game = _AssertOutOfBounds(game)
    return _OrderEnforcing(game)


def _forwarded(name: str) -> property:
    """A read of ``name`` from the wrapped env: what PettingZoo's ``BaseWrapper.__getattr__`` returns
    for it, without first failing the wrapper's own lookup (if the wrapped env lacks it, the wrapper's
    ``__getattr__`` is asked as before, so the same errors are raised)."""
    return property(lambda self: getattr(self.env, name), doc=f"The wrapped env's ``{name}``.")


class _Forwarding:
    """Mixin of a PettingZoo wrapper: the attributes that ``agent_iter``, ``last`` and ``step`` read at
    every step come from the wrapped env by properties, the values ``__getattr__`` gives."""

    agent_selection = _forwarded("agent_selection")
    agents = _forwarded("agents")
    terminations = _forwarded("terminations")
    truncations = _forwarded("truncations")
    infos = _forwarded("infos")
    rewards = _forwarded("rewards")
    _cumulative_rewards = _forwarded("_cumulative_rewards")


class _AssertOutOfBounds(_Forwarding, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper`` with :class:`_Forwarding`."""


class _OrderEnforcing(_Forwarding, wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with :class:`_Forwarding` (printed as it prints)."""

    def __str__(self) -> str:
        return str(self.env)


class raw_env(AECEnv):  # noqa: N801  (PettingZoo's naming)
    """The unwrapped AEC environment; see the module docstring."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "doudizhu_v0", "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, rules=None, reward: str = "score", render_mode: str | None = None,
                 perspective: int | None = None, illegal_action: str = "raise", illegal_reward: float = -1.0):
        super().__init__()
        self.illegal_reward = check_common(reward, render_mode, illegal_action, illegal_reward)
        check_seat("perspective", perspective, optional=True)
        self.rules = resolve_rules(rules)
        self.reward_kind, self.render_mode, self.perspective = reward, render_mode, perspective
        self.possible_agents = [f"player_{i}" for i in range(3)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.action_spaces = {a: action_space(self.rules) for a in self.possible_agents}
        self.observation_spaces = {a: observation_space(self.rules) for a in self.possible_agents}
        self._num_actions = self.action_spaces[self.possible_agents[0]].n
        self._rng = np.random.default_rng()
        self.game: Game | None = None
        self._infos_of: tuple | None = None  # the (phase, landlord) of the infos in self._infos
        self._infos: dict = {}

    @property
    def state(self) -> engine.State | None:
        """The game as a one-game engine :class:`~doudizhu_env.engine.State` (None before reset)."""
        return None if self.game is None else self.game.to_state()

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # -- episode -----------------------------------------------------------

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        deal = Deal.coerce(options["deal"]) if options and "deal" in options else None
        self.game = Game.new(self._rng, self.rules, deal=deal)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._agent_selector = AgentSelector(self.agents)
        self._infos_of = None  # new infos for the new hand
        self._sync()

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        # an int id, nothing else: a float, a bool or a string is refused, not rounded or parsed;
        # an illegal one raises the engine's IllegalActionError (naming the legal actions), changing nothing
        game, n = self.game, self._num_actions
        game.step(action if type(action) is int and 0 <= action < n else engine.action_id(action, n))
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if game.done:
            over = self.truncations if game.truncated else self.terminations
            for i, a in enumerate(self.possible_agents):
                over[a] = True
                self.rewards[a] = float(shape_reward(game.scores[i], self.reward_kind))
        self._sync()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _sync(self):
        """Agent selection and infos after a change of the game (infos change with the phase and roles)."""
        game = self.game
        self.agent_selection = self.possible_agents[game.to_act]
        if self._infos_of != (game.phase, game.landlord):  # infos change with the phase and roles
            self._infos_of = (game.phase, game.landlord)
            self._infos = {a: seat_info(i, game.landlord, game.phase)
                           for i, a in enumerate(self.possible_agents) if a in self.agents}
        # handed out as fresh copies at every step: a caller's edits of infos[agent] (or of the dict
        # itself) end with the step they were made in
        self.infos = {a: info.copy() for a, info in self._infos.items()}

    def observe(self, agent):
        seat = self.agent_name_mapping[agent]
        game = self.game
        if seat == game.to_act and not game.done:
            mask = game.legal_mask()  # the caller's own: writing into it changes nothing here
        else:
            mask = np.zeros(self._num_actions, np.int8)
        return {"observation": game.observe(seat), "action_mask": mask}

    # -- rendering ---------------------------------------------------------

    def render(self):
        if self.render_mode is None:
            return None
        return emit(render_text(self.state, self.perspective), self.render_mode)

    def close(self):
        pass
