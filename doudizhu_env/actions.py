"""The action space: every decision a seat can make, as one integer id.

The table is built in code from a :class:`~doudizhu_env.rules.Rules`, once per
configuration (cached), by enumerating every combination a full deck allows.

Layout of the ids::

    id  0            pass          (play phase, following only)
    ids 1..4         bid0..bid3    (bidding; bid0 = no bid)
    id  5            double        (doubling phase; the landlord's redouble too)
    id  6            no_double
    ids 7..A-1       card combinations, grouped:

        +--------------------- type SINGLE, length 1 ----------------------+
        | 3 | 4 | ... | 2 | X | D                                         |  15 ids
        +--------------------- type PAIR, length 1 ------------------------+
        | 33 | 44 | ... | 22                                               |  13 ids
        +  ...                                                             +
        +--------------------- type SEQUENCE, length 5 --------------------+
        | 34567 | 45678 | ... | TJQKA                                      |   8 ids
        +--------------------- type SEQUENCE, length 6 --------------------+
        | 345678 | ...                                                     |
        +  ...                                                             +
        +--------------------- type PLANE_SINGLES, length 2 ---------------+
        | 333444+5+6 | 333444+5+7 | ... | 333444+X+D | 444555+3+6 | ...    |
        +  ...                                                             +
        +--------------------- type BOMB ----------------------------------+
        | 3333 | ... | 2222                                                |  13 ids
        +--------------------- type ROCKET --------------------------------+
        | XD                                                               |   1 id

One *group* is one (type, length) pair: a contiguous range of ids sorted by
body rank (then by kickers). Everything that beats a combination without
being a bomb is therefore the slice ``[beat_start[a], group_end[a])``; bombs
are the contiguous slice ``[bomb_start, bomb_end)``; the rocket is one id.

Types appear in :class:`CombType` order; lengths ascend inside a type. The
*rank* of a combination is the rank of its body (the lowest rank of a chain);
the *length* is the number of units of a chain (cards of a sequence, pairs of
a pair sequence, triples of a plane) and 1 for every other type.

Canonical names: body cards in rank order, then each kicker after a ``+``
(``333444+5+7``, ``333444+55+77``, ``7777+3+K``, ``777+33``, ``XD``), and
``pass``, ``bid0``..``bid3``, ``double``, ``no_double``. :meth:`ActionTable.index`
also accepts loose card strings (``"3334"``, ``"10JQKA"``) when they have
exactly one reading.
"""

from __future__ import annotations

import enum
import functools
import itertools
from dataclasses import dataclass

import numpy as np

from .cards import (
    BIG_JOKER,
    CHAIN_TOP,
    DECK_COUNTS,
    NUM_RANKS,
    RANK_CHARS,
    SMALL_JOKER,
    TWO,
    format_hand,
    parse_hand,
)
from .checks import is_int
from .rules import TABLES_KEPT, Rules, resolve_rules


class CombType(enum.IntEnum):
    """Combination types, in the order their groups appear in the table."""

    SINGLE = 0
    PAIR = 1
    TRIPLE = 2
    TRIPLE_SINGLE = 3
    TRIPLE_PAIR = 4
    SEQUENCE = 5
    PAIR_SEQUENCE = 6
    PLANE = 7
    PLANE_SINGLES = 8
    PLANE_PAIRS = 9
    FOUR_TWO_SINGLES = 10
    FOUR_TWO_PAIRS = 11
    BOMB = 12
    ROCKET = 13
    # non-card actions
    PASS = 14
    BID = 15
    DOUBLE = 16


PASS = 0
BID0, BID1, BID2, BID3 = 1, 2, 3, 4
DOUBLE = 5
NO_DOUBLE = 6
NUM_SPECIAL = 7
SPECIAL_NAMES = ("pass", "bid0", "bid1", "bid2", "bid3", "double", "no_double")

#: (type, unit size, min length, max length) of the chain types.
CHAIN_SHAPES = {
    CombType.SEQUENCE: (1, 5, 12),
    CombType.PAIR_SEQUENCE: (2, 3, 10),
    CombType.PLANE: (3, 2, 6),
    CombType.PLANE_SINGLES: (3, 2, 5),
    CombType.PLANE_PAIRS: (3, 2, 4),
}
#: Number of action kinds: the :class:`CombType` members, the non-card kinds included.
NUM_TYPES = len(CombType)
#: The longest chain, in units (a sequence 3..A of 12 cards).
MAX_CHAIN_LENGTH = max(hi for _, _, hi in CHAIN_SHAPES.values())


@dataclass(frozen=True)
class Action:
    """One row of the table, for people and tests (engines use the arrays)."""

    id: int
    name: str
    type: CombType
    rank: int
    length: int
    counts: tuple[int, ...]

    @property
    def num_cards(self) -> int:
        return sum(self.counts)


# --------------------------------------------------------------------------
# Enumeration of combinations: (type, length, rank, body counts, kicker ranks, kicker unit)
# --------------------------------------------------------------------------


def _body(ranks, unit):
    counts = np.zeros(NUM_RANKS, dtype=np.int8)
    counts[list(ranks)] = unit
    return counts


def _single_kicker_sets(body_ranks, num, rules):
    """Multisets (sorted tuples) of ``num`` single kicker ranks allowed around a body.

    A kicker never shares a rank with the body; with ``distinct_kickers`` the
    ranks are pairwise different, otherwise a rank repeats as far as the deck
    holds it; with ``rocket_as_kickers`` off, X and D are not kickers together.
    """
    free = [r for r in range(NUM_RANKS) if r not in body_ranks]
    if rules.distinct_kickers:
        pool = itertools.combinations(free, num)
    else:
        pool = (
            ks
            for ks in itertools.combinations_with_replacement(free, num)
            if all(ks.count(r) <= DECK_COUNTS[r] for r in set(ks))
        )
    for ks in pool:
        if not rules.rocket_as_kickers and SMALL_JOKER in ks and BIG_JOKER in ks:
            continue
        yield ks


def _pair_kicker_sets(body_ranks, num):
    """Sets of ``num`` pair kicker ranks: pairwise different, never jokers or body ranks."""
    free = [r for r in range(TWO + 1) if r not in body_ranks]
    return itertools.combinations(free, num)


def _kicker_sets(body_ranks, num, kunit, rules):
    """The kicker sets of ``num`` kickers of ``kunit`` cards each (1: singles, 2: pairs, 0: none)."""
    if kunit == 1:
        return _single_kicker_sets(body_ranks, num, rules)
    return _pair_kicker_sets(body_ranks, num) if kunit == 2 else [()]


def _kicked(ctype, unit, num, kunit, rules):
    """Every ``unit``-of-a-kind body below the jokers with ``num`` kickers of ``kunit`` cards."""
    for r in range(TWO + 1):
        for ks in _kicker_sets((r,), num, kunit, rules):
            yield ctype, 1, r, (r,), unit, ks, kunit


def _enumerate(rules: Rules):
    """Yield (type, length, rank, body_ranks, body_unit, kicker_ranks, kicker_unit) in table order."""
    for r in range(NUM_RANKS):
        yield CombType.SINGLE, 1, r, (r,), 1, (), 0
    yield from _kicked(CombType.PAIR, 2, 0, 0, rules)
    yield from _kicked(CombType.TRIPLE, 3, 0, 0, rules)
    yield from _kicked(CombType.TRIPLE_SINGLE, 3, 1, 1, rules)
    yield from _kicked(CombType.TRIPLE_PAIR, 3, 1, 2, rules)
    for ctype, (unit, lo, hi) in CHAIN_SHAPES.items():
        kunit = {CombType.PLANE_SINGLES: 1, CombType.PLANE_PAIRS: 2}.get(ctype, 0)
        for length in range(lo, hi + 1):
            for r in range(CHAIN_TOP - length + 2):
                body = tuple(range(r, r + length))
                for ks in _kicker_sets(body, length, kunit, rules):
                    yield ctype, length, r, body, unit, ks, kunit
    yield from _kicked(CombType.FOUR_TWO_SINGLES, 4, 2, 1, rules)
    yield from _kicked(CombType.FOUR_TWO_PAIRS, 4, 2, 2, rules)
    yield from _kicked(CombType.BOMB, 4, 0, 0, rules)
    yield CombType.ROCKET, 1, SMALL_JOKER, (SMALL_JOKER, BIG_JOKER), 1, (), 0


def _combo_name(body_ranks, unit, kicker_ranks, kicker_unit) -> str:
    body = "".join(RANK_CHARS[r] * unit for r in body_ranks)
    return body + "".join("+" + RANK_CHARS[k] * kicker_unit for k in kicker_ranks)


# --------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------


class ActionTable:
    """Every action of a rule configuration, with its id, type, rank, length and cards.

    Arrays (index = action id; special actions have rank -1, length 0, no cards):

    - ``types``, ``ranks``, ``lengths``: ``(A,)`` int arrays
    - ``counts``: ``(A, 15)`` int8, all cards of the action
    - ``body``: ``(A, 15)`` int8, the body's cards (``counts - body`` = kickers)
    - ``num_cards``: ``(A,)``
    - ``beat_start``, ``group_end``: ``(A,)``; the non-bomb actions that beat
      ``a`` are ``range(beat_start[a], group_end[a])``
    - ``bomb_start``, ``bomb_end``, ``rocket``: bombs and the rocket
    - ``groups``: ``{(CombType, length): range}``
    """

    def __init__(self, rules: Rules):
        self.rules = rules
        rows = list(_enumerate(rules))
        n = NUM_SPECIAL + len(rows)
        self.names: list[str] = list(SPECIAL_NAMES)
        self.types = np.empty(n, dtype=np.int8)
        self.ranks = np.full(n, -1, dtype=np.int8)
        self.lengths = np.zeros(n, dtype=np.int8)
        self.counts = np.zeros((n, NUM_RANKS), dtype=np.int8)
        self.body = np.zeros((n, NUM_RANKS), dtype=np.int8)
        self.types[:NUM_SPECIAL] = [CombType.PASS] + [CombType.BID] * 4 + [CombType.DOUBLE] * 2
        for i, (ctype, length, rank, body_ranks, unit, kicks, kunit) in enumerate(rows, NUM_SPECIAL):
            self.names.append(_combo_name(body_ranks, unit, kicks, kunit))
            self.types[i], self.lengths[i], self.ranks[i] = ctype, length, rank
            self.body[i] = _body(body_ranks, unit)
            self.counts[i] = self.body[i]
            np.add.at(self.counts[i], list(kicks), kunit)
        self.num_cards = self.counts.sum(axis=1).astype(np.int8)
        self._index = {name: i for i, name in enumerate(self.names)}
        if len(self._index) != n:
            raise AssertionError("duplicate action names in the table")
        self._build_groups()
        self._by_counts: dict[bytes, list[int]] = {}
        for i in range(NUM_SPECIAL, n):
            self._by_counts.setdefault(self.counts[i].tobytes(), []).append(i)
        for arr in (self.types, self.ranks, self.lengths, self.counts, self.body, self.num_cards):
            arr.setflags(write=False)

    def _build_groups(self):
        n = len(self.names)
        self.groups: dict[tuple[CombType, int], range] = {}
        self.beat_start = np.arange(n, dtype=np.int32)
        self.group_end = np.arange(n, dtype=np.int32)
        start = NUM_SPECIAL
        while start < n:
            end = start
            key = (self.types[start], self.lengths[start])
            while end < n and (self.types[end], self.lengths[end]) == key:
                end += 1
            self.groups[(CombType(int(key[0])), int(key[1]))] = range(start, end)
            ranks = self.ranks[start:end]
            # first id of the group whose rank is strictly higher than each member's
            self.beat_start[start:end] = start + np.searchsorted(ranks, ranks, side="right")
            self.group_end[start:end] = end
            start = end
        bombs = self.groups[(CombType.BOMB, 1)]
        self.bomb_start, self.bomb_end = bombs.start, bombs.stop
        self.rocket = self.groups[(CombType.ROCKET, 1)].start
        self.beat_start.setflags(write=False)
        self.group_end.setflags(write=False)

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i: int) -> Action:
        i = self._check_id(i)
        return Action(
            id=i,
            name=self.names[i],
            type=CombType(int(self.types[i])),
            rank=int(self.ranks[i]),
            length=int(self.lengths[i]),
            counts=tuple(int(c) for c in self.counts[i]),
        )

    def _check_id(self, i) -> int:
        if not is_int(i):
            raise TypeError(f"action id must be an int, got {i!r}")
        if not 0 <= i < len(self.names):
            raise ValueError(f"action id {i} out of range 0..{len(self.names) - 1}")
        return int(i)

    def name(self, i: int) -> str:
        """Canonical name of action ``i``."""
        return self.names[self._check_id(i)]

    def readings(self, counts) -> list[int]:
        """Ids of every combination whose cards are exactly ``counts`` (15 counts)."""
        key = np.asarray(counts, dtype=np.int8).tobytes()
        return list(self._by_counts.get(key, ()))

    def index(self, name: str) -> int:
        """Id of an action given by canonical name or by a loose card string.

        Raises ``ValueError`` when the text is not a combination of these
        rules, or when loose cards have several readings (listed).
        """
        if not isinstance(name, str):
            raise TypeError(f"action name must be a str, got {type(name).__name__}")
        key = name.strip()
        if key in self._index:
            return self._index[key]
        if key.lower() in self._index:
            return self._index[key.lower()]
        parts = key.split("+")
        body = parse_hand(parts[0])
        total = parse_hand(key.replace("+", ""))
        found = self.readings(total)
        if len(parts) > 1:
            found = [i for i in found if np.array_equal(self.body[i], body)]
        if len(found) == 1:
            return found[0]
        if not found:
            raise ValueError(
                f"{name!r} is not a combination under these rules "
                f"(cards {format_hand(total) or 'none'}); expected a canonical name such as "
                f"'333444+5+7' or one of {list(SPECIAL_NAMES)}"
            )
        options = [self.names[i] for i in found]
        raise ValueError(f"{name!r} has several readings {options}; give the canonical name of one")


@functools.lru_cache(maxsize=TABLES_KEPT)
def _table(rules: Rules) -> ActionTable:
    return ActionTable(rules)


def action_table(rules: Rules | str | None = None) -> ActionTable:
    """The action table of ``rules`` (default: the standard preset), built once and cached."""
    return _table(resolve_rules(rules))


def type_counts(rules: Rules | str | None = None) -> dict[str, int]:
    """Number of card combinations of each type, e.g. ``{"single": 15, ...}``."""
    table = action_table(rules)
    out = {}
    for t in CombType:
        if t < CombType.PASS:
            out[t.name.lower()] = int(np.sum(table.types == t))
    return out
