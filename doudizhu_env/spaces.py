"""What the environments share: the checks of their arguments and their spaces.

The PettingZoo env (:mod:`doudizhu_env.aec`) and the Gymnasium envs
(:mod:`doudizhu_env.gym_env`) take the same kinds of arguments (``rules``,
``reward``, ``render_mode``, ``illegal_action``, a seat) and observe the same
dict ``{"observation": Box, "action_mask": Box int8}``; both are defined
here, once. Every check raises ``ValueError`` naming the argument, what it
got and what it expects.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from .actions import action_table
from .checks import is_int, short
from .observation import OBS_SIZE
from .rewards import REWARDS
from .rules import resolve_rules

#: How a rendering is given: printed (``"human"``) or returned as text (``"ansi"``).
RENDER_MODES = ("human", "ansi")
#: What an action outside the mask does: raise, or end the hand with a penalty.
ILLEGAL_ACTIONS = ("raise", "penalty")


def check_choice(name: str, value, allowed) -> None:
    """``value`` must be one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}, got {short(value)}")


def check_common(reward: str, render_mode: str | None, illegal_action: str, illegal_reward=-1.0) -> float:
    """The arguments every environment takes: ``reward``, ``render_mode`` (or None), ``illegal_action``,
    ``illegal_reward`` (a finite number; returned as a float)."""
    check_choice("reward", reward, REWARDS)
    check_choice("render_mode", render_mode, (None, *RENDER_MODES))
    check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
    return check_number("illegal_reward", illegal_reward)


def check_number(name: str, value) -> float:
    """``value`` as a float: a finite int or float (not a bool, a string or NaN), or ValueError naming it."""
    ok = is_int(value) or isinstance(value, (float, np.floating))
    if not ok or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {short(value)}")
    return float(value)


def observation_box() -> spaces.Box:
    """The ``Box`` of one observation vector (every entry is 0 or 1, see :mod:`doudizhu_env.observation`)."""
    return spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)


class ActionIds(spaces.Discrete):
    """``Discrete(A)`` (int64, from 0) whose ``contains`` answers a plain ``int`` at once: in range or
    not, as ``Discrete.contains`` answers it (PettingZoo's bounds check asks it at every step); any
    other value is left to ``Discrete.contains``."""

    def contains(self, x) -> bool:
        if type(x) is int:
            return 0 <= x < int(self.n)
        return super().contains(x)


def action_space(rules=None) -> spaces.Discrete:
    """``Discrete(A)``: the ids of the action table of ``rules``."""
    return ActionIds(len(action_table(resolve_rules(rules))))


def observation_space(rules=None) -> spaces.Dict:
    """``Dict(observation=Box, action_mask=Box int8)`` of one seat's observation."""
    n = len(action_table(resolve_rules(rules)))
    return spaces.Dict({"observation": observation_box(), "action_mask": spaces.Box(0, 1, (n,), np.int8)})
