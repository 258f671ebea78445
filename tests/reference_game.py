"""A scalar reference of one hand of Dou Dizhu, written from docs/rules.md only.

Plain, slow, one game at a time. It shares nothing with the vectorized engine
but the action space: :func:`doudizhu_env.actions.action_table` maps ids to
combinations (their cards, type, rank and length). Everything else (which
combinations a hand holds, what beats what, the bidding, doubling and play
flow, scoring) is written out again here from the rules page, so the engine
can be checked against it step for step (``tests/test_engine_reference.py``).

Hands are lists of 15 rank counts (``3 4 5 6 7 8 9 T J Q K A 2 X D``).

A redeal (all three seats passed) needs a new shuffle that only the engine
knows: the reference then sets ``needs_redeal`` and waits for the cards
through :meth:`ReferenceGame.redeal`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from doudizhu_env.actions import BID0, DOUBLE, NO_DOUBLE, NUM_SPECIAL, PASS, CombType, action_table
from doudizhu_env.rules import Rules

NUM_RANKS = 15
SMALL_JOKER, BIG_JOKER = 13, 14
#: Cards of each rank in the deck: four of 3..2, one of each joker.
DECK = [4] * 13 + [1, 1]
HAND_SIZE, HOLE_SIZE = 17, 3

BIDDING, DOUBLING, PLAY, OVER = "bidding", "doubling", "play", "over"

#: Cards per rank in the body of each type (docs/rules.md, "Combinations").
_BODY_UNIT = {
    CombType.SINGLE: 1, CombType.PAIR: 2, CombType.TRIPLE: 3, CombType.TRIPLE_SINGLE: 3,
    CombType.TRIPLE_PAIR: 3, CombType.SEQUENCE: 1, CombType.PAIR_SEQUENCE: 2, CombType.PLANE: 3,
    CombType.PLANE_SINGLES: 3, CombType.PLANE_PAIRS: 3, CombType.FOUR_TWO_SINGLES: 4,
    CombType.FOUR_TWO_PAIRS: 4, CombType.BOMB: 4,
}
_CHAINS = {CombType.SEQUENCE, CombType.PAIR_SEQUENCE, CombType.PLANE, CombType.PLANE_SINGLES,
           CombType.PLANE_PAIRS}


# ----------------------------------------------------------------------------
# The combinations, sorted by body
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Catalog:
    """The card combinations of one rule configuration, as plain Python data.

    ``by_body`` lists, for each body (the cards that rank a combination, as
    ``((rank, count), ...)``), the ids built on it with their kickers (the
    rest of their cards, same form). A hand holds a combination iff it holds
    the body and, what remains, the kickers.
    """

    num_actions: int
    types: list[int]
    ranks: list[int]
    lengths: list[int]
    num_cards: list[int]
    counts: list[list[int]]
    by_body: dict[tuple, list[tuple[int, tuple]]]


def body_of(ctype: int, rank: int, length: int) -> list[int]:
    """The body counts of a combination, from its type, rank and length (docs/rules.md).

    A chain's rank is its lowest rank and it covers ``length`` consecutive
    ranks; other types have one rank; the rocket is both jokers.
    """
    body = [0] * NUM_RANKS
    if ctype == CombType.ROCKET:
        body[SMALL_JOKER] = body[BIG_JOKER] = 1
        return body
    span = length if ctype in _CHAINS else 1
    for r in range(rank, rank + span):
        body[r] = _BODY_UNIT[CombType(ctype)]
    return body


def _sparse(counts: list[int]) -> tuple:
    return tuple((r, c) for r, c in enumerate(counts) if c)


@functools.cache
def catalog(rules: Rules) -> Catalog:
    """The :class:`Catalog` of ``rules`` (built once per configuration)."""
    table = action_table(rules)
    types, ranks, lengths = table.types.tolist(), table.ranks.tolist(), table.lengths.tolist()
    counts = table.counts.tolist()
    by_body: dict[tuple, list[tuple[int, tuple]]] = {}
    for a in range(NUM_SPECIAL, len(table)):
        body = body_of(types[a], ranks[a], lengths[a])
        kickers = [c - b for c, b in zip(counts[a], body, strict=True)]
        if min(kickers) < 0:
            raise AssertionError(f"{table.names[a]}: its cards do not contain the body {body}")
        by_body.setdefault(_sparse(body), []).append((a, _sparse(kickers)))
    return Catalog(len(table), types, ranks, lengths, [sum(c) for c in counts], counts, by_body)


def holds(hand: list[int], need: tuple) -> bool:
    """A hand holds cards when, for every rank, it has at least as many of it."""
    for r, c in need:
        if hand[r] < c:
            return False
    return True


def held_combinations(cat: Catalog, hand: list[int]) -> list[int]:
    """Ids of every combination ``hand`` holds (body first, then kickers from the rest)."""
    out = []
    rest = list(hand)
    for body, members in cat.by_body.items():
        if not holds(hand, body):
            continue
        for r, c in body:
            rest[r] -= c
        out.extend(a for a, kickers in members if holds(rest, kickers))
        for r, c in body:
            rest[r] += c
    return sorted(out)


def held_combinations_brute(cat: Catalog, hand: list[int]) -> list[int]:
    """Same as :func:`held_combinations` by the plainest loop over every id (slow; for tests)."""
    return [a for a in range(NUM_SPECIAL, cat.num_actions)
            if all(need <= have for need, have in zip(cat.counts[a], hand, strict=True))]


def beats(cat: Catalog, a: int, on_table: int) -> bool:
    """docs/rules.md, "Beating": the rocket beats everything; a bomb beats any non-bomb and lower bombs;
    otherwise same type, same length and number of cards, strictly higher rank (kickers never matter).
    """
    ta, tt = cat.types[a], cat.types[on_table]
    if ta == CombType.ROCKET:
        return True
    if tt == CombType.ROCKET:
        return False
    if ta == CombType.BOMB:
        return tt != CombType.BOMB or cat.ranks[a] > cat.ranks[on_table]
    return (ta == tt and cat.lengths[a] == cat.lengths[on_table]
            and cat.num_cards[a] == cat.num_cards[on_table] and cat.ranks[a] > cat.ranks[on_table])


# ----------------------------------------------------------------------------
# One hand
# ----------------------------------------------------------------------------


class ReferenceGame:
    """One hand of Dou Dizhu under ``rules``, stepped with action ids.

    ``hands`` are the three dealt 17-card hands and ``hole`` the 3 hole cards
    (15 counts each); ``landlord`` is needed (and used) only when the rules
    have no bidding. Seats are 0, 1, 2; -1 means none.
    """

    def __init__(self, rules: Rules, hands: list[list[int]], hole: list[int], first_bidder: int,
                 landlord: int | None = None):
        self.rules = rules
        self.cat = catalog(rules)
        self.redeals = 0
        self.needs_redeal = False
        self.truncated = False
        self._deal(hands, hole, first_bidder)
        if not rules.bidding:
            if landlord not in (0, 1, 2):
                raise ValueError("without bidding the landlord must be given")
            self.base = 1
            self._make_landlord(landlord)

    def _deal(self, hands, hole, first_bidder: int) -> None:
        """A fresh hand: 17 cards each, 3 hole cards, the whole deck; nobody has bid."""
        hands, hole = [list(map(int, h)) for h in hands], list(map(int, hole))
        if [sum(h) for h in hands] != [HAND_SIZE] * 3 or sum(hole) != HOLE_SIZE:
            raise ValueError("a deal is three 17-card hands and 3 hole cards")
        if [sum(col) for col in zip(*hands, hole, strict=True)] != DECK:
            raise ValueError("a deal must use the whole deck exactly once")
        self.hands, self.hole, self.first_bidder = hands, hole, first_bidder
        self.phase, self.to_act = BIDDING, first_bidder
        self.bids, self.base, self.landlord, self.doubles = [-1] * 3, 0, -1, [-1] * 3
        self.to_beat, self.to_beat_seat, self.passes = -1, -1, 0
        self.played = [[0] * NUM_RANKS for _ in range(3)]
        self.num_plays = [0, 0, 0]
        self.bombs, self.rocket = 0, False
        self.spring = self.reverse_spring = False
        self.done = False
        self.scores = [0, 0, 0]
        self.rewards = [0, 0, 0]

    # -- queries ---------------------------------------------------------------

    @property
    def multiplier(self) -> int:
        """x2 per bomb played, rocket played, farmer double, landlord redouble, spring, reverse spring."""
        events = (self.bombs + self.rocket + sum(d == 1 for d in self.doubles)
                  + self.spring + self.reverse_spring)
        return 2**events

    @property
    def leading(self) -> bool:
        return self.to_beat < 0

    def legal_actions(self) -> set[int]:
        """Every legal action id of the seat to act (empty when the hand is over or awaits a redeal)."""
        if self.done or self.needs_redeal:
            return set()
        if self.phase == BIDDING:
            # pass (bid 0) always; a bid strictly higher than the highest so far
            return {BID0} | {BID0 + v for v in (1, 2, 3) if v > self.base}
        if self.phase == DOUBLING:
            return {DOUBLE, NO_DOUBLE}
        held = held_combinations(self.cat, self.hands[self.to_act])
        if self.leading:  # the leader must play, anything held
            return set(held)
        return {PASS} | {a for a in held if beats(self.cat, a, self.to_beat)}

    # -- transitions -----------------------------------------------------------

    def step(self, action: int) -> None:
        """The seat to act makes decision ``action`` (an id that must be legal)."""
        action = int(action)
        if action not in self.legal_actions():
            raise ValueError(f"action {action} is not legal ({self.phase}, seat {self.to_act})")
        self.rewards = [0, 0, 0]
        seat = self.to_act
        if self.phase == BIDDING:
            self._bid(seat, action - BID0)
        elif self.phase == DOUBLING:
            self._double(seat, action == DOUBLE)
        else:
            self._play(seat, action)

    def _bid(self, seat: int, bid: int) -> None:
        """One turn per seat from the first bidder; 3 ends at once; all pass: redeal."""
        self.bids[seat] = bid
        self.base = max(self.base, bid)
        if bid == 3:
            self._make_landlord(seat)
        elif min(self.bids) < 0:
            self.to_act = (seat + 1) % 3
        elif self.base > 0:
            self._make_landlord(self.bids.index(self.base))
        else:
            self._all_passed()

    def _all_passed(self) -> None:
        """A redeal inside the episode; more redeals than the bound truncate it (all score 0)."""
        self.redeals += 1
        if self.redeals > self.rules.redeal_limit:
            self.truncated = True
            self._over([0, 0, 0])
        else:
            self.needs_redeal = True

    def redeal(self, hands, hole, first_bidder: int) -> None:
        """Take the new shuffle after a redeal; the first bidder must have moved one seat on."""
        if not self.needs_redeal:
            raise AssertionError("redeal() called but no redeal is pending")
        expected = (self.first_bidder + 1) % 3
        if first_bidder != expected:
            raise AssertionError(f"after a redeal the first bidder is {expected}, got {first_bidder}")
        self.needs_redeal = False
        self._deal(hands, hole, first_bidder)

    def _make_landlord(self, seat: int) -> None:
        """The hole cards join the landlord's hand; doubling (if on) or play starts."""
        self.landlord = seat
        self.hands[seat] = [h + c for h, c in zip(self.hands[seat], self.hole, strict=True)]
        if self.rules.doubling:
            self.phase, self.to_act = DOUBLING, (seat + 1) % 3
        else:
            self._start_play()

    def _double(self, seat: int, doubled: bool) -> None:
        """Farmer after the landlord, the other farmer, then the landlord only if a farmer doubled."""
        self.doubles[seat] = int(doubled)
        first_farmer, second_farmer = (self.landlord + 1) % 3, (self.landlord + 2) % 3
        if seat == first_farmer:
            self.to_act = second_farmer
        elif seat == second_farmer and 1 in self.doubles:
            self.to_act = self.landlord
        else:
            self._start_play()

    def _start_play(self) -> None:
        """The landlord leads."""
        self.phase, self.to_act = PLAY, self.landlord
        self.to_beat, self.to_beat_seat, self.passes = -1, -1, 0

    def _play(self, seat: int, a: int) -> None:
        """Play or pass; after two passes in a row the last player leads; an empty hand ends it."""
        if a == PASS:
            self.passes += 1
            if self.passes == 2:
                self.to_act = self.to_beat_seat
                self.to_beat, self.passes = -1, 0
            else:
                self.to_act = (seat + 1) % 3
            return
        cards = self.cat.counts[a]
        for r in range(NUM_RANKS):
            self.hands[seat][r] -= cards[r]
            self.played[seat][r] += cards[r]
        self.num_plays[seat] += 1
        self.to_beat, self.to_beat_seat, self.passes = a, seat, 0
        self.bombs += self.cat.types[a] == CombType.BOMB
        self.rocket |= self.cat.types[a] == CombType.ROCKET
        if sum(self.hands[seat]) == 0:
            self._score(winner=seat)
        else:
            self.to_act = (seat + 1) % 3

    def _score(self, winner: int) -> None:
        """Landlord wins: +2, -1, -1; farmers win: -2, +1, +1; times base x multiplier.

        Spring: the landlord won and no farmer played a card. Reverse spring:
        the farmers won and the landlord made exactly one play. Each doubles.
        """
        landlord_won = winner == self.landlord
        if self.rules.spring:
            farmer_plays = sum(n for s, n in enumerate(self.num_plays) if s != self.landlord)
            self.spring = landlord_won and farmer_plays == 0
            self.reverse_spring = not landlord_won and self.num_plays[self.landlord] == 1
        stake = self.base * self.multiplier
        sign = 1 if landlord_won else -1
        self._over([2 * sign * stake if s == self.landlord else -sign * stake for s in range(3)])

    def _over(self, points: list[int]) -> None:
        self.phase, self.done = OVER, True
        self.scores = list(points)
        self.rewards = list(points)
