"""doudizhu_env: Dou Dizhu (Fight the Landlord) for reinforcement learning.

The full hand (bidding, doubling, play, spring scoring) as a vectorized numpy
engine, with PettingZoo and Gymnasium environments on top.
"""

from .actions import Action, ActionTable, CombType, action_table, type_counts
from .cards import format_hand, parse_hand
from .infos import info_names
from .moves import classify, legal_moves
from .rules import Rules

__all__ = [
    "Action",
    "ActionTable",
    "CombType",
    "Rules",
    "action_table",
    "classify",
    "format_hand",
    "info_names",
    "legal_moves",
    "parse_hand",
    "type_counts",
    "env",
    "raw_env",
    "DouDizhuEnv",
    "DouDizhuVectorEnv",
    "register_envs",
]

# ----------------------------------------------------------------------------
# The environments, imported lazily: ``import doudizhu_env`` imports neither
# pettingzoo nor gymnasium until one of these names is used.
# ----------------------------------------------------------------------------

ENV_ID = "DouDizhu-v0"
_LAZY = {"env": "aec", "raw_env": "aec", "DouDizhuEnv": "gym_env", "DouDizhuVectorEnv": "gym_env"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register_envs() -> None:
    """Register ``DouDizhu-v0`` with gymnasium (idempotent; string entry points, nothing else imported).

    Called when :mod:`doudizhu_env.gym_env` is imported, and by ``import doudizhu_env`` when
    gymnasium is imported already; so any of these works, in a fresh process::

        gymnasium.make("doudizhu_env.gym_env:DouDizhu-v0")  # gymnasium imports the env module first
        import doudizhu_env.gym_env; gymnasium.make("DouDizhu-v0")
        import gymnasium, doudizhu_env; gymnasium.make("DouDizhu-v0")

    ``import doudizhu_env`` alone never imports gymnasium (an optional dependency) and installs no
    import hook, so after ``import doudizhu_env`` and then ``import gymnasium`` the short id needs
    one of the first two forms (or a call of this function).
    """
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="doudizhu_env.gym_env:DouDizhuEnv",
            vector_entry_point="doudizhu_env.gym_env:DouDizhuVectorEnv",
        )


def _register_if_gymnasium_is_imported() -> None:
    import sys

    if sys.modules.get("gymnasium") is not None:  # None: an import of it blocked on purpose
        register_envs()


_register_if_gymnasium_is_imported()
