"""Legal moves for one hand, in card notation: the friendly face of the rules.

These helpers work on strings for people, tests and tools; the batched engine
uses the same predicates on arrays (:func:`~doudizhu_env.legal.holds` and
:func:`~doudizhu_env.legal.beats` of :mod:`doudizhu_env.legal`).
"""

from __future__ import annotations

import numpy as np

from .actions import NUM_SPECIAL, PASS, Action, CombType, action_table
from .cards import check_counts, parse_hand
from .legal import beats, holds
from .rules import Rules


def _card_action(table, text: str) -> int:
    a = table.index(text)
    if table.types[a] >= CombType.PASS:
        raise ValueError(f"{text!r} is not a card combination (the table to beat must hold cards)")
    return a


def check_position(hand: str, counts: np.ndarray, last: str, last_counts: np.ndarray) -> None:
    """Raise ``ValueError`` unless one deck holds the hand and the combination to beat together.

    The combination on the table was played from another hand, so per rank the
    two may together hold at most what a deck has: 4 of each rank 3..2, 1 small
    joker, 1 big joker (``D`` against ``XD`` is impossible: there is one big joker).
    """
    check_counts(counts.astype(np.int64) + last_counts,
                 f"the hand {hand!r} and the combination to beat {last!r} together")


def legal_moves(hand: str, last: str | None = None, rules: Rules | str | None = None) -> list[str]:
    """Canonical names of every combination ``hand`` can play on ``last``.

    ``last=None`` means leading (any combination, no pass); otherwise the
    combinations that beat ``last`` plus ``"pass"``. Names are in table order.

    Raises ``ValueError`` for an impossible position: cards that are no deck's
    (more of a rank than a deck has, in the hand or in the hand and ``last``
    together; see :func:`check_position`), or a ``last`` that is not a card
    combination of ``rules``.
    """
    table = action_table(rules)
    counts = parse_hand(hand)
    ids = np.arange(len(table))
    ok = holds(table, counts, ids) & (ids >= NUM_SPECIAL)
    if last is not None:
        on_table = _card_action(table, last)
        check_position(hand, counts, last, table.counts[on_table])
        ok &= beats(table, ids, on_table)
        ok[PASS] = True
    return [table.names[i] for i in np.flatnonzero(ok)]


def classify(cards: str, rules: Rules | str | None = None) -> list[Action]:
    """Every reading of a card multiset as a combination (empty list if none)."""
    table = action_table(rules)
    return [table[i] for i in table.readings(parse_hand(cards))]
