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

**Agents** ``player_0``, ``player_1``, ``player_2`` are the three seats. Roles
come from bidding: ``infos[agent]["role"]`` is ``"landlord"``,
``"landlord_down"`` (the farmer after the landlord), ``"landlord_up"`` (the
farmer before it), or ``None`` while bidding. One episode is one hand,
from the deal (redeals after three passes included) to the score.

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
offender gets ``illegal_reward``).

**Scripted deals** ``reset(seed=..., options={"deal": {"hands": [h0, h1, h2],
"hole": "...", "first_bidder": 0}})`` with 17-card hands in card notation.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector, wrappers

from . import engine
from .actions import action_table
from .engine import PHASE_NAMES, Deal
from .observation import OBS_SIZE, ROLE_NAMES, observe, roles
from .render import emit, render_text
from .rewards import REWARDS, shape_reward
from .rules import resolve_rules


def env(**kwargs) -> AECEnv:
    """The wrapped environment, as PettingZoo's classic environments are wrapped."""
    illegal = kwargs.get("illegal_action", "raise")
    game = raw_env(**kwargs)
    if illegal == "penalty":
        game = wrappers.TerminateIllegalWrapper(game, illegal_reward=kwargs.get("illegal_reward", -1.0))
    game = wrappers.AssertOutOfBoundsWrapper(game)
    return wrappers.OrderEnforcingWrapper(game)


class raw_env(AECEnv):  # noqa: N801  (PettingZoo's naming)
    """The unwrapped AEC environment; see the module docstring."""

    metadata = {"render_modes": ["human", "ansi"], "name": "doudizhu_v0", "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, rules=None, reward: str = "score", render_mode: str | None = None,
                 perspective: int | None = None, illegal_action: str = "raise", illegal_reward: float = -1.0):
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, "
                             f"got {render_mode!r}")
        if illegal_action not in ("raise", "penalty"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalty', got {illegal_action!r}")
        if perspective is not None and not engine.is_seat(perspective):
            raise ValueError(f"perspective must be a seat 0..2 or None, got {perspective!r}")
        self.rules = resolve_rules(rules)
        self.table = action_table(self.rules)
        self.reward_kind, self.render_mode, self.perspective = reward, render_mode, perspective
        self.possible_agents = [f"player_{i}" for i in range(3)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        n = len(self.table)
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (n,), np.int8),
            })
            for a in self.possible_agents
        }
        self._rng = np.random.default_rng()
        self.state = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # -- episode -----------------------------------------------------------

    def reset(self, seed=None, options=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        deals = None
        if options and "deal" in options:
            deals = [Deal.coerce(options["deal"])]
        self.state = engine.reset(self._rng, 1, self.rules, deals=deals)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._agent_selector = AgentSelector(self.agents)
        self._sync()

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        # an int id, nothing else: a float, a bool or a string is refused, not rounded or parsed
        actions = np.array([engine.action_id(action, len(self._mask))], dtype=np.int64)
        # the cached mask answers "legal?" at once; the engine's own check names an illegal action
        known_legal = bool(self._mask[actions[0]])
        self.state = engine.step(self.state, actions, check=not known_legal)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if self.state.done[0]:
            over = self.truncations if self.state.truncated[0] else self.terminations
            for i, a in enumerate(self.possible_agents):
                over[a] = True
                self.rewards[a] = float(shape_reward(self.state.scores[0, i], self.reward_kind))
        self._sync()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _sync(self):
        """Agent selection, infos and the cached mask after a change of state."""
        s = self.state
        seat = int(s.to_act[0])
        self.agent_selection = self.possible_agents[seat]
        self._mask = engine.legal_action_mask(s)[0].astype(np.int8)
        role = roles(s, np.arange(3)) if s.landlord[0] >= 0 else None
        phase = PHASE_NAMES[s.phase[0]]
        self.infos = {
            a: {"seat": i, "role": None if role is None else ROLE_NAMES[role[i]], "phase": phase}
            for i, a in enumerate(self.possible_agents)
            if a in self.agents
        }

    def observe(self, agent):
        seat = self.agent_name_mapping[agent]
        obs = observe(self.state, seats=np.array([seat]))[0]
        acting = seat == self.state.to_act[0] and not self.state.done[0]
        mask = self._mask if acting else np.zeros_like(self._mask)
        return {"observation": obs, "action_mask": mask}

    # -- rendering ---------------------------------------------------------

    def render(self):
        if self.render_mode is None:
            return None
        return emit(render_text(self.state, self.perspective), self.render_mode)

    def close(self):
        pass
