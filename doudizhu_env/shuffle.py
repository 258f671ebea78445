"""The deal stream: every card dealt and seat drawn is a pure function of ``(key, episode, redeals)``.

One home for the shuffle, used by both game paths: the batched engine
(:func:`shuffled_deals`, :func:`draw_seat` over N games at once) and the
single-game path (:func:`shuffled_deal_one`, :func:`draw_seat_one`, the same
values for one game in Python ints, without B = 1 array calls). Each one-game
function reproduces its batched namesake bit for bit
(``tests/test_single_game.py`` deals both ways and compares).

Each game's words are SplitMix64 (:func:`_mix64`) of a counter sequence
seeded from the game's ``key`` (drawn once per game from the caller's
generator), its ``episode`` and its ``redeals``; a deck is the order that
sorts 54 such words, so every permutation is equally likely.
"""

from __future__ import annotations

import numpy as np

from .cards import DECK_SIZE

_GOLDEN, _MASK64 = 0x9E3779B97F4A7C15, (1 << 64) - 1  # the stream's counter step (2**64 / phi); 2**64 - 1


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finalizer: a bijective scramble of uint64 values."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _stream(key, episode, redeals, n: int) -> np.ndarray:
    """``(N, n)`` pseudo-random uint64 words of the given per-game counters."""
    with np.errstate(over="ignore"):
        seed = _mix64(key ^ _mix64(episode.astype(np.uint64) * np.uint64(_GOLDEN)
                                   + redeals.astype(np.uint64) + np.uint64(1)))
        ctr = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(_GOLDEN)
        return _mix64(seed[:, None] + ctr[None, :])


def shuffled_deals(key, episode, redeals) -> np.ndarray:
    """``(N, 54)`` card ids: a uniformly shuffled deck per game."""
    return np.argsort(_stream(key, episode, redeals, DECK_SIZE), axis=1).astype(np.int8)


def draw_seat(key, episode, salt: int) -> np.ndarray:
    """A seat 0..2 drawn from the game's key (first bidder, or landlord without bidding)."""
    word = _stream(key, episode, np.full(len(key), -1 - salt, dtype=np.int64), 1)[:, 0]
    return (word % np.uint64(3)).astype(np.int8)


# The same stream for one game in Python ints (the single-game path deals without B = 1 array calls):
# each function reproduces its batched namesake's values for one game bit for bit.
_DECK_COUNTERS = np.array([(i * _GOLDEN) & _MASK64 for i in range(1, DECK_SIZE + 1)], np.uint64)


def _mix64_one(x: int) -> int:
    """:func:`_mix64` of one value (a Python int 0..2**64 - 1)."""
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def _stream_seed_one(key: int, episode: int, redeals: int) -> int:
    """The seed :func:`_stream` derives for one game's counters (``redeals`` may be negative, as there)."""
    return _mix64_one(key ^ _mix64_one((episode * _GOLDEN + redeals + 1) & _MASK64))


def shuffled_deal_one(key: int, episode: int, redeals: int) -> np.ndarray:
    """``(54,)`` int8: row 0 of :func:`shuffled_deals` for the one game ``(key, episode, redeals)``.

    The 54 words are distinct (a bijective mix of distinct counters), so the order is that of any sort.
    """
    seed = np.uint64(_stream_seed_one(key, episode, redeals))
    return np.argsort(_mix64(_DECK_COUNTERS + seed)).astype(np.int8)


def draw_seat_one(key: int, episode: int, salt: int) -> int:
    """:func:`draw_seat` for the one game ``(key, episode)``: a seat 0..2."""
    return _mix64_one((_stream_seed_one(key, episode, -1 - salt) + _GOLDEN) & _MASK64) % 3
