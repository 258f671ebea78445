"""The vectorized engine: B hands of Dou Dizhu stepped together with numpy.

Pure functions over a frozen :class:`State` of arrays, batch axis first::

    state = reset(seed, num_games=1024)              # or deals=[Deal(...), ...]
    while not state.done.all():
        actions = sample_legal(state, rng)           # or your policy over legal_action_mask(state)
        state = step(state, actions)                 # state.rewards: (B, 3), nonzero when a hand ends
    state.scores                                     # (B, 3) final points per seat

A hand goes through the phases ``BIDDING -> DOUBLING -> PLAY -> OVER``
(bidding and doubling are skipped when the rules turn them off). One call to
:func:`step` makes one decision in every unfinished game: the seat
``state.to_act`` picks an action id of :func:`~doudizhu_env.actions.action_table`.
Games already over are left as they are; :func:`reset_done` (or
``step(..., auto_reset=True)``) deals them a new hand, the first bidder moving
one seat on.

Randomness. Each game has its own 64-bit ``key``, drawn at :func:`reset` from
the generator given; every shuffle (first deal, redeals after three passes,
the hands after an auto-reset) is a pure function of ``(key, episode,
redeals)`` (:mod:`doudizhu_env.shuffle`). So the same seed gives the same
games, and a game's course never depends on the other games of its batch.

One game at a time, :mod:`doudizhu_env.game` is about 30x faster at B = 1:
it writes the common transitions again for one game in Python numbers (the
only code the two share in meaning but not in text), and takes every table,
constant and stream from the same modules as this one; it is held to this
engine step for step (``tests/test_single_game.py``).

Illegal actions raise :class:`IllegalActionError` naming the game, the action,
the phase and the legal actions; the input state is never modified.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .actions import (
    BID0,
    DOUBLE,
    NUM_SPECIAL,
    PASS,
    CombType,
    action_table,
)
from .cards import HAND_SIZE, NUM_RANKS, card_rank, check_counts, format_hand, parse_hand
from .checks import is_int, is_seat
from .legal import beats, bits_to_ids, holds, legal_tables, sample_bits, unpack_bits
from .rules import Rules, resolve_rules
from .shuffle import draw_seat, shuffled_deals

BIDDING, DOUBLING, PLAY, OVER = 0, 1, 2, 3
PHASE_NAMES = ("bidding", "doubling", "play", "over")
#: The roles, by role index: the landlord, the farmer after it (plays next), the farmer before it.
ROLE_NAMES = ("landlord", "landlord_down", "landlord_up")
NO_SPRING, SPRING, REVERSE_SPRING = 0, 1, 2
#: Longest possible move history of one hand: 3 bids, 3 doublings, and at most
#: 54 plays each followed by at most 2 passes.
MAX_HISTORY = 3 + 3 + 54 * 3


def role_of(seats, landlord):
    """Role index (an index into :data:`ROLE_NAMES`) of ``seats`` given the ``landlord`` seat; -1 where
    the landlord is -1 (not known yet). Broadcasts like numpy (scalars give a 0-d array)."""
    landlord = np.asarray(landlord, dtype=np.int64)
    return np.where(landlord >= 0, (np.asarray(seats, dtype=np.int64) - landlord) % 3, -1)


class IllegalActionError(ValueError):
    """An action that is not legal in its game; the state was not changed."""


@dataclass(frozen=True)
class Deal:
    """A scripted deal: three 17-card hands, the 3 hole cards, who bids first.

    ``landlord`` is used only when the rules have no bidding (else drawn).
    """

    hands: tuple[str, str, str]
    hole: str
    first_bidder: int = 0
    landlord: int | None = None

    @staticmethod
    def coerce(deal) -> Deal:
        if isinstance(deal, Deal):
            return deal
        if isinstance(deal, dict):
            unknown = set(deal) - {"hands", "hole", "first_bidder", "landlord"}
            if unknown:
                raise ValueError(f"unknown deal key(s) {sorted(unknown)}; expected hands, hole, "
                                 "first_bidder, landlord")
            missing = [k for k in ("hands", "hole") if k not in deal]
            if missing:
                raise ValueError(f"a deal needs 'hands' and 'hole'; this one has no "
                                 f"{' and no '.join(map(repr, missing))}")
            return Deal(tuple(deal["hands"]), deal["hole"], deal.get("first_bidder", 0), deal.get("landlord"))
        raise TypeError(f"a deal must be a Deal or a dict, got {type(deal).__name__}")


@dataclass(frozen=True, eq=False)
class State:
    """B games of Dou Dizhu. Every field is an array with the batch axis first.

    Seats are 0, 1, 2; -1 means "none yet". Card counts are per rank (15).
    The arrays are read-only: states share the arrays a step leaves unchanged.
    """

    rules: Rules
    key: np.ndarray  # (B,) uint64 per-game random key
    episode: np.ndarray  # (B,) int32 hands dealt in this slot before this one
    deal: np.ndarray  # (B, 54) int8 card ids as dealt: seat 0, 1, 2 (17 each), then the 3 hole cards
    hands: np.ndarray  # (B, 3, 15) int8 cards in each seat's hand
    hole: np.ndarray  # (B, 15) int8 the hole cards
    phase: np.ndarray  # (B,) int8 BIDDING / DOUBLING / PLAY / OVER
    to_act: np.ndarray  # (B,) int8 the seat whose decision it is
    first_bidder: np.ndarray  # (B,) int8
    bids: np.ndarray  # (B, 3) int8 each seat's bid (-1 not yet)
    base: np.ndarray  # (B,) int8 highest bid so far (the base score once bidding is over)
    landlord: np.ndarray  # (B,) int8 (-1 during bidding)
    doubles: np.ndarray  # (B, 3) int8 1 doubled (landlord: redoubled), 0 declined, -1 not asked
    to_beat: np.ndarray  # (B,) int32 the combination to beat (-1: the seat to act leads)
    to_beat_seat: np.ndarray  # (B,) int8 who played it (-1 none)
    passes: np.ndarray  # (B,) int8 consecutive passes
    played: np.ndarray  # (B, 3, 15) int8 cards played by each seat
    num_plays: np.ndarray  # (B, 3) int16 card plays (not passes) by each seat
    bombs: np.ndarray  # (B,) int8 bombs played
    rocket: np.ndarray  # (B,) bool the rocket was played
    spring: np.ndarray  # (B,) int8 NO_SPRING / SPRING / REVERSE_SPRING
    history: np.ndarray  # (B, MAX_HISTORY) int16 action ids of this hand in order (-1 padding)
    history_seat: np.ndarray  # (B, MAX_HISTORY) int8 who made each of them
    history_len: np.ndarray  # (B,) int16
    redeals: np.ndarray  # (B,) int16 redeals in this episode
    escaped: np.ndarray  # (B,) int8 the seat that abandoned the hand (-1 none)
    done: np.ndarray  # (B,) bool the hand is over (finished, truncated or abandoned)
    truncated: np.ndarray  # (B,) bool over because the redeal bound was passed
    ended: np.ndarray  # (B,) bool the last step (or escape) ended the hand
    rewards: np.ndarray  # (B, 3) float32 points won by each seat at the last step
    scores: np.ndarray  # (B, 3) int32 final points of the hand (0 until it is over)

    def __post_init__(self):
        # States share arrays (a step copies only what it changes), so they are read-only.
        for name in _FIELDS:
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    @property
    def num_games(self) -> int:
        return len(self.key)

    @property
    def multiplier(self) -> np.ndarray:
        """2 ** (bombs + rocket + doublings + spring) so far, per game."""
        return _multiplier(self.doubles, self.bombs, self.rocket, self.spring)

    @property
    def leading(self) -> np.ndarray:
        """The seat to act may play any combination (no table to beat)."""
        return self.to_beat < 0

    @property
    def num_actions(self) -> int:
        return len(action_table(self.rules))


_FIELDS = tuple(f.name for f in dataclasses.fields(State))

def _deal_counts(deal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hands ``(N, 3, 15)`` and hole ``(N, 15)`` of dealt card ids ``(N, 54)``."""
    n = len(deal)
    owner = np.repeat(np.arange(4), [HAND_SIZE] * 3 + [3])
    cell = (np.arange(n)[:, None] * 4 + owner[None, :]) * NUM_RANKS + card_rank(deal.astype(np.int64))
    counts = np.bincount(cell.ravel(), minlength=n * 4 * NUM_RANKS).astype(np.int8).reshape(n, 4, NUM_RANKS)
    return counts[:, :3], counts[:, 3]


def action_id(action, num_actions: int | None = None) -> int:
    """One action given by a caller (an int, a numpy integer or a 0-d integer array) as an int.

    Raises :class:`IllegalActionError` for anything else (a bool, a float, a string, an array of
    several) and, when ``num_actions`` is given, for an id outside ``0..num_actions - 1``.
    """
    a = np.asarray(action)
    if a.shape != () or not np.issubdtype(a.dtype, np.integer):
        expected = "one integer id" if num_actions is None else f"one integer id 0..{num_actions - 1}"
        raise IllegalActionError(f"an action is {expected}, got {type(action).__name__} {action!r}")
    if num_actions is not None and not 0 <= int(a) < num_actions:
        raise IllegalActionError(f"action id {int(a)} out of range 0..{num_actions - 1}")
    return int(a)


def deal_from_cards(deal: Deal) -> np.ndarray:
    """The 54 card ids of a scripted :class:`Deal` (suits given in order), validating it."""
    parts = [*deal.hands, deal.hole]
    if len(deal.hands) != 3:
        raise ValueError(f"a deal needs 3 hands, got {len(deal.hands)}")
    counts = [parse_hand(p) for p in parts]
    sizes = [int(c.sum()) for c in counts]
    if sizes != [HAND_SIZE] * 3 + [3]:
        raise ValueError(f"a deal has hands of 17 cards and 3 hole cards, got sizes {sizes}")
    total = np.sum(counts, axis=0)
    check_counts(total, "the deal as a whole")
    if not is_seat(deal.first_bidder):
        raise ValueError(f"first_bidder must be 0, 1 or 2, got {deal.first_bidder!r}")
    if deal.landlord is not None and not is_seat(deal.landlord):
        raise ValueError(f"landlord must be 0, 1, 2 or None, got {deal.landlord!r}")
    next_suit = np.zeros(NUM_RANKS, dtype=np.int64)
    ids = []
    for c in counts:
        for rank in np.repeat(np.arange(NUM_RANKS), c):
            ids.append(52 + rank - 13 if rank >= 13 else 4 * rank + next_suit[rank])
            next_suit[rank] += 1
    return np.array(ids, dtype=np.int8)


# ----------------------------------------------------------------------------
# reset
# ----------------------------------------------------------------------------


def reset(
    seed_or_rng: int | np.random.Generator | None,
    num_games: int,
    rules: Rules | str | None = None,
    deals: Sequence[Deal | dict] | None = None,
) -> State:
    """``num_games`` new hands. ``deals`` (one per game) scripts the cards instead of shuffling."""
    rules = resolve_rules(rules)
    if not is_int(num_games) or num_games < 1:
        raise ValueError(f"num_games must be a positive int, got {num_games!r}")
    rng = seed_or_rng if isinstance(seed_or_rng, np.random.Generator) else np.random.default_rng(seed_or_rng)
    keys = rng.integers(0, 2**63 - 1, size=num_games, dtype=np.int64).astype(np.uint64)
    episode = np.zeros(num_games, dtype=np.int32)
    zeros = np.zeros(num_games, dtype=np.int16)
    if deals is None:
        cards = shuffled_deals(keys, episode, zeros)
        first = draw_seat(keys, episode, 0)
        landlord = draw_seat(keys, episode, 1)
    else:
        given = [Deal.coerce(d) for d in deals]
        if len(given) != num_games:
            raise ValueError(f"got {len(given)} deals for {num_games} games")
        cards = np.stack([deal_from_cards(d) for d in given])
        first = np.array([d.first_bidder for d in given], dtype=np.int8)
        drawn = draw_seat(keys, episode, 1)
        landlord = np.array([drawn[i] if d.landlord is None else d.landlord for i, d in enumerate(given)],
                            dtype=np.int8)
    return State(**_new_hands(rules, keys, episode, zeros, cards, first, landlord))


def deals_of(state: State) -> list[Deal]:
    """The :class:`Deal` of every game of ``state``, as it was dealt: the cards each seat held
    before the first move (its hand and the cards it has played; the landlord's without the hole
    cards once it holds them), the hole, the first bidder and, with no bidding, the landlord.
    ``reset(..., deals=deals_of(state))`` deals the same hands again."""
    hands = state.hands.astype(np.int64) + state.played
    lord = state.landlord.astype(np.int64)
    has = np.flatnonzero(lord >= 0)
    hands[has, lord[has]] -= state.hole[has]
    fixed = not state.rules.bidding
    return [Deal((format_hand(hands[i, 0]), format_hand(hands[i, 1]), format_hand(hands[i, 2])),
                 format_hand(state.hole[i]), int(state.first_bidder[i]),
                 int(lord[i]) if fixed and lord[i] >= 0 else None) for i in range(state.num_games)]


def _new_hands(rules, keys, episode, redeals, cards, first, landlord) -> dict:
    """The fields of fresh hands dealt ``cards``, before the first decision."""
    n = len(keys)
    hands, hole = _deal_counts(cards)
    s = dict(
        rules=rules, key=keys, episode=episode, deal=cards, hands=hands, hole=hole,
        phase=np.full(n, BIDDING, np.int8), to_act=first.copy(), first_bidder=first,
        bids=np.full((n, 3), -1, np.int8), base=np.zeros(n, np.int8), landlord=np.full(n, -1, np.int8),
        doubles=np.full((n, 3), -1, np.int8), to_beat=np.full(n, -1, np.int32),
        to_beat_seat=np.full(n, -1, np.int8), passes=np.zeros(n, np.int8),
        played=np.zeros((n, 3, NUM_RANKS), np.int8), num_plays=np.zeros((n, 3), np.int16),
        bombs=np.zeros(n, np.int8), rocket=np.zeros(n, bool), spring=np.zeros(n, np.int8),
        history=np.full((n, MAX_HISTORY), -1, np.int16), history_seat=np.full((n, MAX_HISTORY), -1, np.int8),
        history_len=np.zeros(n, np.int16), redeals=redeals.astype(np.int16), escaped=np.full(n, -1, np.int8),
        done=np.zeros(n, bool), truncated=np.zeros(n, bool), ended=np.zeros(n, bool),
        rewards=np.zeros((n, 3), np.float32), scores=np.zeros((n, 3), np.int32),
    )
    if not rules.bidding:
        everyone = np.arange(n)
        s["base"][:] = 1
        _make_landlord(s, everyone, landlord)
    return s


def _make_landlord(s: dict, idx: np.ndarray, seat: np.ndarray) -> None:
    """Bidding is over: the hole cards join ``seat``'s hand; doubling (or play) starts."""
    s["landlord"][idx] = seat
    s["hands"][idx, seat] += s["hole"][idx]
    if s["rules"].doubling:
        s["phase"][idx] = DOUBLING
        s["to_act"][idx] = (seat + 1) % 3
    else:
        s["phase"][idx] = PLAY
        s["to_act"][idx] = seat


# ----------------------------------------------------------------------------
# legal actions
# ----------------------------------------------------------------------------


def legal_bits(state: State) -> np.ndarray:
    """``(B, W)`` uint64 bitsets of each game's legal actions (see :mod:`doudizhu_env.legal`).

    The one computation behind :func:`legal_action_mask`, :func:`legal_actions`
    and :func:`sample_legal`.
    """
    lt = legal_tables(state.rules)
    bits = np.zeros((state.num_games, lt.words), dtype=np.uint64)
    bidding = np.flatnonzero(state.phase == BIDDING)
    if len(bidding):
        # bid0 always; bid v only above the highest bid so far
        allowed = np.arange(4)[None, :] > state.base[bidding, None]
        allowed[:, 0] = True
        shifts = np.arange(BID0, BID0 + 4, dtype=np.uint64)
        bits[bidding, 0] |= (allowed.astype(np.uint64) << shifts).sum(axis=1)
    doubling = np.flatnonzero(state.phase == DOUBLING)
    bits[doubling, 0] |= np.uint64((1 << DOUBLE) | (1 << (DOUBLE + 1)))
    play = state.phase == PLAY
    lead = np.flatnonzero(play & state.leading)
    follow = np.flatnonzero(play & ~state.leading)
    if len(lead):
        bits[lead] = lt.fit_bits(state.hands[lead, state.to_act[lead]])
    if len(follow):
        lt.follow_bits(state.hands[follow, state.to_act[follow]], state.to_beat[follow], bits, follow)
    return bits


def is_legal(state: State, actions: np.ndarray) -> np.ndarray:
    """``(B,)`` bool: is each game's action legal for its seat to act? (False for games over.)

    Written directly from the rules (:func:`legal_bid`, :func:`legal_doubling`,
    :func:`legal_play`), independently of the bitsets: the tests check that
    both agree.
    """
    actions = np.asarray(actions, dtype=np.int64)
    ok = np.zeros(state.num_games, dtype=bool)
    in_range = (actions >= 0) & (actions < state.num_actions)
    for phase, rule in ((BIDDING, legal_bid), (DOUBLING, legal_doubling), (PLAY, legal_play)):
        idx = np.flatnonzero((state.phase == phase) & in_range)
        if len(idx):
            ok[idx] = rule(state, idx, actions[idx])
    return ok


def legal_bid(state: State, idx: np.ndarray, a: np.ndarray) -> np.ndarray:
    """A seat bids nothing (``bid0``) or strictly more than the highest bid so far."""
    bid = a - BID0
    return (bid >= 0) & (bid <= 3) & ((bid == 0) | (bid > state.base[idx]))


def legal_doubling(state: State, idx: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Farmers double or not; the landlord redoubles or not: ``double`` / ``no_double``."""
    return (a == DOUBLE) | (a == DOUBLE + 1)


def legal_play(state: State, idx: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The leader plays any combination it holds; a follower passes or beats the table with cards it holds."""
    table = action_table(state.rules)
    leading = state.to_beat[idx] < 0
    hand = state.hands[idx, state.to_act[idx]]
    card = (a >= NUM_SPECIAL) & holds(table, hand, a) & (leading | beats(table, a, state.to_beat[idx]))
    return np.where(a == PASS, ~leading, card)


def legal_action_mask(state: State) -> np.ndarray:
    """Dense ``(B, A)`` bool mask of the legal actions of the seat to act (all False when over)."""
    return unpack_bits(legal_bits(state), state.num_actions)


def legal_actions(state: State) -> tuple[np.ndarray, np.ndarray]:
    """Sparse legal actions: ``ids[offsets[i]:offsets[i + 1]]`` are game ``i``'s, ascending."""
    return bits_to_ids(legal_bits(state))


def sample_legal(state: State, rng: np.random.Generator) -> np.ndarray:
    """One legal action per game, uniformly at random (``PASS`` for games that are over)."""
    actions = sample_bits(legal_bits(state), rng)
    return np.where(actions < 0, PASS, actions)


class RandomPolicy:
    """The uniform random player: :func:`sample_legal` from its own generator, for a batch of games.

    ``act(view)`` is a player's (see :mod:`doudizhu_env.driver`). It reads nothing but the acting
    seat's legal actions, so it declares ``needs_view = False`` (drivers hand it their games as they
    are, without building seat views) and ``legal_by_construction = True`` (its actions need no
    check); ``act_game`` draws its move in one :class:`doudizhu_env.game.Game`, exactly what ``act``
    draws from that game's state. The Gymnasium envs' default opponents are instances.

    ``agents.base.RandomAgent`` draws the same moves as an agent (seed 0 by default), but is
    driven as any agent is, since a subclass may read its view or change ``act``: it is given seat
    views (``needs_view = True``), its actions are checked (``legal_by_construction = False``) and
    it has no ``act_game``.
    """

    name = "random"
    needs_view = False
    legal_by_construction = True

    def __init__(self, seed: int | np.random.Generator | None = None):
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def act(self, view: State) -> np.ndarray:
        return sample_legal(view, self.rng)

    def act_game(self, game) -> int:
        """The move in one :class:`doudizhu_env.game.Game` (the single-game path)."""
        return game.sample_legal(self.rng)


# ----------------------------------------------------------------------------
# step
# ----------------------------------------------------------------------------


def step(state: State, actions, *, auto_reset: bool = False, check: bool = True) -> State:
    """Make one decision in every unfinished game; returns the new state.

    ``actions`` is ``(B,)`` action ids; entries of games already over are
    ignored. ``state.rewards`` of the result holds the points of the hands
    that ended at this step. With ``auto_reset``, those games are dealt a new
    hand at once (:func:`reset_done`); ``ended`` tells which.
    ``check=False`` skips the legality check (for trusted callers that sample
    from the legal actions).
    """
    actions = np.asarray(actions)
    if actions.shape != (state.num_games,) or not np.issubdtype(actions.dtype, np.integer):
        raise ValueError(f"actions must be {state.num_games} integer ids, got {actions.dtype} "
                         f"{actions.shape}")
    actions = actions.astype(np.int64)
    if check:
        _check_legal(state, actions)
    s = _Draft(state)
    s["rewards"] = np.zeros_like(state.rewards)
    s["ended"] = np.zeros_like(state.ended)
    live = ~state.done
    _record_history(s, np.flatnonzero(live), actions)
    _step_bidding(s, np.flatnonzero(live & (state.phase == BIDDING)), actions)
    _step_doubling(s, np.flatnonzero(live & (state.phase == DOUBLING)), actions)
    _step_play(s, np.flatnonzero(live & (state.phase == PLAY)), actions)
    if auto_reset:
        _deal_next_hands(s, np.flatnonzero(s["done"]))
    return s.build()


class _Draft(dict):
    """The fields of a state being built from ``source``.

    An array is copied on first access, so a step copies only the arrays it
    touches and shares the rest with its (unchanged) input state.
    """

    def __init__(self, source: State):
        super().__init__()
        self.source = source

    def __missing__(self, name):
        value = getattr(self.source, name)
        value = value.copy() if isinstance(value, np.ndarray) else value
        self[name] = value
        return value

    def build(self) -> State:
        return State(**{n: self[n] if n in self else getattr(self.source, n) for n in _FIELDS})


def _check_legal(state: State, actions: np.ndarray) -> None:
    live = np.flatnonzero(~state.done)
    if not len(live):
        return
    num = state.num_actions
    bad_range = live[(actions[live] < 0) | (actions[live] >= num)]
    if len(bad_range):
        i = int(bad_range[0])
        raise IllegalActionError(f"game {i}: action id {int(actions[i])} out of range 0..{num - 1}")
    bad = live[~is_legal(state, actions)[live]]
    if len(bad):
        i = int(bad[0])
        table = action_table(state.rules)
        ids, _ = bits_to_ids(legal_bits(state)[i : i + 1])
        legal = [table.names[j] for j in ids]
        raise IllegalActionError(
            f"game {i}: action {table.names[int(actions[i])]!r} (id {int(actions[i])}) is not legal in the "
            f"{PHASE_NAMES[state.phase[i]]} phase for seat {int(state.to_act[i])} holding "
            f"{format_hand(state.hands[i, state.to_act[i]])}; legal: {_shorten(legal)}"
        )


def _shorten(names: list[str], limit: int = 40) -> str:
    shown = ", ".join(names[:limit])
    return f"[{shown}{', ...' if len(names) > limit else ''}] ({len(names)} actions)"


def _record_history(s: dict, idx: np.ndarray, actions: np.ndarray) -> None:
    pos = s["history_len"][idx]
    s["history"][idx, pos] = actions[idx]
    s["history_seat"][idx, pos] = s["to_act"][idx]
    s["history_len"][idx] += 1


def _step_bidding(s: dict, idx: np.ndarray, actions: np.ndarray) -> None:
    """One turn per seat from the first bidder; a bid of 3 or the third turn ends bidding."""
    if not len(idx):
        return
    seat = s["to_act"][idx]
    bid = (actions[idx] - BID0).astype(np.int8)
    s["bids"][idx, seat] = bid
    s["base"][idx] = np.maximum(s["base"][idx], bid)
    over = (bid == 3) | np.all(s["bids"][idx] >= 0, axis=1)
    s["to_act"][idx[~over]] = (seat[~over] + 1) % 3
    won = over & (s["base"][idx] > 0)
    if won.any():
        _make_landlord(s, idx[won], np.argmax(s["bids"][idx[won]], axis=1).astype(np.int8))
    _redeal(s, idx[over & ~won])


def _redeal(s: dict, idx: np.ndarray) -> None:
    """All three passed: a new shuffle, the first bidder moves on; truncate past the bound."""
    if not len(idx):
        return
    s["redeals"][idx] += 1
    cut = s["redeals"][idx] > s["rules"].redeal_limit
    _finish(s, idx[cut], np.zeros((int(cut.sum()), 3), np.int32), truncated=True)
    idx = idx[~cut]
    if not len(idx):
        return
    cards = shuffled_deals(s["key"][idx], s["episode"][idx], s["redeals"][idx])
    first = ((s["first_bidder"][idx] + 1) % 3).astype(np.int8)
    _restart(s, idx, cards, first, first)


_KEPT_ON_RESTART = ("rules", "key", "episode", "redeals", "rewards", "ended")


def _restart(s: dict, idx: np.ndarray, cards: np.ndarray, first: np.ndarray, landlord: np.ndarray) -> None:
    """Overwrite games ``idx`` with a fresh deal (keeps key, episode, redeals; rewards and ended too)."""
    key, episode, redeals = s["key"][idx], s["episode"][idx], s["redeals"][idx]
    fresh = _new_hands(s["rules"], key, episode, redeals, cards, first, landlord)
    for name in _FIELDS:
        if name not in _KEPT_ON_RESTART:
            s[name][idx] = fresh[name]


def _step_doubling(s: dict, idx: np.ndarray, actions: np.ndarray) -> None:
    """Farmer after the landlord, then the other farmer; the landlord redoubles only if one doubled."""
    if not len(idx):
        return
    seat = s["to_act"][idx]
    landlord = s["landlord"][idx]
    s["doubles"][idx, seat] = actions[idx] == DOUBLE
    first_farmer = seat == (landlord + 1) % 3
    second_farmer = seat == (landlord + 2) % 3
    farmers_doubled = np.any(s["doubles"][idx] == 1, axis=1)  # the landlord has not decided yet
    to_landlord = second_farmer & farmers_doubled
    start_play = ~first_farmer & ~to_landlord
    s["to_act"][idx[first_farmer]] = (landlord[first_farmer] + 2) % 3
    s["to_act"][idx[to_landlord]] = landlord[to_landlord]
    s["phase"][idx[start_play]] = PLAY
    s["to_act"][idx[start_play]] = landlord[start_play]


def _step_play(s: dict, idx: np.ndarray, actions: np.ndarray) -> None:
    """Play or pass; two passes in a row clear the table; an empty hand ends the hand."""
    if not len(idx):
        return
    table = action_table(s["rules"])
    seat = s["to_act"][idx]
    a = actions[idx]
    passed = a == PASS
    s["to_act"][idx] = (seat + 1) % 3
    p = idx[passed]
    s["passes"][p] += 1
    s["to_beat"][p[s["passes"][p] >= 2]] = -1
    s["passes"][p[s["passes"][p] >= 2]] = 0
    q, qs, qa = idx[~passed], seat[~passed], a[~passed]
    counts = table.counts[qa]
    s["hands"][q, qs] -= counts
    s["played"][q, qs] += counts
    s["num_plays"][q, qs] += 1
    s["to_beat"][q], s["to_beat_seat"][q], s["passes"][q] = qa, qs, 0
    s["bombs"][q] += table.types[qa] == CombType.BOMB
    s["rocket"][q] |= qa == table.rocket
    out = s["hands"][q, qs].sum(axis=1) == 0
    if out.any():
        _score(s, q[out], qs[out])


def _score(s: dict, idx: np.ndarray, winner: np.ndarray) -> None:
    """The hand ended with ``winner``'s last card: 2:1:1 payoffs times base x multiplier."""
    landlord = s["landlord"][idx]
    landlord_won = winner == landlord
    if s["rules"].spring:
        landlord_plays = s["num_plays"][idx, landlord]
        s["spring"][idx] = spring_of(landlord_won, s["num_plays"][idx].sum(axis=1) - landlord_plays,
                                     landlord_plays)
    stake = _stake(s, idx)
    sign = np.where(landlord_won, 1, -1)
    points = np.tile((-sign * stake)[:, None], (1, 3))
    points[np.arange(len(idx)), landlord] = 2 * sign * stake
    _finish(s, idx, points.astype(np.int32))


def spring_of(landlord_won, farmers_plays, landlord_plays) -> np.ndarray:
    """SPRING where the landlord won and the farmers never played a card; REVERSE_SPRING where the
    farmers won and the landlord played only once (its opening move); else NO_SPRING. Broadcasts
    like numpy (scalars give a 0-d array)."""
    landlord_won = np.asarray(landlord_won, dtype=bool)
    spring = landlord_won & (np.asarray(farmers_plays) == 0)
    reverse = ~landlord_won & (np.asarray(landlord_plays) == 1)
    return np.where(spring, SPRING, np.where(reverse, REVERSE_SPRING, NO_SPRING))


def _multiplier(doubles, bombs, rocket, spring) -> np.ndarray:
    """x2 per bomb, rocket, farmer double, landlord redouble, spring or reverse spring."""
    events = bombs.astype(np.int64) + rocket + np.sum(doubles == 1, axis=-1) + (spring != NO_SPRING)
    return 1 << events


def _stake(s: dict, idx: np.ndarray) -> np.ndarray:
    """base x multiplier of games ``idx``."""
    mult = _multiplier(s["doubles"][idx], s["bombs"][idx], s["rocket"][idx], s["spring"][idx])
    return s["base"][idx].astype(np.int64) * mult


def _finish(s: dict, idx: np.ndarray, points: np.ndarray, truncated: bool = False) -> None:
    s["phase"][idx] = OVER
    s["done"][idx] = True
    s["ended"][idx] = True
    s["truncated"][idx] = truncated
    s["scores"][idx] = points
    s["rewards"][idx] = points


# ----------------------------------------------------------------------------
# auto-reset and escape
# ----------------------------------------------------------------------------


def reset_done(state: State) -> State:
    """Deal a new hand to every game that is over (episode + 1, first bidder one seat on).

    ``rewards`` and ``ended`` are kept, so a caller can still read the
    result of the step that ended a hand.
    """
    if not state.done.any():
        return state
    s = _Draft(state)
    _deal_next_hands(s, np.flatnonzero(state.done))
    return s.build()


def _deal_next_hands(s: dict, idx: np.ndarray) -> None:
    """Games ``idx`` of a draft start their next hand (episode + 1, first bidder one seat on)."""
    if not len(idx):
        return
    s["episode"][idx] += 1
    s["redeals"][idx] = 0
    key, episode = s["key"][idx], s["episode"][idx]
    cards = shuffled_deals(key, episode, s["redeals"][idx])
    first = ((s["first_bidder"][idx] + 1) % 3).astype(np.int8)
    landlord = first if s["rules"].bidding else draw_seat(key, episode, 1)  # drawn only without bidding
    _restart(s, idx, cards, first, landlord)


def escape(state: State, seats) -> State:
    """Seats abandon their hands: ``seats`` is ``(B,)`` with -1 for games that go on.

    The seat that escapes scores -3 x base x multiplier (-3 if no one has bid
    yet); the other two score 0; the hand is over. Not an agent action: it is
    meant for tables with people at them.
    """
    given = np.asarray(seats)
    if (given.shape != (state.num_games,) or not np.issubdtype(given.dtype, np.integer)
            or np.any((given < -1) | (given > 2))):
        raise ValueError(f"seats must be {state.num_games} integers in -1..2 (-1: no escape), got {seats!r}")
    seats = given.astype(np.int64)
    idx = np.flatnonzero((seats >= 0) & ~state.done)
    s = _Draft(state)
    s["rewards"] = np.zeros_like(state.rewards)
    s["ended"] = np.zeros_like(state.ended)
    if len(idx):
        stake = np.where(s["base"][idx] > 0, _stake(s, idx), 1)
        points = np.zeros((len(idx), 3), np.int32)
        points[np.arange(len(idx)), seats[idx]] = -3 * stake
        s["escaped"][idx] = seats[idx]
        _finish(s, idx, points)
    return s.build()


def take(state: State, games) -> State:
    """The games ``games`` (integer indices ``0..B-1``) of ``state``, as a state of their own."""
    given = np.asarray(games)
    if given.ndim != 1 or not (np.issubdtype(given.dtype, np.integer) or given.size == 0):
        raise ValueError(f"games must be a sequence of integer indices, got {games!r}")
    if np.any((given < 0) | (given >= state.num_games)):
        raise ValueError(f"game indices must be in 0..{state.num_games - 1}, got {games!r}")
    games = given.astype(np.int64)
    return State(**{n: (v[games] if isinstance(v := getattr(state, n), np.ndarray) else v) for n in _FIELDS})


def merge_rows(state: State, idx: np.ndarray, taken: State, sub: State) -> State:
    """``state`` with rows ``idx`` replaced by ``sub``: the games ``taken = take(state, idx)``, stepped.

    States share arrays (the engine copies on write), so nothing is written in
    place: each field the step replaced is copied, then updated.
    """
    changes = {}
    for f in dataclasses.fields(state):
        new = getattr(sub, f.name)
        if isinstance(new, np.ndarray) and new is not getattr(taken, f.name):
            merged = getattr(state, f.name).copy()
            merged[idx] = new
            changes[f.name] = merged
    return dataclasses.replace(state, **changes)


__all__ = [
    "BIDDING", "DOUBLING", "PLAY", "OVER", "NO_SPRING", "SPRING", "REVERSE_SPRING", "MAX_HISTORY",
    "Deal", "State", "IllegalActionError", "is_seat", "deals_of", "action_id", "reset", "step", "reset_done",
    "escape",
    "take", "merge_rows",
    "legal_bits", "legal_action_mask", "legal_actions", "sample_legal", "spring_of",
    "is_legal", "legal_bid", "legal_doubling", "legal_play",
]
