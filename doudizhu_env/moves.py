"""Legal moves for one hand, in card notation: the friendly face of the rules.

These helpers work on strings for people, tests and tools; the batched engine
uses the same predicates on arrays (:mod:`doudizhu_env.legal`).
"""

from __future__ import annotations

import numpy as np

from .actions import PASS, Action, CombType, action_table
from .cards import parse_hand
from .rules import Rules


def fits_in_hand(counts: np.ndarray, hand: np.ndarray) -> np.ndarray:
    """A combination can be played only with cards the hand holds: ``counts <= hand`` per rank.

    ``counts`` is ``(..., 15)``, ``hand`` broadcasts against it; returns a bool per combination.
    """
    return np.all(counts <= hand, axis=-1)


def beats(table, a: int, b: int) -> bool:
    """Does combination ``a`` beat combination ``b`` on the table?

    The rocket beats everything; a bomb beats every non-bomb and a lower bomb;
    otherwise the type and length (so the number of cards) must be equal and
    ``a``'s body rank strictly higher. Kickers never matter.
    """
    if a == table.rocket:
        return b != table.rocket
    if b == table.rocket:
        return False
    a_bomb = table.bomb_start <= a < table.bomb_end
    b_bomb = table.bomb_start <= b < table.bomb_end
    if a_bomb and not b_bomb:
        return True
    return table.beat_start[b] <= a < table.group_end[b]


def beaters(table, b: int) -> np.ndarray:
    """Bool mask over the table of every combination that beats ``b`` (see :func:`beats`)."""
    mask = np.zeros(len(table), dtype=bool)
    if b == table.rocket:
        return mask
    mask[table.beat_start[b] : table.group_end[b]] = True
    if not table.bomb_start <= b < table.bomb_end:
        mask[table.bomb_start : table.bomb_end] = True
    mask[table.rocket] = True
    return mask


def _card_action(table, text: str) -> int:
    a = table.index(text)
    if table.types[a] >= CombType.PASS:
        raise ValueError(f"{text!r} is not a card combination (the table to beat must hold cards)")
    return a


def legal_moves(hand: str, last: str | None = None, rules: Rules | str | None = None) -> list[str]:
    """Canonical names of every combination ``hand`` can play on ``last``.

    ``last=None`` means leading (any combination, no pass); otherwise the
    combinations that beat ``last`` plus ``"pass"``. Names are in table order.
    """
    table = action_table(rules)
    counts = parse_hand(hand)
    ok = fits_in_hand(table.counts, counts)
    ok[: table.groups[(CombType.SINGLE, 1)].start] = False
    if last is not None:
        ok &= beaters(table, _card_action(table, last))
        ok[PASS] = True
    return [table.names[i] for i in np.flatnonzero(ok)]


def classify(cards: str, rules: Rules | str | None = None) -> list[Action]:
    """Every reading of a card multiset as a combination (empty list if none)."""
    table = action_table(rules)
    return [table[i] for i in table.readings(parse_hand(cards))]
