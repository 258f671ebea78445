"""What a seat may know, as a flat float32 vector built from named pieces.

:data:`PIECES` is the one source of truth for the layout: models, docs and
tests take names, sizes and offsets from it (``OBS_SIZE``, ``piece_slice``).
Seats are described *relative to the observer*: ``self``, ``next`` (the seat
that plays after it) and ``prev`` (the seat before it). Cards are encoded as
54 bits, four per rank from 3 to 2 (bit k set when at least k + 1 cards of
that rank are there) and one per joker.

The card pieces come first (22 blocks of 54 bits), then the one-hot pieces:

=================  =====  ============================================================
piece              size   meaning
=================  =====  ============================================================
``hand``           54     the observer's own cards
``hole``           54     the hole cards once shown (zeros while bidding)
``played``         162    cards played so far by self, next, prev
``unseen``         54     cards the observer cannot place: the deck minus its hand
                          and every card played (the other two hands, and the hole
                          cards until they are taken)
``to_beat``        54     the combination on the table (zeros when leading)
``history_cards``  810    the cards of the last 15 moves, most recent first (a pass
                          or a bid is a move with no cards)
``role``           3      landlord, farmer after the landlord (``landlord_down``),
                          farmer before it (``landlord_up``); zeros while bidding
``phase``          4      bidding, doubling, play, over
``landlord``       3      which relative seat (self, next, prev) is landlord
``bids``           15     per relative seat: not yet, 0, 1, 2, 3
``doubles``        9      per relative seat: not asked, no, yes
``base``           4      the highest bid so far, 0..3
``multiplier``     16     log2 of the multiplier so far (0..15, capped)
``cards_left``     63     per relative seat, the number of cards in hand 0..20: the
                          cards dealt to it (17, and 3 more for the landlord once
                          it took the hole cards) minus the cards it played
``to_beat_seat``   3      who played the combination on the table (zeros when leading)
``bombs``          5      bombs and rocket played so far (0..4, capped)
``history_seats``  45     per move of ``history_cards``, who made it (relative seat)
=================  =====  ============================================================

Every entry is 0 or 1, so observations can be stored as packed bits.

Nothing in the vector depends on cards the observer cannot see: the two other
hands enter only through public facts (their size, what they played) and
the union ``unseen``, which swapping cards between them does not change.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .actions import BID0, BID3, DOUBLE, MAX_CHAIN_LENGTH, NO_DOUBLE, NUM_TYPES, action_table
from .cards import DECK_COUNTS, DECK_SIZE, HAND_SIZE, HOLE_SIZE, NUM_RANKS
from .checks import seat_array
from .engine import PLAY, ROLE_NAMES, State, role_of, take  # noqa: F401  (ROLE_NAMES: re-exported)

HISTORY_MOVES = 15
CARD_BITS = DECK_SIZE  # one bit per card of the deck
#: Categories of the capped one-hot counts: log2 of the multiplier 0..15, bombs played 0..4.
MULTIPLIER_LEVELS = 16
BOMB_LEVELS = 5
#: The most cards a hand holds (the landlord's 17 + 3), so ``cards_left`` has one more category.
MAX_HAND = HAND_SIZE + HOLE_SIZE

#: Card pieces: (name, number of 54-bit blocks).
CARD_PIECES = (("hand", 1), ("hole", 1), ("played", 3), ("unseen", 1), ("to_beat", 1),
               ("history_cards", HISTORY_MOVES))
#: One-hot pieces: (name, number of slots, categories per slot).
ONE_HOT_PIECES = (("role", 1, 3), ("phase", 1, 4), ("landlord", 1, 3), ("bids", 3, 5), ("doubles", 3, 3),
                  ("base", 1, 4), ("multiplier", 1, MULTIPLIER_LEVELS), ("cards_left", 3, MAX_HAND + 1),
                  ("to_beat_seat", 1, 3), ("bombs", 1, BOMB_LEVELS), ("history_seats", HISTORY_MOVES, 3))
PIECES: tuple[tuple[str, int], ...] = tuple(
    [(name, blocks * CARD_BITS) for name, blocks in CARD_PIECES]
    + [(name, slots * size) for name, slots, size in ONE_HOT_PIECES]
)
OBS_SIZE = sum(size for _, size in PIECES)
CARD_BLOCKS = sum(blocks for _, blocks in CARD_PIECES)
_OFFSETS = {}
_pos = 0
for _name, _size in PIECES:
    _OFFSETS[_name] = slice(_pos, _pos + _size)
    _pos += _size
# column of category 0 of every one-hot slot, and the number of categories
_SLOT_START = np.concatenate([_OFFSETS[n].start + size * np.arange(k) for n, k, size in ONE_HOT_PIECES])
_SLOT_SIZE = np.concatenate([np.full(k, size) for _, k, size in ONE_HOT_PIECES])

# card bit j is set when the count of rank _CARD_COLUMNS[j] exceeds _CARD_LEVEL[j]
_CARD_COLUMNS = np.repeat(np.arange(NUM_RANKS), DECK_COUNTS)
_CARD_LEVEL = np.concatenate([np.arange(k) for k in DECK_COUNTS])


def piece_slice(name: str) -> slice:
    """Where piece ``name`` sits in the observation vector."""
    if name not in _OFFSETS:
        raise KeyError(f"unknown observation piece {name!r}; pieces: {[n for n, _ in PIECES]}")
    return _OFFSETS[name]


def card_bits(counts: np.ndarray) -> np.ndarray:
    """``(..., 15)`` rank counts -> ``(..., 54)`` card bits (see the module docstring)."""
    return (counts[..., _CARD_COLUMNS] > _CARD_LEVEL).astype(np.float32)


def relative_seats(seats: np.ndarray) -> np.ndarray:
    """``(N, 3)`` absolute seat of self, next, prev for each observer."""
    seats = np.asarray(seats, dtype=np.int64)
    return (seats[:, None] + np.arange(3)[None, :]) % 3


def cards_left(state: State) -> np.ndarray:
    """``(B, 3)`` cards in each seat's hand, from public facts only: dealt minus played.

    Every seat was dealt 17 cards and the landlord took the 3 hole cards; so
    the count does not need the hands and is the same on a :func:`seat_view`.
    """
    took_hole = np.arange(3)[None, :] == state.landlord.astype(np.int64)[:, None]
    return HAND_SIZE + HOLE_SIZE * took_hole - state.played.sum(axis=2, dtype=np.int64)


def _one_hot(values: np.ndarray, size: int) -> np.ndarray:
    """One-hot over the last axis; values outside 0..size-1 give all zeros."""
    return (values[..., None] == np.arange(size)).astype(np.float32)


def observe(state: State, seats=None) -> np.ndarray:
    """``(B, OBS_SIZE)`` float32 observations of ``seats`` (default: the seat to act) in each game."""
    n = state.num_games
    seats = state.to_act.astype(np.int64) if seats is None else seat_array(seats, n)
    out = np.zeros((n, OBS_SIZE), dtype=np.float32)
    last = _last_moves(state)
    out[:, : CARD_BLOCKS * CARD_BITS] = card_bits(_card_counts(state, seats, last)).reshape(n, -1)
    values = _one_hot_values(state, seats, last)  # (B, slots), -1 = none
    valid = (values >= 0) & (values < _SLOT_SIZE)
    rows, slots = np.nonzero(valid)
    out[rows, _SLOT_START[slots] + values[rows, slots]] = 1.0
    return out


def _card_counts(state: State, seats: np.ndarray, last) -> np.ndarray:
    """``(B, 22, 15)`` rank counts of the card pieces, in :data:`CARD_PIECES` order."""
    n = state.num_games
    rows = np.arange(n)
    rel = relative_seats(seats)
    hand = state.hands[rows, seats]
    hole = state.hole * (state.landlord >= 0)[:, None]
    leading = state.leading | (state.phase != PLAY)
    table = action_table(state.rules)
    to_beat = table.counts[np.maximum(state.to_beat, 0)] * ~leading[:, None]
    moves, _, valid = last
    history = table.counts[np.maximum(moves, 0)] * valid[..., None]
    return np.concatenate([
        hand[:, None], hole[:, None], state.played[rows[:, None], rel],
        (DECK_COUNTS - hand - state.played.sum(axis=1))[:, None], to_beat[:, None], history,
    ], axis=1)


def _one_hot_values(state: State, seats: np.ndarray, last) -> np.ndarray:
    """``(B, slots)`` category of every one-hot slot, in :data:`ONE_HOT_PIECES` order (-1 = none)."""
    rows = np.arange(state.num_games)[:, None]
    rel = relative_seats(seats)
    landlord = state.landlord.astype(np.int64)
    leading = state.leading | (state.phase != PLAY)
    _, who, valid = last
    return np.concatenate([
        role_of(seats, state.landlord)[:, None],
        state.phase[:, None],
        np.where(landlord >= 0, (landlord - seats) % 3, -1)[:, None],
        state.bids[rows, rel] + 1,
        state.doubles[rows, rel] + 1,
        state.base[:, None],
        np.minimum(np.log2(state.multiplier).astype(np.int64), MULTIPLIER_LEVELS - 1)[:, None],
        cards_left(state)[rows, rel],
        np.where(leading, -1, (state.to_beat_seat - seats) % 3)[:, None],
        np.minimum(state.bombs.astype(np.int64) + state.rocket, BOMB_LEVELS - 1)[:, None],
        np.where(valid, (who - seats[:, None]) % 3, -1),
    ], axis=1, dtype=np.int64)


def _last_moves(state: State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(B, 15)`` action ids and seats of the last moves, most recent first, and which exist."""
    pos = state.history_len[:, None].astype(np.int64) - 1 - np.arange(HISTORY_MOVES)
    valid = pos >= 0
    rows, pos = np.arange(state.num_games)[:, None], np.maximum(pos, 0)
    return state.history[rows, pos].astype(np.int64), state.history_seat[rows, pos].astype(np.int64), valid


def seat_view(state: State, games=None, seats=None) -> State:
    """The games ``games`` (default: all) as ``seats`` (default: the seat to act) may see them.

    A :class:`State` of the selected games in which everything the seat
    cannot see is blanked: the other two hands (zeros), the hole cards until
    they are shown, the dealt cards and the shuffle key. Engine functions
    that need only the acting seat's cards (``legal_actions``,
    ``legal_action_mask``) and :func:`observe` work on it unchanged, so an
    agent given views cannot cheat.
    """
    sub = take(state, np.arange(state.num_games) if games is None else games)
    seats = sub.to_act if seats is None else seat_array(seats, sub.num_games)
    own = (np.arange(3)[None, :] == np.asarray(seats)[:, None])[:, :, None]
    return dataclasses.replace(
        sub,
        hands=np.where(own, sub.hands, 0).astype(np.int8),
        hole=np.where((sub.landlord >= 0)[:, None], sub.hole, 0).astype(np.int8),
        deal=np.full_like(sub.deal, -1),
        key=np.zeros_like(sub.key),
    )


#: Features of an action (for Q(s, a) models), one row per action id.
ACTION_PIECES: tuple[tuple[str, int], ...] = (
    ("cards", CARD_BITS),  # the cards it plays (zeros for pass, bids, doubling)
    ("type", NUM_TYPES),  # one-hot CombType, the non-card kinds included
    ("rank", NUM_RANKS),  # one-hot body rank (zeros for non-card actions)
    ("length", MAX_CHAIN_LENGTH + 1),  # one-hot chain length 0..12 (1 for non-chains, 0 for non-card actions)
    ("value", 4),  # one-hot bid value for bids; [double, no_double] in the first two for doubling
)
ACTION_SIZE = sum(size for _, size in ACTION_PIECES)


def action_features(rules) -> np.ndarray:
    """``(A, ACTION_SIZE)`` float32 features of every action of ``rules``' table."""
    table = action_table(rules)
    ranks = table.ranks.astype(np.int64)
    value = np.full(len(table), -1, dtype=np.int64)
    value[BID0 : BID3 + 1] = np.arange(BID3 - BID0 + 1)  # bid0..bid3
    value[DOUBLE : NO_DOUBLE + 1] = np.arange(2)  # double, no_double
    return np.concatenate([
        card_bits(table.counts),
        _one_hot(table.types.astype(np.int64), NUM_TYPES),
        _one_hot(np.where(ranks >= 0, ranks, -1), NUM_RANKS),
        _one_hot(table.lengths.astype(np.int64), MAX_CHAIN_LENGTH + 1),
        _one_hot(value, 4),
    ], axis=1)
