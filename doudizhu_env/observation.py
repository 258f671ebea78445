"""What a seat may know, as a flat float32 vector built from named pieces.

:data:`PIECES` is the one source of truth for the layout: models, docs and
tests take names, sizes and offsets from it (``OBS_SIZE``, ``piece_slice``).
Seats are described *relative to the observer*: ``self``, ``next`` (the seat
that plays after it) and ``prev`` (the seat before it). Cards are encoded as
54 bits, four per rank from 3 to 2 (bit k set when at least k + 1 cards of
that rank are there) and one per joker.

========================  =====  =====================================================
piece                     size   meaning
========================  =====  =====================================================
``hand``                  54     the observer's own cards
``role``                  3      one-hot: landlord, farmer after the landlord
                                 (``landlord_down``), farmer before it
                                 (``landlord_up``); zeros while bidding
``phase``                 4      one-hot: bidding, doubling, play, over
``landlord``              3      which relative seat (self, next, prev) is landlord
``bids``                  15     per relative seat, one-hot: not yet, 0, 1, 2, 3
``doubles``               9      per relative seat, one-hot: not asked, no, yes
``base``                  4      one-hot: the highest bid so far, 0..3
``multiplier``            16     one-hot: log2 of the multiplier so far (0..15, capped)
``hole``                  54     the hole cards once shown (zeros while bidding)
``played``                162    cards played so far by self, next, prev
``unseen``                54     cards the observer cannot place: the deck minus
                                 its hand and every card played (the other two
                                 hands, and the hole cards until they are taken)
``cards_left``            63     per relative seat, one-hot number of cards 0..20
``to_beat``               54     the combination on the table (zeros when leading)
``to_beat_seat``          3      who played it (relative seat; zeros when leading)
``bombs``                 5      one-hot: bombs and rocket played so far (0..4, capped)
``history``               855    the last 15 moves, most recent first, each 54
                                 card bits and a 3-way relative seat one-hot
                                 (a pass is a move with no cards)
========================  =====  =====================================================

Every entry is 0 or 1, so observations can be stored as packed bits.

Nothing in the vector depends on cards the observer cannot see: the two other
hands enter only through public facts (their size, what they played) and
the union ``unseen``, which swapping cards between them does not change.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .actions import action_table
from .cards import DECK_COUNTS
from .engine import PLAY, State

HISTORY_MOVES = 15
CARD_BITS = 54

PIECES: tuple[tuple[str, int], ...] = (
    ("hand", CARD_BITS),
    ("role", 3),
    ("phase", 4),
    ("landlord", 3),
    ("bids", 3 * 5),
    ("doubles", 3 * 3),
    ("base", 4),
    ("multiplier", 16),
    ("hole", CARD_BITS),
    ("played", 3 * CARD_BITS),
    ("unseen", CARD_BITS),
    ("cards_left", 3 * 21),
    ("to_beat", CARD_BITS),
    ("to_beat_seat", 3),
    ("bombs", 5),
    ("history", HISTORY_MOVES * (CARD_BITS + 3)),
)
OBS_SIZE = sum(size for _, size in PIECES)
_OFFSETS = {}
_pos = 0
for _name, _size in PIECES:
    _OFFSETS[_name] = slice(_pos, _pos + _size)
    _pos += _size
ROLE_NAMES = ("landlord", "landlord_down", "landlord_up")

# card bit j is set when the count of rank _CARD_COLUMNS[j] exceeds _CARD_LEVEL[j]
_CARD_COLUMNS = np.concatenate([np.repeat(np.arange(13), 4), [13, 14]])
_CARD_LEVEL = np.concatenate([np.tile(np.arange(4), 13), [0, 0]])


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


def roles(state: State, seats: np.ndarray) -> np.ndarray:
    """Role index (0 landlord, 1 landlord_down, 2 landlord_up) of each seat; -1 before a landlord exists."""
    landlord = state.landlord.astype(np.int64)
    return np.where(landlord >= 0, (np.asarray(seats) - landlord) % 3, -1)


def _one_hot(values: np.ndarray, size: int) -> np.ndarray:
    """One-hot over the last axis; values outside 0..size-1 give all zeros."""
    return (values[..., None] == np.arange(size)).astype(np.float32)


def observe(state: State, seats=None) -> np.ndarray:
    """``(B, OBS_SIZE)`` float32 observations of ``seats`` (default: the seat to act) in each game."""
    n = state.num_games
    seats = state.to_act if seats is None else np.broadcast_to(np.asarray(seats), (n,))
    rows = np.arange(n)
    rel = relative_seats(seats)  # (B, 3)
    rows3 = rows[:, None]
    out = np.zeros((n, OBS_SIZE), dtype=np.float32)

    def put(name, value):
        out[:, _OFFSETS[name]] = value.reshape(n, -1)

    hand = state.hands[rows, seats]
    put("hand", card_bits(hand))
    put("role", _one_hot(roles(state, seats), 3))
    put("phase", _one_hot(state.phase.astype(np.int64), 4))
    put("landlord", (rel == state.landlord[:, None]).astype(np.float32))
    put("bids", _one_hot(state.bids[rows3, rel].astype(np.int64) + 1, 5))
    put("doubles", _one_hot(state.doubles[rows3, rel].astype(np.int64) + 1, 3))
    put("base", _one_hot(state.base.astype(np.int64), 4))
    put("multiplier", _one_hot(np.minimum(np.log2(state.multiplier).astype(np.int64), 15), 16))
    shown = (state.landlord >= 0)[:, None]
    put("hole", card_bits(state.hole * shown))
    put("played", card_bits(state.played[rows3, rel]))
    put("unseen", card_bits(DECK_COUNTS - hand - state.played.sum(axis=1)))
    left = state.hands[rows3, rel].sum(axis=2)
    put("cards_left", _one_hot(left.astype(np.int64), 21))
    table = action_table(state.rules)
    leading = state.leading | (state.phase != PLAY)
    to_beat = np.where(leading[:, None], 0, table.counts[np.maximum(state.table_action, 0)])
    put("to_beat", card_bits(to_beat))
    put("to_beat_seat", np.where(leading[:, None], 0, rel == state.table_seat[:, None]).astype(np.float32))
    put("bombs", _one_hot(np.minimum(state.bombs.astype(np.int64) + state.rocket, 4), 5))
    put("history", _history(state, seats, table))
    return out


def _history(state: State, seats: np.ndarray, table) -> np.ndarray:
    """``(B, 15, 57)`` the last moves, most recent first: card bits and relative seat."""
    n = state.num_games
    k = np.arange(HISTORY_MOVES)
    pos = state.history_len[:, None].astype(np.int64) - 1 - k[None, :]  # (B, K)
    valid = pos >= 0
    pos = np.maximum(pos, 0)
    rows = np.arange(n)[:, None]
    moves = state.history[rows, pos].astype(np.int64)
    who = state.history_seat[rows, pos].astype(np.int64)
    counts = table.counts[np.maximum(moves, 0)] * valid[..., None]
    seat_rel = np.where(valid, (who - seats[:, None]) % 3, -1)
    return np.concatenate([card_bits(counts), _one_hot(seat_rel, 3)], axis=-1)


def seat_view(state: State, games=None, seats=None) -> State:
    """The games ``games`` (default: all) as ``seats`` (default: the seat to act) may see them.

    A :class:`State` of the selected games in which everything the seat
    cannot see is blanked: the other two hands (zeros), the hole cards until
    they are shown, the dealt cards and the shuffle key. Engine functions
    that need only the acting seat's cards (``legal_actions``,
    ``legal_action_mask``) and :func:`observe` work on it unchanged, so an
    agent given views cannot cheat.
    """
    games = np.arange(state.num_games) if games is None else np.asarray(games, dtype=np.int64)
    seats = state.to_act[games] if seats is None else np.broadcast_to(np.asarray(seats), games.shape)
    fields = {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    sub = {k: (v[games] if isinstance(v, np.ndarray) else v) for k, v in fields.items()}
    own = (np.arange(3)[None, :] == np.asarray(seats)[:, None])[:, :, None]
    sub["hands"] = np.where(own, sub["hands"], 0).astype(np.int8)
    sub["hole"] = np.where((sub["landlord"] >= 0)[:, None], sub["hole"], 0).astype(np.int8)
    sub["deal"] = np.full_like(sub["deal"], -1)
    sub["key"] = np.zeros_like(sub["key"])
    return State(**sub)


#: Features of an action (for Q(s, a) models), one row per action id.
ACTION_PIECES: tuple[tuple[str, int], ...] = (
    ("cards", CARD_BITS),  # the cards it plays (zeros for pass, bids, doubling)
    ("type", 17),  # one-hot CombType, the non-card kinds included
    ("rank", 15),  # one-hot body rank (zeros for non-card actions)
    ("length", 13),  # one-hot chain length 0..12 (1 for non-chains, 0 for non-card actions)
    ("value", 4),  # one-hot bid value for bids; [double, no_double] in the first two for doubling
)
ACTION_SIZE = sum(size for _, size in ACTION_PIECES)


def action_features(rules) -> np.ndarray:
    """``(A, ACTION_SIZE)`` float32 features of every action of ``rules``' table."""
    table = action_table(rules)
    ranks = table.ranks.astype(np.int64)
    value = np.full(len(table), -1, dtype=np.int64)
    value[1:5] = np.arange(4)  # bid0..bid3
    value[5:7] = np.arange(2)  # double, no_double
    return np.concatenate([
        card_bits(table.counts),
        _one_hot(table.types.astype(np.int64), 17),
        _one_hot(np.where(ranks >= 0, ranks, -1), 15),
        _one_hot(table.lengths.astype(np.int64), 13),
        _one_hot(value, 4),
    ], axis=1)
