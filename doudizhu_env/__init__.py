"""doudizhu_env: Dou Dizhu (Fight the Landlord) for reinforcement learning.

The full hand (bidding, doubling, play, spring scoring) as a vectorized numpy
engine, with PettingZoo and Gymnasium environments on top.
"""

import sys as _sys

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

    Done for you: at once if gymnasium is already imported, else as soon as it
    is (a one-shot import hook), so ``gymnasium.make("DouDizhu-v0")`` and
    ``gymnasium.make_vec("DouDizhu-v0", num_envs=...)`` work in either import order.
    """
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="doudizhu_env.gym_env:DouDizhuEnv",
            vector_entry_point="doudizhu_env.gym_env:DouDizhuVectorEnv",
        )


class _RegisterWhenGymnasiumLoads:
    """A one-shot ``sys.meta_path`` finder: runs :func:`register_envs` right after ``import gymnasium``."""

    def find_spec(self, name, path=None, target=None):
        if name != "gymnasium":
            return None
        import importlib.util

        if self in _sys.meta_path:
            _sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)  # the normal finders (this one is gone)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_register(module):
            exec_module(module)
            register_envs()

        spec.loader.exec_module = exec_then_register
        return spec


if "gymnasium" in _sys.modules:
    register_envs()
elif not any(isinstance(f, _RegisterWhenGymnasiumLoads) for f in _sys.meta_path):
    _sys.meta_path.insert(0, _RegisterWhenGymnasiumLoads())
