"""Small checks and message helpers shared by every layer (one home for each).

- :func:`short`: a value as an error message may quote it: a bounded ``repr`` however large or
  deeply nested the value is (a YAML "billion laughs" is quoted in a few dozen characters).
- :func:`is_int`: an integer that is not a bool (Python or numpy).
- :func:`is_seat`, :func:`check_seat`: one seat (an integer 0, 1 or 2), and its one-line error.
- :func:`seat_array`: seats given to a batch function, checked and broadcast.
"""

from __future__ import annotations

import numbers
import reprlib

import numpy as np

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict, _REPR.maxset = 2, 4, 4, 4, 4
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 60, 60, 40


def short(value, limit: int = 80) -> str:
    """``repr(value)``, bounded: nested containers and long strings or numbers are elided with ``...``."""
    try:
        text = _REPR.repr(value)
    except Exception:  # a repr that fails is still a value to name
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_int(x) -> bool:
    """Whether ``x`` is an integer (``int`` or a numpy integer) and not a bool."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool) and type(x).__name__ != "bool_"


def is_seat(x) -> bool:
    """Whether ``x`` is a seat: an integer 0, 1 or 2 (not a bool, a float or a string)."""
    return is_int(x) and 0 <= x <= 2


def check_seat(name: str, value, optional: bool = False, error: type[Exception] = ValueError) -> None:
    """``value`` must be a seat (:func:`is_seat`), or None if ``optional``; else ``error`` naming
    ``name`` and what it got (the environments raise ValueError, records RecordError)."""
    if optional and value is None:
        return
    if not is_seat(value):
        expected = "a seat 0..2 or None" if optional else "0, 1 or 2"
        raise error(f"{name} must be {expected}, got {short(value)}")


def seat_array(seats, n: int, name: str = "seats") -> np.ndarray:
    """``(n,)`` int64 seats from a seat or ``n`` seats (integers 0, 1 or 2), or ValueError naming them."""
    a = np.asarray(seats)
    if not (np.issubdtype(a.dtype, np.integer) and a.ndim <= 1 and a.size in (1, n)) or a.dtype == bool:
        raise ValueError(f"{name} must be a seat 0..2 or {n} of them, got {short(seats)}")
    if ((a < 0) | (a > 2)).any():
        raise ValueError(f"{name} must be seats 0..2, got {short(seats)}")
    return np.broadcast_to(a.astype(np.int64).reshape(-1), (n,))


def agent_actions(result, n: int, who) -> np.ndarray:
    """``(n,)`` int64 action ids from what an agent (or opponent) ``who`` returned for ``n`` games, or
    ValueError naming it and what it returned (``None``, a string, the wrong length, fractional ids)."""
    try:
        a = np.asarray(result)
    except Exception:
        a = np.asarray(None, dtype=object)
    if a.ndim == 0 and n == 1 and a.dtype != object:
        a = a.reshape(1)
    whole = a.dtype != bool and (np.issubdtype(a.dtype, np.integer) or (
        np.issubdtype(a.dtype, np.floating) and np.isfinite(a).all() and (a == np.round(a)).all()))
    if a.shape != (n,) or not whole:
        name = getattr(who, "name", None) or type(who).__name__
        raise ValueError(f"{name} returned {short(result)} for {n} game(s); expected {n} integer action "
                         "id(s), one per game")
    return a.astype(np.int64)
