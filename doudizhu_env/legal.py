"""Legality: the two rules of play, and batched legality as bitsets over the action table.

The rules are two elementwise predicates on action ids: :func:`holds` (the hand
has the cards) and :func:`beats` (the combination beats the one on the table).
The engine and the card-string helpers (:mod:`doudizhu_env.moves`) use them
directly; the bitsets below answer the same question for many hands at once.

For B hands at once this answers "which combinations does each hand hold?"
without scanning B x A card counts. The set of legal actions of one game is
a row of ``W = ceil(A / 64)`` uint64 words, bit ``a % 64`` of word ``a // 64``
standing for action ``a``.

How a hand becomes a bitset. A combination fits in a hand when, for every
rank, it uses no more cards of that rank than the hand holds. The 15 ranks are
cut into five blocks of three (``3 4 5 | 6 7 8 | 9 T J | Q K A | 2 X D``); for
each block and each of the 5 x 5 x 5 possible counts of its three ranks a
precomputed bitset marks the combinations that fit *within that block*::

    fit[block, c0 * 25 + c1 * 5 + c2]  ->  W words

A hand's bitset is the AND of five gathered rows, one per block: 5 x W word
operations per hand, whatever the number of combinations.

Following a combination restricts the fitting set to the actions that beat
it: the range ``[beat_start, group_end)`` of its (type, length) group, the
bomb range (unless it is a bomb: then the range already holds the higher
bombs) and the rocket. That set depends only on the group and rank of the
combination on the table, so there are a few hundred of them, precomputed
as bitsets (``beaters``, one row per distinct ``beat_start``).
"""

from __future__ import annotations

import functools

import numpy as np

from .actions import NUM_SPECIAL, PASS, ActionTable, action_table
from .rules import TABLES_KEPT, Rules

_BLOCKS = np.arange(15).reshape(5, 3)
_WINDOW = 4  # words computed for a narrow follow (see LegalTables.follow_bits)
# _POP8[b]: set bits of byte b; _SELECT8[b, r]: position of the r-th set bit of byte b
_POP8 = np.array([bin(b).count("1") for b in range(256)], dtype=np.int64)
_SELECT8 = np.zeros((256, 8), dtype=np.int64)
for _b in range(256):
    _set = [i for i in range(8) if _b >> i & 1]
    _SELECT8[_b, : len(_set)] = _set


def holds(table: ActionTable, hands: np.ndarray, actions) -> np.ndarray:
    """A combination can be played only with cards the hand holds: per rank, its count <= the hand's.

    ``hands`` is ``(..., 15)`` broadcasting against the actions' counts.
    """
    return np.all(table.counts[actions] <= hands, axis=-1)


def beats(table: ActionTable, actions, on_table) -> np.ndarray:
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


class LegalTables:
    """Precomputed bitsets of one action table (see the module docstring)."""

    def __init__(self, table: ActionTable):
        self.table = table
        self.num_actions = len(table)
        self.words = -(-self.num_actions // 64)
        self.fit = np.zeros((5, 125, self.words), dtype=np.uint64)
        levels = np.arange(5)
        c0, c1, c2 = np.meshgrid(levels, levels, levels, indexing="ij")
        combos = np.stack([c0.ravel(), c1.ravel(), c2.ravel()], axis=1)  # (125, 3)
        playable = np.zeros(self.num_actions, dtype=bool)
        playable[NUM_SPECIAL:] = True
        for block, ranks in enumerate(_BLOCKS):
            need = table.counts[:, ranks]  # (A, 3)
            ok = np.all(need[None, :, :] <= combos[:, None, :], axis=2) & playable  # (125, A)
            self.fit[block] = pack_bits(ok)
        self._build_beaters()

    def _build_beaters(self):
        t = self.table
        starts, self.beater_row = np.unique(t.beat_start, return_inverse=True)
        rows = np.zeros((len(starts), self.num_actions), dtype=bool)
        for k, start in enumerate(starts):
            a = int(np.flatnonzero(t.beat_start == start)[0])  # a representative action
            if a < NUM_SPECIAL:
                continue
            rows[k, start : t.group_end[a]] = True
            if not t.bomb_start <= a < t.bomb_end and a != t.rocket:
                rows[k, t.bomb_start : t.bomb_end] = True
            rows[k, t.rocket] = a != t.rocket
        self.beaters = pack_bits(rows)
        # the words a row can have set: a window from the first beating id, plus the bomb/rocket words
        nonzero = self.beaters != 0
        first = np.where(nonzero.any(axis=1), np.argmax(nonzero, axis=1), 0)
        self.bomb_words = np.unique(np.arange(t.bomb_start, t.rocket + 1) // 64)
        outside = nonzero.copy()
        outside[:, self.bomb_words] = False
        self.window_start = first
        outside[np.arange(len(starts))[:, None], self._window(np.arange(len(starts)))] = False
        self.narrow = ~outside.any(axis=1)

    def _window(self, rows: np.ndarray) -> np.ndarray:
        """``(N, _WINDOW)`` word indices of the window of beater rows ``rows``."""
        return np.minimum(self.window_start[rows, None] + np.arange(_WINDOW), self.words - 1)

    @staticmethod
    def _block_index(hands: np.ndarray) -> np.ndarray:
        """``(N, 5)`` row of each block's table: c0 * 25 + c1 * 5 + c2 of its three ranks."""
        h = hands.astype(np.intp)
        return h[:, 0::3] * 25 + h[:, 1::3] * 5 + h[:, 2::3]

    def fit_bits(self, hands: np.ndarray) -> np.ndarray:
        """``(N, W)`` bitsets of the combinations each of ``hands (N, 15)`` holds."""
        idx = self._block_index(hands)
        bits = self.fit[0, idx[:, 0]]
        for block in range(1, 5):
            bits &= self.fit[block, idx[:, block]]
        return bits

    def follow_bits(self, hands: np.ndarray, to_beat: np.ndarray, out: np.ndarray | None = None,
                    out_rows: np.ndarray | None = None) -> np.ndarray:
        """``(N, W)`` bitsets of the legal answers to ``to_beat``: beating combos held, and pass.

        When the answers fit in a few words (a window from the first beating id,
        and the bomb words), only those words are computed. With ``out`` (zeros)
        the bitsets are written into its rows ``out_rows`` instead of a new array.
        """
        if out is None or out_rows is None:
            out = np.zeros((len(to_beat), self.words), dtype=np.uint64)
            out_rows = np.arange(len(to_beat))
        rows = self.beater_row[to_beat]
        narrow = self.narrow[rows]
        wide = np.flatnonzero(~narrow)
        if len(wide):
            out[out_rows[wide]] = self.fit_bits(hands[wide]) & self.beaters[rows[wide]]
        few = np.flatnonzero(narrow)
        if len(few):
            bomb_words = np.broadcast_to(self.bomb_words, (len(few), len(self.bomb_words)))
            words = np.concatenate([self._window(rows[few]), bomb_words], axis=1)
            idx = self._block_index(hands[few])
            part = self.beaters[rows[few, None], words]
            for block in range(5):
                part &= self.fit[block][idx[:, block, None], words]
            out[out_rows[few, None], words] = part
        out[out_rows, PASS // 64] |= np.uint64(1 << (PASS % 64))
        return out


@functools.lru_cache(maxsize=TABLES_KEPT)
def _tables(rules: Rules) -> LegalTables:
    return LegalTables(action_table(rules))


def legal_tables(rules: Rules) -> LegalTables:
    """The cached :class:`LegalTables` of ``rules``."""
    return _tables(rules)


def pack_bits(mask: np.ndarray) -> np.ndarray:
    """Bool ``(N, A)`` -> ``(N, W)`` uint64 bitsets (bit ``a % 64`` of word ``a // 64``)."""
    n, a = mask.shape
    words = -(-a // 64)
    padded = np.zeros((n, words * 64), dtype=bool)
    padded[:, :a] = mask
    return np.packbits(padded, axis=1, bitorder="little").view("<u8").astype(np.uint64)


def unpack_bits(bits: np.ndarray, num_actions: int) -> np.ndarray:
    """``(N, W)`` uint64 bitsets -> bool ``(N, num_actions)``."""
    as_bytes = np.ascontiguousarray(bits, dtype="<u8").view(np.uint8)
    return np.unpackbits(as_bytes, axis=1, count=num_actions, bitorder="little").view(bool)


def bits_to_ids(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sparse form of ``(N, W)`` bitsets: ``(ids, offsets)``.

    ``ids[offsets[i]:offsets[i + 1]]`` are the set ids of row ``i``, ascending.
    """
    rows, cols = _nonzero_words(bits)
    words = bits[rows, cols]
    as_bytes = words.astype("<u8").view(np.uint8).reshape(-1, 8)
    set_bits = np.unpackbits(as_bytes, axis=1, bitorder="little").astype(bool)  # (nz, 64)
    which, bit = np.nonzero(set_bits)
    ids = cols[which].astype(np.int64) * 64 + bit
    counts = np.bincount(rows[which], minlength=bits.shape[0])
    offsets = np.zeros(bits.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return ids, offsets


def _nonzero_words(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of every nonzero word (``np.nonzero`` on a bool mask: much faster on uint64)."""
    flat = np.flatnonzero(bits.ravel() != 0)
    return flat // bits.shape[1], flat % bits.shape[1]


def popcount(bits: np.ndarray) -> np.ndarray:
    """Number of set bits of each word (same shape)."""
    return np.bitwise_count(bits)


def sample_bits(bits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One id drawn uniformly from each row's set bits (-1 for an empty row).

    Works on the nonzero words only: row ``i`` takes its ``k``-th set bit,
    ``k = floor(u_i * total_i)`` with ``u_i`` uniform in [0, 1).
    """
    n = len(bits)
    rows, cols = _nonzero_words(bits)
    words = bits[rows, cols]
    count = popcount(words).astype(np.int64)
    cum = np.cumsum(count)
    total = np.bincount(rows, weights=count, minlength=n).astype(np.int64)
    k = np.floor(rng.random(n) * total).astype(np.int64)
    live = np.flatnonzero(total > 0)
    target = (np.cumsum(total) - total + k)[live]  # index among all set bits of all rows
    j = np.searchsorted(cum, target, side="right")  # the word holding it
    within = target - (cum[j] - count[j])
    out = np.full(n, -1, dtype=np.int64)
    out[live] = cols[j] * 64 + select_bit(words[j], within)
    return out


def select_bit(words: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Position (0..63) of the ``k``-th set bit (from 0, lowest first) of each uint64 word."""
    as_bytes = words.astype("<u8").view(np.uint8).reshape(-1, 8)
    per_byte = _POP8[as_bytes]
    cum = np.cumsum(per_byte, axis=1)
    byte = np.argmax(cum > k[:, None], axis=1)
    rows = np.arange(len(words))
    rank_in_byte = k - (cum[rows, byte] - per_byte[rows, byte])
    return byte * 8 + _SELECT8[as_bytes[rows, byte], rank_in_byte]
