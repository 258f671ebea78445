"""The test oracle of RuleAgent: the same player decided one game at a time in plain Python.

:class:`ReferenceRuleAgent` and :func:`reference_hand_cost` are written to be obviously right,
not fast: they are the definitions :class:`agents.rule.RuleAgent` and
:func:`agents.rule.hand_cost` are tested against, move for move (``tests/test_rule_batched.py``),
and the per-game figure of ``python -m benchmarks.rule_agent``. They live with the tests: no
package code uses them.
"""

from __future__ import annotations

import functools

import numpy as np

from agents.rule import _BOMB_TYPES, _CHAINS, _CONTROL_RANK, RuleAgent, bid_level, hand_cost, hand_strength
from doudizhu_env import engine
from doudizhu_env.actions import BID0, DOUBLE, NO_DOUBLE, NUM_SPECIAL, PASS, CombType, action_table
from doudizhu_env.cards import BIG_JOKER, CHAIN_TOP, DECK_COUNTS, NUM_RANKS, SMALL_JOKER


def _flat_cost(c: tuple, slots: int) -> int:
    """Plays of a hand with no chains: bombs, rocket, triples (with kickers), pairs, singles."""
    plain = c[:SMALL_JOKER]
    rocket = 1 if c[SMALL_JOKER] and c[BIG_JOKER] else 0
    singles = sum(1 for x in plain if x == 1) + (0 if rocket else c[SMALL_JOKER] + c[BIG_JOKER])
    pairs = sum(1 for x in plain if x == 2)
    triples = sum(1 for x in plain if x == 3)
    bombs = sum(1 for x in plain if x == 4)
    kickers = min(triples + slots, singles + pairs)
    return bombs + rocket + triples + pairs + singles - kickers


def _chain_options(c: tuple):
    """Every chain (start, end, unit) the hand holds, ranks 3..A (up to ``CHAIN_TOP``)."""
    for unit, min_len in _CHAINS:
        r = 0
        while r <= CHAIN_TOP:
            if c[r] < unit:
                r += 1
                continue
            e = r
            while e + 1 <= CHAIN_TOP and c[e + 1] >= unit:
                e += 1
            for s in range(r, e - min_len + 2):
                for t in range(s + min_len - 1, e + 1):
                    yield s, t, unit
            r = e + 1


def reference_hand_cost(c: tuple, slots: int = 0) -> int:
    """:func:`hand_cost` by the plain search: the flat cost, or any chain held taken out first
    (every order of every set of chains is tried; memoised). The definition the tests hold
    :func:`hand_cost` to."""
    return _reference_cost(tuple(int(x) for x in c), slots)


@functools.lru_cache(maxsize=200_000)
def _reference_cost(c: tuple, slots: int) -> int:
    if not any(c):
        return 0
    best = _flat_cost(c, slots)
    for s, t, unit in _chain_options(c):
        rest = list(c)
        for r in range(s, t + 1):
            rest[r] -= unit
        extra = t - s + 1 if unit == 3 else 0
        best = min(best, 1 + _reference_cost(tuple(rest), slots + extra))
    return best


# ----------------------------------------------------------------------------
# the reference: the per-game implementation the batched agent reproduces
# ----------------------------------------------------------------------------


class ReferenceRuleAgent(RuleAgent):
    """The same player decided one game at a time in plain Python (one :class:`_Turn` per play).

    Slow (a fraction of a millisecond per decision) and written to be obviously right: it is
    the definition :class:`RuleAgent` is tested against, move for move. Not for use in games.
    """

    name = "rule_reference"

    def act(self, view: engine.State) -> np.ndarray:
        """One action per game of ``view``."""
        ids, offsets = engine.legal_actions(view)
        table = action_table(view.rules)
        out = np.empty(view.num_games, dtype=np.int64)
        for i in range(view.num_games):
            legal = ids[offsets[i] : offsets[i + 1]]
            phase = int(view.phase[i])
            if phase == engine.BIDDING:
                out[i] = self._bid(view, i)
            elif phase == engine.DOUBLING:
                out[i] = self._double(view, i)
            else:
                out[i] = _Turn(view, i, table, legal).choose()
        return out

    @staticmethod
    def _bid(view: engine.State, i: int) -> int:
        """Bid the hand's level if it beats the highest bid so far, else bid0."""
        level = bid_level(hand_strength(view.hands[i, view.to_act[i]]))
        return BID0 + level if level > int(view.base[i]) else BID0

    @staticmethod
    def _double(view: engine.State, i: int) -> int:
        """Farmers double strong hands; the landlord redoubles very strong ones."""
        seat = int(view.to_act[i])
        strength = hand_strength(view.hands[i, seat])
        threshold = 9.0 if seat == int(view.landlord[i]) else 8.0
        return DOUBLE if strength >= threshold else NO_DOUBLE


class _Turn:
    """One card-play decision of one game."""

    def __init__(self, view: engine.State, i: int, table, legal: np.ndarray):
        self.t = table
        self.seat = int(view.to_act[i])
        self.landlord = int(view.landlord[i])
        self.hand = view.hands[i, self.seat].astype(np.int64)
        self.hand_t = tuple(int(x) for x in self.hand)
        self.left = self._cards_left(view, i)
        self.unseen = DECK_COUNTS - self.hand - view.played[i].sum(axis=0)
        self.to_beat = int(view.to_beat[i])
        self.to_beat_seat = int(view.to_beat_seat[i])
        self.legal = legal

    @staticmethod
    def _cards_left(view: engine.State, i: int) -> np.ndarray:
        """Cards left per seat, from public facts (dealt size minus cards played)."""
        size = np.full(3, 17)
        size[int(view.landlord[i])] += 3
        return size - view.played[i].sum(axis=1)

    # -- helpers -----------------------------------------------------------

    def opponents(self) -> list[int]:
        if self.seat == self.landlord:
            return [(self.seat + 1) % 3, (self.seat + 2) % 3]
        return [self.landlord]

    def partner(self) -> int | None:
        if self.seat == self.landlord:
            return None
        return 3 - self.seat - self.landlord

    def cost_after(self, a: int) -> int:
        rest = tuple(int(x) for x in self.hand - self.t.counts[a])
        return hand_cost(rest)

    def is_bomb(self, a: int) -> bool:
        return int(self.t.types[a]) in _BOMB_TYPES

    def is_control(self, a: int) -> bool:
        return self.is_bomb(a) or int(self.t.ranks[a]) >= _CONTROL_RANK

    def is_boss(self, a: int) -> bool:
        """No combination the unseen cards can form beats ``a`` (conservative for chains)."""
        u = self.unseen
        if self.t.ranks[a] < 0:
            return False
        rocket = bool(u[SMALL_JOKER] and u[BIG_JOKER])
        bombs = bool(np.any(u[:SMALL_JOKER] >= 4)) or rocket
        typ, rank = int(self.t.types[a]), int(self.t.ranks[a])
        if typ == CombType.ROCKET:
            return True
        if typ == CombType.BOMB:
            return not rocket and not np.any(u[rank + 1 : SMALL_JOKER] >= 4)
        if bombs:
            return False
        need = {CombType.SINGLE: 1, CombType.PAIR: 2, CombType.TRIPLE: 3, CombType.TRIPLE_SINGLE: 3,
                CombType.TRIPLE_PAIR: 3}.get(typ)
        if need is None:
            return rank + int(self.t.lengths[a]) - 1 >= CHAIN_TOP
        top = NUM_RANKS if need == 1 else SMALL_JOKER  # jokers are singles only
        return not np.any(u[rank + 1 : top] >= need)

    def candidates(self, actions: np.ndarray) -> np.ndarray:
        """One action per (type, length, body rank): the kicker choice that breaks the least."""
        if len(actions) <= 1:
            return actions
        t = self.t
        kick = t.counts[actions] - t.body[actions]
        rank_w = np.arange(NUM_RANKS) + 20 * (np.arange(NUM_RANKS) >= _CONTROL_RANK)
        waste = ((kick > 0) * (rank_w + 15 * (self.hand > kick))).sum(axis=1)
        order = np.lexsort((waste, t.ranks[actions], t.lengths[actions], t.types[actions]))
        a = actions[order]
        key = t.types[a].astype(np.int64) * 10_000 + t.lengths[a].astype(np.int64) * 100 + t.ranks[a]
        first = np.ones(len(a), dtype=bool)
        first[1:] = key[1:] != key[:-1]
        return a[first]

    # -- decisions -----------------------------------------------------------

    def choose(self) -> int:
        plays = self.legal[self.legal >= NUM_SPECIAL]
        out = plays[self.t.num_cards[plays] == self.hand.sum()]
        if len(out):
            return int(out[0])
        if self.to_beat < 0:
            return self.lead(plays)
        if self.partner() is not None and self.to_beat_seat == self.partner():
            return self.follow_partner(plays)
        return self.follow_opponent(plays)

    def lead(self, plays: np.ndarray) -> int:
        cands = self.candidates(plays)
        scored = [(self.cost_after(int(a)), int(a)) for a in cands]
        best = min(s for s, _ in scored)
        if best <= 1:  # two plays left: the unbeatable one first
            for s, a in scored:
                if s == best and (self.is_boss(a) or self.is_bomb(a)):
                    return a
        partner = self.partner()
        if partner is not None and self.left[partner] == 1:
            singles = [a for _, a in scored if self.t.types[a] == CombType.SINGLE]
            if singles:
                return min(singles, key=lambda a: self.t.ranks[a])
        danger = min(self.left[o] for o in self.opponents())
        return min(scored, key=lambda sa: self._lead_key(sa[0], sa[1], danger))[1]

    def _lead_key(self, cost: int, a: int, danger: int) -> tuple:
        """Sort key of a lead: fewest plays left, not into a near-empty hand, weak, low, long."""
        typ = int(self.t.types[a])
        risky = (danger == 1 and typ == CombType.SINGLE) or (danger == 2 and typ == CombType.PAIR)
        rank = int(self.t.ranks[a])
        if risky and not self.is_boss(a):
            return (1, cost, self.is_control(a), -rank, 0)
        return (0, cost, self.is_control(a), rank, -int(self.t.num_cards[a]))

    def follow_opponent(self, plays: np.ndarray) -> int:
        before = hand_cost(self.hand_t)
        danger = int(self.left[self.to_beat_seat])
        normal = plays[~np.isin(self.t.types[plays], _BOMB_TYPES)]
        if len(normal):
            scored = [(self.cost_after(int(a)), int(self.t.ranks[a]), int(a))
                      for a in self.candidates(normal)]
            if danger <= 2:  # the opponent is about to go out: beat it as high as needed to hold
                scored = [(s, -r if self.t.types[a] == CombType.SINGLE else r, a) for s, r, a in scored]
            cost, _, a = min(scored)
            control_ok = not self.is_control(a) or danger <= 8 or cost <= 2
            if (cost < before and control_ok) or danger <= 5 or cost <= 1:
                return a
        bombs = plays[np.isin(self.t.types[plays], _BOMB_TYPES)]
        if len(bombs):
            a = int(bombs[0])
            if danger <= 4 or self.cost_after(a) <= 1:
                return a
        return PASS

    def follow_partner(self, plays: np.ndarray) -> int:
        partner_rank = int(self.t.ranks[self.to_beat])
        normal = plays[~np.isin(self.t.types[plays], _BOMB_TYPES)]
        if not len(normal) or partner_rank >= 8:
            return PASS
        before = hand_cost(self.hand_t)
        scored = [(self.cost_after(int(a)), int(self.t.ranks[a]), int(a)) for a in self.candidates(normal)]
        cost, rank, a = min(scored)
        if cost < before and rank < 8 and not self.is_control(a):
            return a
        return PASS
