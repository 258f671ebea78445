"""Cards, ranks and the text notation.

A hand is a vector of 15 rank counts, index 0..14 for the ranks
``3 4 5 6 7 8 9 T J Q K A 2 X D`` (``X`` small joker, ``D`` big joker).
Suits never matter for play; they exist only for showing a deal to a person,
so the 54 physical cards have ids::

    card id = 4 * rank + suit      for ranks 0..12 (3..2), suits 0..3
    card id = 52                   small joker (X)
    card id = 53                   big joker (D)

Text form: one character per card, ``T`` or ``10`` for ten, case-insensitive,
spaces, dashes, commas and plus signs ignored (``"33-44-55"``, ``"777+3+K"``). Printing is always in rank
order with ``T`` for ten, e.g. ``format_hand(parse_hand("10jqka"))`` gives
``"TJQKA"``.
"""

from __future__ import annotations

import numpy as np

NUM_RANKS = 15
RANK_CHARS = "3456789TJQKA2XD"
RANK_INDEX = {c: i for i, c in enumerate(RANK_CHARS)}

TWO = 12
SMALL_JOKER = 13
BIG_JOKER = 14
ACE = 11
#: The highest rank a chain (sequence, pair sequence, plane) may reach.
CHAIN_TOP = ACE

#: How many cards of each rank a full deck holds.
DECK_COUNTS = np.array([4] * 13 + [1, 1], dtype=np.int8)
DECK_SIZE = 54
HAND_SIZE = 17
HOLE_SIZE = 3

SUIT_CHARS = "SHCD"  # spades, hearts, clubs, diamonds (display only)
_SEPARATORS = " -,+\t"


def parse_hand(text: str) -> np.ndarray:
    """Parse a card string such as ``"33-44-55"`` or ``"10JQKA"`` into 15 counts.

    Raises ``ValueError`` naming the bad character, or the rank whose count
    exceeds what one deck holds (five 7s, two big jokers).
    """
    if not isinstance(text, str):
        raise TypeError(f"cards must be a str, got {type(text).__name__}")
    counts = np.zeros(NUM_RANKS, dtype=np.int64)  # wide: a long string must not wrap round
    i = 0
    while i < len(text):
        c = text[i]
        if c in _SEPARATORS:
            i += 1
            continue
        # one character at a time, ASCII only: some letters' upper case is two characters ("ǰ" -> "J̌")
        upper = c.upper() if c.isascii() else c
        if text.startswith("10", i):
            rank, i = RANK_INDEX["T"], i + 2
        elif upper in RANK_INDEX:
            rank, i = RANK_INDEX[upper], i + 1
        else:
            raise ValueError(
                f"bad card character {c!r} at position {i} in {_short(text)}; "
                f"expected one of {' '.join(RANK_CHARS)} (or 10)"
            )
        counts[rank] += 1
    check_counts(counts, _short(text))
    return counts.astype(np.int8)


def _short(text: str, limit: int = 60) -> str:
    """``repr(text)``, cut to about ``limit`` characters for an error message."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} characters)"


def check_counts(counts: np.ndarray, what: str | None = None) -> None:
    """Raise ``ValueError`` if ``counts`` holds more of a rank than a deck has (or fewer than none).

    ``what`` names the cards in the message (``"impossible count in <what>: ..."``).
    """
    counts = np.asarray(counts)
    if counts.shape != (NUM_RANKS,):
        raise ValueError(f"a hand has {NUM_RANKS} rank counts, got shape {counts.shape}")
    whole = np.issubdtype(counts.dtype, np.number) and (counts == np.round(counts)).all()
    if counts.dtype == bool or not whole:
        raise ValueError(f"rank counts are whole numbers of cards, got {counts.tolist()}")
    bad = np.flatnonzero((counts < 0) | (counts > DECK_COUNTS))
    if len(bad):
        rank = int(bad[0])
        label = f" in {what}" if what is not None else ""
        raise ValueError(
            f"impossible count{label}: {int(counts[rank])} x {RANK_CHARS[rank]}, "
            f"a deck holds {int(DECK_COUNTS[rank])}"
        )


def format_hand(counts) -> str:
    """Cards as text in rank order, e.g. ``"33445TX"``; ``""`` for no cards.

    Raises ``ValueError`` for counts no deck holds (negative, or more of a rank than the deck has).
    """
    counts = np.asarray(counts)
    check_counts(counts)
    return "".join(RANK_CHARS[r] * int(counts[r]) for r in range(NUM_RANKS))


def card_rank(card_ids):
    """Rank index (0..14) of card ids (0..53); works on arrays."""
    card_ids = np.asarray(card_ids)
    return np.where(card_ids >= 52, card_ids - 52 + SMALL_JOKER, card_ids // 4)


def card_name(card_id: int) -> str:
    """A physical card for display: rank then suit, e.g. ``"7H"``, ``"X"``."""
    card_id = int(card_id)
    if not 0 <= card_id < DECK_SIZE:
        raise ValueError(f"card id must be in 0..53, got {card_id}")
    if card_id >= 52:
        return RANK_CHARS[card_id - 52 + SMALL_JOKER]
    return RANK_CHARS[card_id // 4] + SUIT_CHARS[card_id % 4]
