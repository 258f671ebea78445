"""Hypothesis strategies over the game's objects: hands, deals, moves in card notation, game records.

Shared by the property-based tests (``tests/test_properties.py``); each draws what a person or a
program could give the project, within the deck (a deck holds four of each rank 3..2 and one of
each joker).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from doudizhu_env import engine
from doudizhu_env.cards import DECK_COUNTS, format_hand
from doudizhu_env.engine import Deal
from doudizhu_env.moves import legal_moves
from doudizhu_env.records import record_from_state

#: The 54 cards of the deck as ranks (0 = "3" ... 14 = big joker), one entry per card.
DECK = np.repeat(np.arange(15), DECK_COUNTS)


@st.composite
def hands(draw, min_size: int = 0, max_size: int = 20) -> str:
    """A hand in card notation (e.g. ``"3345TTX"``): any multiset of one deck's cards."""
    size = draw(st.integers(min_size, max_size))
    picked = draw(st.permutations(range(len(DECK))))[:size]
    return format_hand(np.bincount(DECK[list(picked)], minlength=15))


@st.composite
def deals(draw, landlord: bool = False) -> Deal:
    """A deal of the whole deck: three 17-card hands, the 3 hole cards and who bids first (and, with
    ``landlord``, a landlord for rules without bidding)."""
    order = np.array(draw(st.permutations(range(len(DECK)))))
    parts = [DECK[order[17 * i:17 * (i + 1)]] for i in range(3)] + [DECK[order[51:]]]
    hands_, hole = [format_hand(np.bincount(p, minlength=15)) for p in parts[:3]], \
        format_hand(np.bincount(parts[3], minlength=15))
    seat = st.integers(0, 2)
    return Deal(tuple(hands_), hole, draw(seat), draw(seat) if landlord else None)


@st.composite
def moves(draw, hand: str, last: str | None = None, rules="standard") -> str:
    """A legal move of ``hand`` on ``last`` (``None``: leading), as its canonical name."""
    return draw(st.sampled_from(legal_moves(hand, last, rules)))


@st.composite
def game_records(draw, rules="standard") -> dict:
    """The record of a whole hand: a drawn deal, played to its end by moves drawn at random (by a
    generator seeded from the draw, so a failing example shrinks to its deal and seed)."""
    deal = draw(deals(landlord=True))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    state = engine.reset(rng, 1, rules, deals=[deal])
    while not state.done[0]:
        state = engine.step(state, engine.sample_legal(state, rng))
    return record_from_state(state, 0)
