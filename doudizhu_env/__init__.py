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

    Done for you: by ``import doudizhu_env`` when gymnasium is already imported, else as soon
    as gymnasium is (``import doudizhu_env`` itself never imports gymnasium), so
    ``gymnasium.make("DouDizhu-v0")`` and ``gymnasium.make_vec("DouDizhu-v0", num_envs=...)``
    work after both imports, in either order.
    """
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="doudizhu_env.gym_env:DouDizhuEnv",
            vector_entry_point="doudizhu_env.gym_env:DouDizhuVectorEnv",
        )


# Gymnasium 1.x loads no plugin entry points, so the id is registered from here. To keep
# gymnasium (an optional dependency, extra "env") unimported, a one-shot import hook
# registers it right after gymnasium's own import completes, whoever imports it.


class _RegisterAfterGymnasium:
    """A ``sys.meta_path`` finder that lets the usual finders load gymnasium, then registers the env."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "gymnasium":
            return None
        import importlib.util
        import sys

        sys.meta_path.remove(self)  # one shot; also lets find_spec below reach the real finders
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, exec_module = spec.loader, spec.loader.exec_module

        def exec_then_register(module):
            exec_module(module)  # the import machinery has put the module in sys.modules already
            register_envs()

        loader.exec_module = exec_then_register
        return spec


def _register_now_or_when_gymnasium_is_imported() -> None:
    import sys

    if sys.modules.get("gymnasium") is not None:  # None: an import of it blocked on purpose
        register_envs()
    elif not any(isinstance(f, _RegisterAfterGymnasium) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterAfterGymnasium())


_register_now_or_when_gymnasium_is_imported()
