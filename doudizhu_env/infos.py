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

:func:`seat_info` and :func:`batch_info` check what they are given (a seat 0..2, a landlord -1..2, a
phase 0..3, arrays of one length): a one-line ``ValueError`` or ``TypeError`` naming the argument.

The names are kept out of the infos (where a library would try to turn them into tensors);
:func:`info_names` gives them::

    from doudizhu_env import info_names

    info_names({"seat": 1, "role": 0, "phase": 2})  # {"seat": 1, "role": "landlord", "phase": "play"}
    info_names({"seat": 0, "role": -1, "phase": 0})  # {"seat": 0, "role": None, "phase": "bidding"}
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .checks import is_int, short
from .engine import PHASE_NAMES, ROLE_NAMES, role_of

#: The role code while there is no landlord yet (bidding).
NO_ROLE = -1
#: The keys every env's info has for a seat.
INFO_KEYS = ("seat", "role", "phase")
#: What each argument of :func:`seat_info` and :func:`batch_info` may hold: (lowest, highest, meaning).
_RANGES = {"seat": (0, 2, "a seat"), "landlord": (-1, 2, "the landlord's seat, -1 while bidding"),
           "phase": (0, len(PHASE_NAMES) - 1, "a phase code (" + ", ".join(
               f"{i} {n}" for i, n in enumerate(PHASE_NAMES)) + ")")}


def _check_code(name: str, value) -> int:
    """``value`` as a Python int if it is an integer in ``name``'s range, else a one-line error."""
    low, high, meaning = _RANGES[name]
    if type(value) is int and low <= value <= high:  # the envs' path: no more than this
        return value
    if not is_int(value):
        raise TypeError(f"{name} must be an integer {low}..{high} ({meaning}), got {short(value)}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be {low}..{high} ({meaning}), got {short(value)}")
    return int(value)


def seat_info(seat: int, landlord: int, phase: int) -> dict:
    """The info of ``seat`` in one game whose landlord is ``landlord`` (-1: none yet), at ``phase``:
    Python ints (computed without numpy: the single-game envs build one per step). A seat outside
    0..2, a landlord outside -1..2 or a phase outside 0..3 (or one that is not an integer) is refused
    in one line naming it."""
    seat, landlord = _check_code("seat", seat), _check_code("landlord", landlord)
    phase = _check_code("phase", phase)
    role = NO_ROLE if landlord < 0 else (seat - landlord) % 3
    return {"seat": seat, "role": role, "phase": phase}


def batch_info(seats: np.ndarray, landlord: np.ndarray, phase: np.ndarray) -> dict:
    """The infos of B games, one learning seat each: int64 arrays ``(B,)`` (fresh: the caller's own).

    ``seats``, ``landlord`` and ``phase`` are integer arrays of one length B (or scalars, as
    :func:`seat_info` takes); a value out of range, a float, or lengths that differ are refused in one
    line naming the argument."""
    arrays = {}
    for name, value in (("seats", seats), ("landlord", landlord), ("phase", phase)):
        low, high, meaning = _RANGES["seat" if name == "seats" else name]
        try:
            a = np.asarray(value)
        except (ValueError, TypeError):  # ragged lists
            a = np.asarray(None, dtype=object)
        if a.dtype == bool or not np.issubdtype(a.dtype, np.integer) or a.ndim > 1:
            raise TypeError(f"{name} must be integers {low}..{high} ({meaning}), one per game, got "
                            f"{_shown(value)}")
        outside = (a < low) | (a > high)
        if outside.any():
            raise ValueError(f"{name} must be {low}..{high} ({meaning}), got {int(a[outside].flat[0])}")
        arrays[name] = a
    lengths = {name: a.shape[0] for name, a in arrays.items() if a.ndim == 1}
    if len(set(lengths.values())) > 1:
        raise ValueError("seats, landlord and phase must have one entry per game, the same length, got "
                         + ", ".join(f"{n} {length}" for n, length in lengths.items()))
    n = next(iter(lengths.values()), None)
    shape = () if n is None else (n,)
    seats_a, landlord_a, phase_a = (np.broadcast_to(a, shape) for a in arrays.values())
    return {"seat": np.array(seats_a, np.int64), "role": role_of(seats_a, landlord_a).astype(np.int64),
            "phase": np.array(phase_a, np.int64)}


def _shown(value) -> str:
    """``value`` as a one-line message quotes it (an array by its dtype and shape)."""
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    return short(value)


def info_names(info: Mapping) -> dict:
    """A copy of ``info`` with its ``role`` and ``phase`` codes as names (``None`` for role -1).

    Takes the info of any env: ints give names, arrays (the vector env's) give object arrays of
    names. Other entries are copied as they are. A code out of range raises ``ValueError``; an
    ``info`` that is not a dict, ``TypeError``.
    """
    if not isinstance(info, Mapping):
        raise TypeError(f"info must be a dict, an env's info such as {{'seat': 1, 'role': 0, 'phase': 2}}, "
                        f"got {short(info)}")
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
