"""RuleAgent: a heuristic Dou Dizhu player built on hand decomposition, batched over games.

The core is :func:`hand_cost`, the fewest plays a hand splits into (chains,
pair chains and planes searched exhaustively; triples and
planes absorb single or pair kickers; bombs and the rocket count one play
each). Every card play is chosen by the cost of the hand it leaves:

- **leading**: among the held combinations (one kicker choice per body, the
  kickers that break nothing), the play that leaves the fewest plays, then
  the weakest (no 2s, jokers or bombs while anything else will do), lowest
  rank first, more cards first. A hand that can go out does; with two plays
  left it plays the unbeatable one first. It avoids leading singles (pairs)
  into an opponent holding one card (two cards), and a farmer whose partner
  holds one card leads its lowest single.
- **following an opponent**: the cheapest beating play that does not split
  the hand further; a splitting play only when the opponent is close to
  going out; a bomb (the lowest) only when the opponent is close to going
  out or the bomb leaves at most one play.
- **following the partner** (farmer): pass, unless the play takes it out,
  or it is a natural low play of its hand over a low play of the partner.
- **bidding and doubling**: from a hand-strength estimate (jokers, 2s, aces,
  bombs, and how few plays the hand needs).

Everything is read from the seat view and the action table arrays; the agent
is deterministic (the seed is accepted for interface symmetry).

How it is batched. :meth:`RuleAgent.act` decides every game of a view with
numpy calls over the whole batch, never a Python loop over games. The legal
card plays of all games are one flat list of (game, action) pairs, grouped by
game, ascending action id inside a game (which is (type, length, rank) order).
Each rule above is a mask or a sort key over those pairs: "the first pair of
each game that satisfies a mask" (:func:`_first_per_game`), "the pair of each
game with the smallest key tuple" (:func:`_argmin_per_game`, a stable
``np.lexsort`` with the game as the last, primary key) and a game's minimum
(``np.minimum.reduceat``) reproduce the per-game ``for`` loops and ``min()``
calls of the reference, ties included. The costs of the hands left by the
candidate plays are computed for the whole batch at once
(:func:`batch_hand_costs`): each hand's chainable ranks split at their empty
ranks into runs (no chain crosses an empty rank); the fewest plays of a run for
each change it makes to the kicker surplus (its *frontier*) is computed once per
run ever met and cached; a hand's cost is the min-plus sum of its runs'
frontiers, in numpy over every hand. Hands are packed into one int64 each
(base-5 digits over the 15 ranks, :func:`hand_codes`; the code of a hand after a
play is the hand's code minus the play's). Bids and doubles take
:func:`batch_hand_strengths` over the unique hands, cached by code in a :class:`CodeCache`
(:func:`hand_strengths`). These caches are shared by every thread, bounded, and
safe to share (one lock each, held only to add entries; look-ups read a snapshot),
so one agent may serve many threads at once. :func:`hand_cost` (one hand, the same computation) and
:func:`reference_hand_cost` (the plain search over every order of chains) give
the same answers; the tests hold all three together.

:class:`ReferenceRuleAgent` is the previous per-game implementation (a loop
over games, one :class:`_Turn` per card-play decision): slow, written for
reading, and the definition the batched agent is tested against, move for
move (``tests/test_rule_batched.py``).
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass

import numpy as np

from doudizhu_env import engine
from doudizhu_env.actions import (
    BID0,
    CHAIN_SHAPES,
    DOUBLE,
    NO_DOUBLE,
    NUM_SPECIAL,
    PASS,
    CombType,
    action_table,
)
from doudizhu_env.cards import (
    ACE,
    BIG_JOKER,
    CHAIN_TOP,
    DECK_COUNTS,
    HAND_SIZE,
    HOLE_SIZE,
    NUM_RANKS,
    SMALL_JOKER,
    TWO,
)
from doudizhu_env.rules import TABLES_KEPT, Rules

from .base import Agent

#: (unit, min length) of sequence, pair sequence, plane (a run longer than the rules allow is
#: still counted as one play: the decomposition is a heuristic)
_CHAINS = tuple(CHAIN_SHAPES[t][:2] for t in (CombType.SEQUENCE, CombType.PAIR_SEQUENCE, CombType.PLANE))
_CONTROL_RANK = TWO  # 2s and jokers are control cards
_BOMB_TYPES = (CombType.BOMB, CombType.ROCKET)
#: plain ints of the types the batched code compares with (an IntEnum member lookup is slow)
_SINGLE, _PAIR, _BOMB, _ROCKET = (int(CombType[n]) for n in ("SINGLE", "PAIR", "BOMB", "ROCKET"))
#: Following the partner: a play of the partner of this rank (a jack) or higher is left alone, and
#: the farmer plays over a lower one only below this rank.
_LOW_RANK = 8


# ----------------------------------------------------------------------------
# hand decomposition
# ----------------------------------------------------------------------------


def hand_cost(c: tuple, slots: int = 0) -> int:
    """The fewest plays ``c`` (15 rank counts) splits into; ``slots`` free kickers from planes.

    A split is a set of chains (3..A) and the flat cost of the rest (``tests/reference_rule.py``),
    which is ``bombs + rocket + triples + max(0, singles + pairs - triples - slots)``;
    :func:`batch_hand_costs` finds the best one (this is its one-hand form, cached).
    """
    return _one_hand_cost(tuple(int(x) for x in c), slots)


@functools.lru_cache(maxsize=500_000)
def _one_hand_cost(c: tuple, slots: int) -> int:
    return int(batch_hand_costs(np.array([c], np.int64), slots)[0])


def _chains_from_first(ranks: tuple):
    """Every chain that starts at the first of ``ranks``: the ranks it leaves, and its change of the
    surplus (a plane of k triples takes k kickers: -k)."""
    x = ranks[0]
    for unit, min_len in _CHAINS:
        if x < unit:
            continue
        end = 1
        while end < len(ranks) and ranks[end] >= unit:
            end += 1
        for k in range(min_len, end + 1):  # a chain over ranks[0:k]
            yield tuple(v - unit for v in ranks[:k]) + ranks[k:], -k if unit == 3 else 0


# Batched: the chainable ranks split at their empty ranks into runs (no chain crosses an empty
# rank), and a run's splits are summed up once and for all as its *frontier*: the fewest plays
# for each change of the surplus it makes (:func:`_run_frontier`, cached per run). A hand's
# cost is then a min-plus sum of its runs' frontiers, for every hand of a batch at once.

_SPAN = CHAIN_TOP + 1  # the chainable ranks 3..A
_INF = 1 << 20
#: Frontier slot of a surplus change d is d + _SPAN (a run of length L changes it by -L..+L).
_WIDTH = 2 * _SPAN + 1


@functools.lru_cache(maxsize=50_000)
def _run_frontier(run: tuple) -> tuple:
    """Fewest plays of the chainable ranks ``run`` for each surplus change (slot d + 12), as a tuple.

    Memoised for the recursion over a run's sub-runs; the frontiers kept between batches are
    :data:`_FRONTIERS`' (200 bytes a run in its arrays, against some 400 in this cache)."""
    out = [_INF] * _WIDTH
    if not run:
        out[_SPAN] = 0
        return tuple(out)
    x, rest = run[0], run[1:]
    if x == 0:
        return _run_frontier(rest)
    _relax(out, _run_frontier(rest), (x <= 2) - (x == 3), int(x >= 3))  # no chain starts here
    for left, shift in _chains_from_first(run):
        _relax(out, _run_frontier(left), shift, 1)
    return tuple(out)


def _run_frontiers(runs: np.ndarray) -> np.ndarray:
    """``(K, _WIDTH)``: :func:`_run_frontier` of each run of ``runs`` (``(K, 15)`` rank counts, the
    run in the chainable ranks), what :data:`_FRONTIERS` computes for the runs it has not met."""
    frontiers = [_run_frontier(tuple(run[:_SPAN])) for run in runs.tolist()]
    return np.array(frontiers, np.int64).reshape(-1, _WIDTH)


def _relax(out: list, frontier: tuple, shift: int, plays: int) -> None:
    """``out[d + shift] = min(out[d + shift], frontier[d] + plays)`` for every slot."""
    for d, p in enumerate(frontier):
        if p < _INF and 0 <= d + shift < _WIDTH and p + plays < out[d + shift]:
            out[d + shift] = p + plays


def batch_hand_costs(counts: np.ndarray, slots: int = 0) -> np.ndarray:
    """:func:`hand_cost` of every hand of ``counts`` ``(H, 15)`` (``slots`` free kickers each), with numpy.

    The ranks of a run are taken from low to high: at each rank either a chain starts there, or
    no more chain touches it and its cards join the flat part. So every set of chains is met
    once (not once per order, as in :func:`reference_hand_cost`), and what the flat part adds is
    carried as one number, the surplus ``singles + pairs - triples - slots``.
    """
    c = np.asarray(counts, np.int64).reshape(-1, NUM_RANKS)
    two, jokers = c[:, TWO], c[:, SMALL_JOKER] + c[:, BIG_JOKER]
    rocket = (c[:, SMALL_JOKER] > 0) & (c[:, BIG_JOKER] > 0)
    base = (two >= 3).astype(np.int64) + rocket
    surplus = ((two == 1) | (two == 2)).astype(np.int64) - (two == 3) + np.where(rocket, 0, jokers) - slots
    chain = c[:, :_SPAN]
    start = (chain > 0) & np.concatenate([np.ones((len(c), 1), bool), chain[:, :-1] == 0], axis=1)
    run_id = np.cumsum(start, axis=1) * (chain > 0)  # 1, 2, ... per run; 0 on empty ranks
    first = np.maximum.accumulate(np.where(start, np.arange(_SPAN), 0), axis=1)
    digits = chain * 5 ** np.maximum(np.arange(_SPAN) - first, 0)
    total = np.zeros((len(c), _SPAN // 2 + 1), np.int64)  # at most 6 runs
    np.add.at(total, (np.repeat(np.arange(len(c)), _SPAN), run_id.ravel()), digits.ravel())
    frontier = np.full((len(c), _WIDTH), _INF, np.int64)
    frontier[:, _SPAN] = 0  # no run: no play, no change of the surplus
    has = np.flatnonzero(total[:, 1] > 0)
    frontier[has] = _FRONTIERS(total[has, 1])
    for k in range(2, total.shape[1]):
        has = np.flatnonzero(total[:, k] > 0)
        if len(has):
            frontier[has] = _min_plus(frontier[has], _FRONTIERS(total[has, k]))
    d = np.arange(_WIDTH) - _SPAN
    return base + (frontier + np.maximum(surplus[:, None] + d[None, :], 0)).min(axis=1)


def _min_plus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise min-plus convolution of frontiers, kept to the slots of -12..+12."""
    out = np.full_like(a, _INF)
    for j in np.flatnonzero((b < _INF).any(axis=0)):
        shift = int(j) - _SPAN
        lo, hi = max(0, -shift), min(_WIDTH, _WIDTH - shift)
        target = out[:, lo + shift : hi + shift]
        np.minimum(target, a[:, lo:hi] + b[:, j : j + 1], out=target)
    return np.minimum(out, _INF)


# ----------------------------------------------------------------------------
# hand strength (bidding, doubling)
# ----------------------------------------------------------------------------


def hand_strength(c) -> float:
    """Control-card points minus a charge for the plays the hand needs (higher is stronger)."""
    c = tuple(int(x) for x in c)
    points = 4.0 * c[BIG_JOKER] + 3.0 * c[SMALL_JOKER] + 2.0 * c[TWO] + 0.5 * c[ACE]
    points += 2.0 if (c[SMALL_JOKER] and c[BIG_JOKER]) else 0.0
    points += 4.0 * sum(1 for x in c[:TWO] if x == 4)
    plays = hand_cost(c)
    size = sum(c)
    return points - 0.6 * (plays - size / 3.4)


def batch_hand_strengths(hands: np.ndarray) -> np.ndarray:
    """:func:`hand_strength` of every hand of ``hands`` ``(H, 15)``, with numpy (the same float
    operations in the same order, so the same values), the plays from :func:`batch_hand_costs`."""
    c = np.asarray(hands, np.int64).reshape(-1, NUM_RANKS)
    points = 4.0 * c[:, BIG_JOKER] + 3.0 * c[:, SMALL_JOKER] + 2.0 * c[:, TWO] + 0.5 * c[:, ACE]
    points += np.where((c[:, SMALL_JOKER] > 0) & (c[:, BIG_JOKER] > 0), 2.0, 0.0)
    points += 4.0 * (c[:, :TWO] == 4).sum(axis=1)
    plays = batch_hand_costs(c)
    return points - 0.6 * (plays - c.sum(axis=1) / 3.4)


#: Strength thresholds of bids 1, 2 and 3.
_BID_THRESHOLDS = (4.5, 6.0, 8.0)


def bid_level(strength: float) -> int:
    """The bid (0..3) a hand of this strength is worth."""
    if strength >= 8.0:
        return 3
    if strength >= 6.0:
        return 2
    if strength >= 4.5:
        return 1
    return 0


def _bid_levels(strength: np.ndarray) -> np.ndarray:
    """:func:`bid_level` of an array of strengths: the number of thresholds each reaches."""
    levels = np.zeros(np.shape(strength), np.int64)
    for t in _BID_THRESHOLDS:
        levels += strength >= t
    return levels


# ----------------------------------------------------------------------------
# batched look-ups: hands packed into int64 codes, results cached per code
# ----------------------------------------------------------------------------

_POW5 = 5 ** np.arange(NUM_RANKS, dtype=np.int64)
_POW5_INT = [5**r for r in range(NUM_RANKS)]


def hand_codes(counts) -> np.ndarray:
    """``(..., 15)`` rank counts (each 0..4) -> ``(...)`` int64 codes: base-5 digits, rank 3 lowest.

    The code is linear in the counts: the code of a hand after a play is the hand's code minus
    the play's.
    """
    return np.asarray(counts, dtype=np.int64) @ _POW5


def _decode(code: int) -> tuple:
    """The 15 rank counts (a tuple of ints) of a hand code."""
    return tuple(code // p % 5 for p in _POW5_INT)


class CodeCache:
    """``compute(counts)`` of hands given by their codes, cached per code.

    The cache is a dict of the entries added lately, merged now and then into two sorted numpy
    arrays (codes, values) that a whole batch is looked up in with one ``np.searchsorted``; only
    the codes found in neither are computed, once per unique code. The merge waits for
    ``max(merge_min, size / 4)`` new entries (amortised O(log size) an entry); past ``limit``
    entries the old ones are dropped.

    Safe to share between threads (the module's caches serve every thread): a look-up reads one
    snapshot of the sorted arrays, which a merge replaces whole under the lock, never in place;
    the dict is read and written under the lock; values are computed outside it.

    A value is a scalar, or with ``width`` a row of that many (the run frontiers of
    :func:`batch_hand_costs`).
    """

    def __init__(self, compute, dtype, limit: int = 2_000_000, merge_min: int = 4096, batch: bool = False,
                 width: int = 0):
        self.compute, self.dtype, self.limit, self.merge_min = compute, dtype, limit, merge_min
        self.batch = batch
        """``compute`` takes a ``(K, 15)`` array of hands and returns their K values at once."""
        self.tail = (width,) if width else ()
        """The shape of one value: ``()`` or ``(width,)``."""
        self._lock = threading.Lock()
        self.clear()

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._sorted = (np.empty(0, dtype=np.int64), np.empty((0, *self.tail), dtype=self.dtype))
            self.recent: dict[int, object] = {}

    def __len__(self) -> int:
        return len(self._sorted[0]) + len(self.recent)

    def __call__(self, codes) -> np.ndarray:
        """The values of ``codes`` (any shape): that shape, then a value's."""
        codes = np.asarray(codes, dtype=np.int64)
        flat = codes.ravel()
        out = np.empty((len(flat), *self.tail), dtype=self.dtype)
        found = np.zeros(len(flat), dtype=bool)
        sorted_codes, sorted_values = self._sorted  # one snapshot, never changed in place
        if len(sorted_codes):
            pos = np.minimum(np.searchsorted(sorted_codes, flat), len(sorted_codes) - 1)
            found = sorted_codes[pos] == flat
            out[found] = sorted_values[pos[found]]
        rest = np.flatnonzero(~found)
        if len(rest):
            unique, inverse = np.unique(flat[rest], return_inverse=True)
            out[rest] = self._slow(unique.tolist())[inverse.ravel()]
        return out.reshape(codes.shape + self.tail)

    def _slow(self, codes: list) -> np.ndarray:
        """Values of codes not in the sorted arrays: from the dict, or computed (outside the lock:
        ``compute`` is a pure function) and added to it."""
        with self._lock:
            values = [self.recent.get(code) for code in codes]
        missing = [k for k, v in enumerate(values) if v is None]
        if missing:
            new = [codes[k] for k in missing]
            if self.batch:
                hands = np.asarray(new, dtype=np.int64)[:, None] // _POW5[None, :] % 5
                computed = self.compute(hands).tolist()
            else:
                computed = [self.compute(_decode(code)) for code in new]
            for k, value in zip(missing, computed, strict=True):
                values[k] = value
            self._add(dict(zip(new, computed, strict=True)))
        return np.asarray(values, dtype=self.dtype).reshape(-1, *self.tail)

    def _add(self, entries: dict) -> None:
        """Put ``entries`` in the dict, merging it into the sorted arrays now and then."""
        with self._lock:
            self.recent.update(entries)
            if len(self.recent) >= max(self.merge_min, len(self._sorted[0]) // 4):
                self._merge()

    def _merge(self) -> None:
        """Move the dict's entries into new sorted arrays (dropping the old ones past ``limit``);
        called with the lock held."""
        new_codes = np.fromiter(self.recent.keys(), dtype=np.int64, count=len(self.recent))
        new_values = np.array(list(self.recent.values()), dtype=self.dtype).reshape(-1, *self.tail)
        self._sorted = _merged(self._sorted, new_codes, new_values, self.limit)
        self.recent = {}


def _merged(known: tuple[np.ndarray, np.ndarray], new_codes: np.ndarray, new_values: np.ndarray,
            limit: int) -> tuple[np.ndarray, np.ndarray]:
    """New sorted ``(codes, values)`` arrays: ``known`` and the new entries (a code in both kept
    once, the new value), all the known ones dropped first when the total would pass ``limit``.
    The arrays of ``known`` are not changed: a reader holding them goes on reading them."""
    codes, values = known
    keep = ~_found(np.sort(new_codes), codes)
    codes, values = codes[keep], values[keep]
    if len(codes) + len(new_codes) > limit:
        codes, values = codes[:0], values[:0]
    codes = np.concatenate([codes, new_codes])
    order = np.argsort(codes)
    return codes[order], np.concatenate([values, new_values])[order]


def _found(sorted_codes: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Which of ``codes`` are in the sorted array ``sorted_codes``."""
    if not len(sorted_codes):
        return np.zeros(len(codes), bool)
    pos = np.minimum(np.searchsorted(sorted_codes, codes), len(sorted_codes) - 1)
    return sorted_codes[pos] == codes


#: The module's caches: :func:`hand_costs`, the run frontiers of :func:`batch_hand_costs`, and
#: :func:`hand_strengths`.
_COSTS = CodeCache(batch_hand_costs, np.int64, batch=True)
_FRONTIERS = CodeCache(_run_frontiers, np.int64, limit=200_000, batch=True, width=_WIDTH)
_STRENGTHS = CodeCache(batch_hand_strengths, np.float64, batch=True)


def clear_caches() -> None:
    """Empty every cache of hand costs and strengths (:func:`hand_cost`'s and the code caches)."""
    _one_hand_cost.cache_clear()
    _run_frontier.cache_clear()
    _FRONTIERS.clear()
    _COSTS.clear()
    _STRENGTHS.clear()


def hand_costs(codes) -> np.ndarray:
    """:func:`hand_cost` (no free kicker slots) of each hand given by its code (:func:`hand_codes`)."""
    return _COSTS(codes)


def hand_strengths(codes) -> np.ndarray:
    """:func:`hand_strength` of each hand given by its code (:func:`hand_codes`)."""
    return _STRENGTHS(codes)


# ----------------------------------------------------------------------------
# per-table action features, and per-game reductions over (game, action) pairs
# ----------------------------------------------------------------------------

#: Cards per rank an unseen combination needs to beat a play of each type (0: the chain rule).
_NEED: dict[int, int] = {CombType.SINGLE: 1, CombType.PAIR: 2, CombType.TRIPLE: 3, CombType.TRIPLE_SINGLE: 3,
         CombType.TRIPLE_PAIR: 3, CombType.BOMB: 4}
#: The rank weight of a kicker in the waste of a kicker choice: its rank, 20 more for 2s and jokers.
_RANK_WEIGHT = np.arange(NUM_RANKS) + 20 * (np.arange(NUM_RANKS) >= _CONTROL_RANK)


@dataclass(frozen=True)
class _Features:
    """Action-table columns the agent reads, as int64 / bool arrays indexed by action id."""

    types: np.ndarray
    ranks: np.ndarray
    lengths: np.ndarray
    num_cards: np.ndarray
    code: np.ndarray  # hand code of the action's cards
    group: np.ndarray  # one number per (type, length, body rank)
    bomb: np.ndarray  # a bomb or the rocket
    control: np.ndarray  # a bomb, the rocket, or a body of 2s or jokers
    kick: np.ndarray  # (A, 15) kicker counts
    has_kick: np.ndarray  # it has kickers
    kick_weight: np.ndarray  # summed rank weights of the kicker ranks
    need: np.ndarray  # see _NEED


@functools.lru_cache(maxsize=TABLES_KEPT)
def _features(rules: Rules) -> _Features:
    """The :class:`_Features` of ``rules``' action table (built once per configuration)."""
    t = action_table(rules)
    types, ranks, lengths = (x.astype(np.int64) for x in (t.types, t.ranks, t.lengths))
    kick = (t.counts - t.body).astype(np.int8)
    bomb = np.isin(types, _BOMB_TYPES)
    group = types * 10_000 + lengths * 100 + ranks
    if np.any(np.diff(group[NUM_SPECIAL:]) < 0):  # RuleAgent._candidates relies on it
        raise AssertionError("action ids are not in (type, length, rank) order")
    return _Features(
        types=types, ranks=ranks, lengths=lengths, num_cards=t.num_cards.astype(np.int64),
        code=hand_codes(t.counts), group=group, bomb=bomb,
        control=bomb | (ranks >= _CONTROL_RANK), kick=kick, has_kick=np.asarray((kick > 0).any(axis=1)),
        kick_weight=((kick > 0) * _RANK_WEIGHT).sum(axis=1),
        need=np.array([_NEED.get(int(x), 0) for x in types], dtype=np.int64),
    )


def _starts(g: np.ndarray) -> np.ndarray:
    """Where a new game begins in pairs grouped by game (``g`` non-decreasing)."""
    start = np.ones(len(g), dtype=bool)
    start[1:] = g[1:] != g[:-1]
    return start


def _first_per_game(g: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The games with a pair in ``mask`` and the index of their first such pair (a ``for`` loop's
    first hit, in pair order); pairs grouped by game."""
    idx = np.flatnonzero(mask)
    first = _starts(g[idx])
    return g[idx][first], idx[first]


def _argmin_per_game(g: np.ndarray, keys: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Each game and the index of its pair with the smallest ``keys`` tuple (most significant
    first), the first in pair order on ties: Python's ``min()`` over that game's pairs."""
    order = np.lexsort((*reversed(keys), g))
    first = _starts(g[order])
    return g[order][first], order[first]


def _per_game_min(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per pair, the smallest ``x`` of its game (pairs grouped by game)."""
    if not len(g):
        return x.copy()
    starts = np.flatnonzero(_starts(g))
    return np.repeat(np.minimum.reduceat(x, starts), np.diff(np.append(starts, len(g))))


# ----------------------------------------------------------------------------
# the agent
# ----------------------------------------------------------------------------

_LEAD, _PARTNER, _OPPONENT = 0, 1, 2  # the kind of a card-play decision


class RuleAgent(Agent):
    """Heuristic player (see the module docstring), batched over games with numpy. Deterministic:
    it takes no seed, and reads its rules from the views it is given."""

    name = "rule"

    def act(self, view: engine.State) -> np.ndarray:
        """One action per game of ``view`` (``PASS`` for games that are over)."""
        out = np.full(view.num_games, PASS, dtype=np.int64)
        for phase, decide in ((engine.BIDDING, _bids), (engine.DOUBLING, _doubles)):
            idx = np.flatnonzero(view.phase == phase)
            if len(idx):
                out[idx] = decide(view, idx)
        if np.any(view.phase == engine.PLAY):
            _Plays(view).decide(out)
        return out


def _own_codes(view: engine.State, idx: np.ndarray) -> np.ndarray:
    """Hand codes of the seat to act in games ``idx``."""
    return hand_codes(view.hands[idx, view.to_act[idx]])


def _bids(view: engine.State, idx: np.ndarray) -> np.ndarray:
    """Bid the hand's level if it beats the highest bid so far, else bid0."""
    level = _bid_levels(hand_strengths(_own_codes(view, idx)))
    return np.where(level > view.base[idx], BID0 + level, BID0)


def _doubles(view: engine.State, idx: np.ndarray) -> np.ndarray:
    """Farmers double strong hands (strength 8+); the landlord redoubles very strong ones (9+)."""
    strength = hand_strengths(_own_codes(view, idx))
    threshold = np.where(view.to_act[idx] == view.landlord[idx], 9.0, 8.0)
    return np.where(strength >= threshold, DOUBLE, NO_DOUBLE)


class _Plays:
    """The card-play decisions of every play-phase game of a view, at once.

    Per-game facts are ``(B,)`` arrays over all games of the view (meaningful in the play
    phase only); the legal card plays are the pairs ``(self.g, self.a)``, grouped by game,
    ascending action id inside a game (the order of ``engine.legal_actions``).
    """

    def __init__(self, view: engine.State):
        self.f = _features(view.rules)
        n = view.num_games
        self.rows = rows = np.arange(n)
        seat, landlord = view.to_act.astype(np.int64), view.landlord.astype(np.int64)
        self.hand = view.hands[rows, seat].astype(np.int64)
        self.code = hand_codes(self.hand)
        played = view.played.astype(np.int64)
        dealt = HAND_SIZE + HOLE_SIZE * (np.arange(3)[None, :] == landlord[:, None])
        self.left = dealt - played.sum(axis=2)  # cards in each seat's hand, from public facts
        self.unseen = DECK_COUNTS - self.hand - played.sum(axis=1)  # the other hands and the hole, unplayed
        self._roles(seat, landlord, view.to_beat.astype(np.int64), view.to_beat_seat.astype(np.int64))
        ids, offsets = engine.legal_actions(view)
        g = np.repeat(rows, np.diff(offsets))
        card = ids >= NUM_SPECIAL  # only play-phase games have card plays
        self.g, self.a = g[card], ids[card].astype(np.int64)
        self.play = view.phase == engine.PLAY

    def _roles(self, seat, landlord, to_beat, to_beat_seat) -> None:
        """Partner, the decision's kind, and the dangers: the fewest cards an opponent holds
        (leading), the cards of the seat that played the table (following)."""
        rows, left = self.rows, self.left
        partner = np.where(seat == landlord, -1, 3 - seat - landlord)
        self.partner_one = (partner >= 0) & (left[rows, partner % 3] == 1)
        downstream = np.minimum(left[rows, (seat + 1) % 3], left[rows, (seat + 2) % 3])
        self.lead_danger = np.where(seat == landlord, downstream, left[rows, landlord % 3])
        self.follow_danger = left[rows, to_beat_seat % 3]
        partner_played = (partner >= 0) & (to_beat_seat == partner)
        self.kind = np.where(to_beat < 0, _LEAD, np.where(partner_played, _PARTNER, _OPPONENT))
        self.partner_rank = self.f.ranks[np.maximum(to_beat, 0)]

    def _unseen_facts(self) -> None:
        """What the unseen cards can beat with: ``hi[:, k]`` is the highest rank of which they
        hold k or more (k = 1 over all ranks, k = 2..4 over 3..2; -1 none; column 0 unused),
        and whether they hold the rocket, or any bomb or the rocket."""
        unseen = self.unseen
        levels = np.arange(5)[None, :, None]
        ranks = np.arange(NUM_RANKS)[None, None, :]
        holds = (unseen[:, None, :] >= levels) & ((levels <= 1) | (ranks < SMALL_JOKER))
        self.hi = np.where(holds, ranks, -1).max(axis=2)
        self.hi[:, 0] = -1
        self.rocket_unseen = (unseen[:, SMALL_JOKER] > 0) & (unseen[:, BIG_JOKER] > 0)
        self.bomb_unseen = (self.hi[:, 4] >= 0) | self.rocket_unseen

    # -- decisions -----------------------------------------------------------

    def decide(self, out: np.ndarray) -> None:
        """Write every play-phase game's action into ``out`` (which holds ``PASS`` for them).

        A play that empties the hand comes first (the lowest id); a partner's play of a jack
        or higher is left alone; the rest lead, follow the partner or follow an opponent.
        """
        f, g, a = self.f, self.g, self.a
        done = ~self.play
        games, idx = _first_per_game(g, f.num_cards[a] == self.hand.sum(axis=1)[g])
        out[games] = a[idx]
        done[games] = True
        done |= (self.kind == _PARTNER) & (self.partner_rank >= _LOW_RANK)
        live = ~done[g]
        g, a = g[live], a[live]
        cg, ca = self._candidates(g, a, (self.kind[g] == _LEAD) | ~f.bomb[a])
        bg, bi = _first_per_game(g, (self.kind[g] == _OPPONENT) & f.bomb[a])  # the first bomb
        ba = a[bi]
        follow = np.flatnonzero(~done & (self.kind != _LEAD))
        costs = hand_costs(np.concatenate([self.code[cg] - f.code[ca], self.code[bg] - f.code[ba],
                                           self.code[follow]]))
        cost, bomb_cost = costs[: len(cg)], costs[len(cg) : len(cg) + len(bg)]
        before = np.zeros(len(out), dtype=np.int64)
        before[follow] = costs[len(cg) + len(bg) :]
        kind = self.kind[cg]
        if np.any(m := kind == _LEAD):
            self._lead(cg[m], ca[m], cost[m], out)
        if np.any(m := kind == _PARTNER):
            self._follow_partner(cg[m], ca[m], cost[m], before, out)
        if np.any(m := kind == _OPPONENT) or len(bg):
            self._follow_opponent(cg[m], ca[m], cost[m], before, (bg, ba, bomb_cost), out)

    def _candidates(self, g, a, pool) -> tuple[np.ndarray, np.ndarray]:
        """The pairs of ``pool``, one per (game, type, length, body rank): the kicker choice that
        breaks the least (the lowest waste, then the lowest id), in (type, length, rank) order.

        The waste of a kicker choice sums, over its kicker ranks, the rank (20 more for 2s and
        jokers), and 15 more where the hand holds more of that rank than the kicker takes.
        Since ids run in (type, length, rank) order (checked by :func:`_features`), the pairs
        of one (game, type, length, rank) are contiguous and already in that order: no sort.
        """
        f = self.f
        g, a = g[pool], a[pool]
        waste = f.kick_weight[a]
        k = np.flatnonzero(f.has_kick[a])  # the pairs with kickers
        kick = f.kick[a[k]]
        waste[k] += 15 * ((self.hand[g[k]] > kick) & (kick > 0)).sum(axis=1)
        group = _starts(g)
        group[1:] |= f.group[a[1:]] != f.group[a[:-1]]
        group = np.cumsum(group) - 1  # a number per (game, type, length, rank), ascending
        _, idx = _first_per_game(group, waste == _per_game_min(group, waste))
        return g[idx], a[idx]

    def _boss(self, g, a) -> np.ndarray:
        """No combination the unseen cards can form beats the play (conservative for chains):
        the rocket always; a bomb when no higher bomb or rocket is unseen; anything else when no
        bomb or rocket is unseen and (singles, pairs, triples) no higher rank is unseen that
        many times, (chains and four-with-two) its top rank is at least A."""
        f = self.f
        rank = f.ranks[a]
        below = self.hi[g, f.need[a]] <= rank
        plain = ~self.bomb_unseen[g] & np.where(f.need[a] == 0, rank + f.lengths[a] - 1 >= CHAIN_TOP, below)
        bomb = ~self.rocket_unseen[g] & below
        typ = f.types[a]
        return (typ == _ROCKET) | np.where(typ == _BOMB, bomb, plain)

    def _lead(self, g, a, cost, out) -> None:
        """Leading, over the candidates: with at most one play left after it, the first
        unbeatable play (or bomb) among the cheapest; a farmer whose partner holds one card, its
        lowest single; else the smallest :meth:`_lead_keys`, the first on ties."""
        f = self.f
        self._unseen_facts()
        boss = self._boss(g, a)
        best = _per_game_min(g, cost)
        games, idx = _first_per_game(g, (best <= 1) & (cost == best) & (boss | f.bomb[a]))
        out[games] = a[idx]
        decided = np.zeros(len(out), dtype=bool)
        decided[games] = True
        games, idx = _first_per_game(g, ~decided[g] & self.partner_one[g] & (f.types[a] == _SINGLE))
        out[games] = a[idx]  # candidates run by rank, so the first single is the lowest
        decided[games] = True
        rest = ~decided[g]
        g, a, cost, boss = g[rest], a[rest], cost[rest], boss[rest]
        games, idx = _argmin_per_game(g, self._lead_keys(g, a, cost, boss))
        out[games] = a[idx]

    def _lead_keys(self, g, a, cost, boss) -> tuple:
        """Sort keys of a lead: not a beatable single (pair) into an opponent holding one card
        (two), fewest plays left, not a control play, low rank (high for the risky ones), long."""
        f = self.f
        danger, typ, rank = self.lead_danger[g], f.types[a], f.ranks[a]
        risky = ((danger == 1) & (typ == _SINGLE)) | ((danger == 2) & (typ == _PAIR))
        risky &= ~boss
        return (risky.astype(np.int64), cost, f.control[a].astype(np.int64), np.where(risky, -rank, rank),
                np.where(risky, 0, -f.num_cards[a]))

    def _follow_opponent(self, g, a, cost, before, bombs, out) -> None:
        """Following an opponent: the cheapest non-bomb candidate (lowest rank, or highest single
        when the opponent holds at most 2 cards; then the lowest id) if it leaves fewer plays and
        is no control play spent early (unless the opponent holds at most 8 cards or at most 2
        plays are left), or the opponent holds at most 5 cards, or at most 1 play is left; else the
        first bomb if the opponent holds at most 4 cards or it leaves at most 1 play; else pass."""
        f = self.f
        danger = self.follow_danger
        flip = (danger[g] <= 2) & (f.types[a] == _SINGLE)
        games, idx = _argmin_per_game(g, (cost, np.where(flip, -f.ranks[a], f.ranks[a]), a))
        c, best, d = cost[idx], a[idx], danger[games]
        control_ok = ~f.control[best] | (d <= 8) | (c <= 2)
        take = ((c < before[games]) & control_ok) | (d <= 5) | (c <= 1)
        out[games[take]] = best[take]
        taken = np.zeros(len(out), dtype=bool)
        taken[games[take]] = True
        bg, ba, bomb_cost = bombs
        use = ~taken[bg] & ((danger[bg] <= 4) | (bomb_cost <= 1))
        out[bg[use]] = ba[use]

    def _follow_partner(self, g, a, cost, before, out) -> None:
        """Following the partner (whose play is below a jack): the cheapest non-bomb candidate
        (then the lowest rank, the lowest id) if it leaves fewer plays, is below a jack and is no
        control play; else pass."""
        f = self.f
        games, idx = _argmin_per_game(g, (cost, f.ranks[a], a))
        c, best = cost[idx], a[idx]
        take = (c < before[games]) & (f.ranks[best] < _LOW_RANK) & ~f.control[best]
        out[games[take]] = best[take]
