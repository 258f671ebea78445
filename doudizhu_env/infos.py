"""The envs' infos: numbers only, the same three entries in every env, and their names for people.

Every environment gives, for a seat, the same three entries, all ints, so that any RL library can
hold them as they are (TorchRL's ``PettingZooWrapper`` builds tensor specs from the infos: a string or
a ``None`` there fails it):

=========  ===========================================================================================
key        value
=========  ===========================================================================================
``seat``   the seat, 0, 1 or 2 (the PettingZoo agent ``player_<seat>``)
``role``   -1 while there is no landlord yet (bidding), then 0 landlord, 1 landlord_down (the farmer
           after the landlord, who plays next), 2 landlord_up (the farmer before it): the role
           indices of :data:`doudizhu_env.engine.ROLE_NAMES`
``phase``  0 bidding, 1 doubling, 2 play, 3 over: the phases of :data:`doudizhu_env.engine.PHASE_NAMES`
=========  ===========================================================================================

- The PettingZoo env (:mod:`doudizhu_env.aec`): ``infos[agent]`` is exactly these three, Python ints.
- ``DouDizhuEnv``: ``info`` holds them for the learning seat (Python ints), next to ``action_mask``
  (and ``scores``, ``illegal_action`` where they apply).
- ``DouDizhuVectorEnv``: ``info`` holds them as int64 arrays ``(B,)``, one entry per game, next to the
  legal actions.

The names are kept out of the infos (where a library would try to turn them into tensors);
:func:`info_names` gives them::

    from doudizhu_env import info_names

    info_names({"seat": 1, "role": 0, "phase": 2})  # {"seat": 1, "role": "landlord", "phase": "play"}
    info_names({"seat": 0, "role": -1, "phase": 0})  # {"seat": 0, "role": None, "phase": "bidding"}
"""

from __future__ import annotations

import numpy as np

from .engine import PHASE_NAMES, ROLE_NAMES, role_of

#: The role code while there is no landlord yet (bidding).
NO_ROLE = -1
#: The keys every env's info has for a seat.
INFO_KEYS = ("seat", "role", "phase")


def seat_info(seat: int, landlord: int, phase: int) -> dict:
    """The info of ``seat`` in one game whose landlord is ``landlord`` (-1: none yet), at ``phase``:
    Python ints (computed without numpy: the single-game envs build one per step)."""
    role = NO_ROLE if landlord < 0 else (seat - landlord) % 3
    return {"seat": int(seat), "role": int(role), "phase": int(phase)}


def batch_info(seats: np.ndarray, landlord: np.ndarray, phase: np.ndarray) -> dict:
    """The infos of B games, one learning seat each: int64 arrays ``(B,)`` (fresh: the caller's own)."""
    return {"seat": np.array(seats, np.int64), "role": role_of(seats, landlord).astype(np.int64, copy=False),
            "phase": np.array(phase, np.int64)}


def info_names(info: dict) -> dict:
    """A copy of ``info`` with its ``role`` and ``phase`` codes as names (``None`` for role -1).

    Takes the info of any env: ints give names, arrays (the vector env's) give object arrays of
    names. Other entries are copied as they are. A code out of range raises ``ValueError``.
    """
    out = dict(info)
    for key, names in (("role", ROLE_NAMES), ("phase", PHASE_NAMES)):
        if key in info:
            out[key] = _names(key, info[key], names)
    return out


def _names(key: str, code, names: tuple[str, ...]):
    """The names of ``code`` (an int or an array of them); -1 is ``None`` for the role."""
    codes = np.asarray(code)
    low = NO_ROLE if key == "role" else 0
    if not np.issubdtype(codes.dtype, np.integer) or np.any((codes < low) | (codes >= len(names))):
        raise ValueError(f"info[{key!r}] must hold codes {low}..{len(names) - 1}, got {code!r}")
    table = np.array([*names, None], dtype=object)  # index -1 is the last entry: None
    return table[codes] if codes.ndim else table[int(codes)]
