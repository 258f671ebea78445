"""Legal moves for one hand, in card notation: the friendly face of the rules.

These helpers work on strings for people, tests and tools; the batched engine
uses the same predicates on arrays (:mod:`doudizhu_env.legal`).
"""

from __future__ import annotations

import numpy as np

from .actions import NUM_SPECIAL, PASS, Action, CombType, action_table
from .cards import parse_hand
from .rules import Rules


def holds(table, hands: np.ndarray, actions) -> np.ndarray:
    """A combination can be played only with cards the hand holds: per rank, its count <= the hand's.

    ``hands`` is ``(..., 15)`` broadcasting against the actions' counts.
    """
    return np.all(table.counts[actions] <= hands, axis=-1)


def beats(table, actions, on_table) -> np.ndarray:
    """Does each action beat the combination on the table?

    Same type and same length (so the same number of cards) with a strictly
    higher body rank; or a bomb on any non-bomb other than the rocket; or the
    rocket, which nothing beats. Kickers never matter. Works elementwise.
    """
    actions, on_table = np.asarray(actions), np.asarray(on_table)
    same_group = (actions >= table.beat_start[on_table]) & (actions < table.group_end[on_table])
    is_bomb = (actions >= table.bomb_start) & (actions < table.bomb_end)
    table_bomb = (on_table >= table.bomb_start) & (on_table < table.bomb_end)
    bomb_on_plain = is_bomb & ~table_bomb & (on_table != table.rocket)
    rocket = (actions == table.rocket) & (on_table != table.rocket)
    return same_group | bomb_on_plain | rocket


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
    ids = np.arange(len(table))
    ok = holds(table, parse_hand(hand), ids) & (ids >= NUM_SPECIAL)
    if last is not None:
        ok &= beats(table, ids, _card_action(table, last))
        ok[PASS] = True
    return [table.names[i] for i in np.flatnonzero(ok)]


def classify(cards: str, rules: Rules | str | None = None) -> list[Action]:
    """Every reading of a card multiset as a combination (empty list if none)."""
    table = action_table(rules)
    return [table[i] for i in table.readings(parse_hand(cards))]
