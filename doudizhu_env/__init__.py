"""doudizhu_env: Dou Dizhu (Fight the Landlord) for reinforcement learning.

The full hand (bidding, doubling, play, spring scoring) as a vectorized numpy
engine, with PettingZoo and Gymnasium environments on top.
"""

from .actions import Action, ActionTable, CombType, action_table, type_counts
from .cards import format_hand, parse_hand
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

    Done for you by ``import doudizhu_env`` when gymnasium is installed, so
    ``gymnasium.make("DouDizhu-v0")`` and ``gymnasium.make_vec("DouDizhu-v0", num_envs=...)``
    work after it.
    """
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="doudizhu_env.gym_env:DouDizhuEnv",
            vector_entry_point="doudizhu_env.gym_env:DouDizhuVectorEnv",
        )


try:  # gymnasium is an optional dependency (extra "env"); the core works without it
    register_envs()
except ImportError:
    pass
