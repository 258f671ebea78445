"""Small checks and message helpers shared by every layer (one home for each).

- :func:`short`: a value as an error message may quote it: a bounded ``repr`` however large or
  deeply nested the value is (a YAML "billion laughs" is quoted in a few dozen characters).
- :func:`is_int`: an integer that is not a bool (Python or numpy).
"""

from __future__ import annotations

import numbers
import reprlib

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
