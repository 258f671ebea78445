"""RuleAgent, batched over games with numpy, decides exactly as ReferenceRuleAgent, one game at a time.

Positions come from whole games played by a mix of agents (each seat of each game
plays by the rule agent or uniformly at random, drawn per game), so that late-game
positions with few cards, bombs and the rocket occur. At every step both agents
are given the seat views of every live game and must agree on every one; the
situations met are counted, and each test checks it met the ones it is about.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from helpers import DOUZERO, STANDARD, random_states
from reference_rule import ReferenceRuleAgent, reference_hand_cost

from agents.rule import (
    CodeCache,
    RuleAgent,
    batch_hand_costs,
    batch_hand_strengths,
    clear_caches,
    hand_codes,
    hand_cost,
    hand_costs,
    hand_strength,
    hand_strengths,
)
from doudizhu_env import action_table, engine, parse_hand
from doudizhu_env.actions import BID0, DOUBLE, NUM_SPECIAL, PASS, CombType
from doudizhu_env.cards import BIG_JOKER, DECK_COUNTS, NUM_RANKS, SMALL_JOKER
from doudizhu_env.observation import cards_left, seat_view

RULES = {"standard": STANDARD, "douzero": DOUZERO}
#: What a quick test of each preset must have met (bidding and doubling exist in standard only).
PLAY_SITUATIONS = ("lead", "follow opponent", "follow partner", "opponent has 1", "opponent has 2",
                   "partner has 1", "bomb in hand", "rocket in hand", "plays a bomb", "passes", "goes out")
AUCTION_SITUATIONS = ("bid", "bids 1+", "doubling", "doubles")


def situations(view: engine.State, actions: np.ndarray) -> Counter:
    """How many games of ``view`` are in each situation (a game counts in several)."""
    table = action_table(view.rules)
    rows = np.arange(view.num_games)
    seat, landlord = view.to_act.astype(np.int64), view.landlord.astype(np.int64)
    play = view.phase == engine.PLAY
    hand = view.hands[rows, seat]
    left = cards_left(view)
    down, up = left[rows, (seat + 1) % 3], left[rows, (seat + 2) % 3]
    danger = np.where(seat == landlord, np.minimum(down, up), left[rows, landlord % 3])  # opponents' fewest
    partner = np.where(seat == landlord, -1, 3 - seat - landlord)
    leading = view.to_beat < 0
    by_partner = ~leading & (view.to_beat_seat == partner)
    kind = table.types[actions]
    found = {
        "bid": view.phase == engine.BIDDING,
        "bids 1+": (view.phase == engine.BIDDING) & (actions > BID0),
        "doubling": view.phase == engine.DOUBLING,
        "doubles": (view.phase == engine.DOUBLING) & (actions == DOUBLE),
        "play": play,
        "lead": play & leading,
        "follow opponent": play & ~leading & ~by_partner,
        "follow partner": play & by_partner,
        "opponent has 1": play & (danger == 1),
        "opponent has 2": play & (danger == 2),
        "partner has 1": play & (partner >= 0) & (left[rows, partner % 3] == 1),
        "bomb in hand": play & np.any(hand[:, :13] == 4, axis=1),
        "rocket in hand": play & (hand[:, 13] == 1) & (hand[:, 14] == 1),
        "plays a bomb": play & (actions >= NUM_SPECIAL) & np.isin(kind, (CombType.BOMB, CombType.ROCKET)),
        "passes": play & (actions == PASS),
        "goes out": play & (actions >= NUM_SPECIAL) & (table.num_cards[actions] == hand.sum(axis=1)),
    }
    return Counter({name: int(mask.sum()) for name, mask in found.items()})


def assert_same(view: engine.State, got: np.ndarray, want: np.ndarray) -> None:
    """The batched and the reference actions agree on every game (else name the first that differs)."""
    assert got.shape == want.shape == (view.num_games,)
    bad = np.flatnonzero(got != want)
    if len(bad):
        i = int(bad[0])
        table = action_table(view.rules)
        pytest.fail(f"{len(bad)} of {view.num_games} games differ; game {i} (phase {int(view.phase[i])}, "
                    f"to beat {int(view.to_beat[i])}): batched {table.names[got[i]]!r}, "
                    f"reference {table.names[want[i]]!r}")


def play_and_compare(rules, seed: int, num_games: int, rule_share: float = 0.5) -> Counter:
    """Play ``num_games`` games to the end, each seat by the rule agent with probability
    ``rule_share`` (drawn per game and seat), else at random; compare both agents at every step
    on every live game. Returns the situations met (see :func:`situations`)."""
    rng = np.random.default_rng(seed)
    state = engine.reset(rng, num_games, rules)
    by_rule = rng.random((num_games, 3)) < rule_share
    batched, reference = RuleAgent(), ReferenceRuleAgent()
    seen = Counter()
    while not state.done.all():
        live = np.flatnonzero(~state.done)
        view = seat_view(state, live)
        got = batched.act(view)
        assert_same(view, got, reference.act(view))
        seen += situations(view, got)
        actions = engine.sample_legal(state, rng)
        mine = by_rule[live, state.to_act[live]]
        actions[live[mine]] = got[mine]
        state = engine.step(state, actions)
    return seen


def required(rules) -> tuple[str, ...]:
    return PLAY_SITUATIONS + (AUCTION_SITUATIONS if rules.bidding else ())


@pytest.mark.parametrize("preset", sorted(RULES))
def test_batched_equals_reference_move_for_move(preset):
    rules = RULES[preset]
    seen = play_and_compare(rules, seed=20, num_games=80)
    assert seen["play"] >= 3000
    missing = [s for s in required(rules) if seen[s] == 0]
    assert not missing, f"no position of {missing} met: {dict(seen)}"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("preset", sorted(RULES))
@pytest.mark.parametrize("rule_share", [0.2, 0.8])
def test_batched_equals_reference_long(preset, seed, rule_share):
    rules = RULES[preset]
    seen = play_and_compare(rules, seed=seed, num_games=500, rule_share=rule_share)
    assert seen["play"] >= 15_000
    assert all(seen[s] >= 3 for s in required(rules)), dict(seen)


def test_auction_positions_of_many_deals():
    """Bidding over 1,000 fresh deals, then doubling of the same hands once a landlord is chosen."""
    batched, reference = RuleAgent(), ReferenceRuleAgent()
    state = engine.reset(5, 1000, STANDARD)
    seen = Counter()
    while state.num_games:
        view = seat_view(state)
        got = batched.act(view)
        assert_same(view, got, reference.act(view))
        seen += situations(view, got)
        state = engine.step(state, got)
        state = engine.take(state, np.flatnonzero(state.phase <= engine.DOUBLING))  # bidding or doubling
    assert all(seen[s] >= 5 for s in AUCTION_SITUATIONS), dict(seen)


def _some_views(rules, seed: int, num_games: int, every: int) -> list[engine.State]:
    """Seat views of the live games of every ``every``-th state of random play."""
    out = []
    for k, state in enumerate(random_states(rules, seed, num_games)):
        live = np.flatnonzero(~state.done)
        if k % every == 0 and len(live):
            out.append(seat_view(state, live))
    return out


@pytest.mark.parametrize("preset", sorted(RULES))
def test_batch_of_one_game(preset):
    """Each game decided alone gives the action it gets inside its batch, and the reference's."""
    batched, reference = RuleAgent(), ReferenceRuleAgent()
    decided = 0
    for view in _some_views(RULES[preset], 3, 12, every=2):
        together = batched.act(view)
        for i in range(view.num_games):
            one = engine.take(view, [i])
            alone = batched.act(one)
            assert alone.shape == (1,)
            assert alone[0] == together[i]
            assert_same(one, alone, reference.act(one))
            decided += 1
    assert decided >= 300


def test_mixed_phases_in_one_batch():
    """Games bidding, doubling and playing side by side (auto-reset play): one call decides them
    all as the reference does, and as each phase's games decided apart."""
    batched, reference = RuleAgent(), ReferenceRuleAgent()
    mixed = 0
    for k, state in enumerate(random_states(STANDARD, 9, 48, steps=400, auto_reset=True)):
        if k % 10:
            continue
        view = seat_view(state)
        got = batched.act(view)
        assert_same(view, got, reference.act(view))
        phases = np.unique(view.phase)
        mixed += len(phases) == 3
        for phase in phases:
            part = np.flatnonzero(view.phase == phase)
            np.testing.assert_array_equal(batched.act(engine.take(view, part)), got[part])
    assert mixed >= 5


def _random_hands(rng, n: int, size: int) -> np.ndarray:
    """``(n, 15)`` counts of ``size`` cards drawn from a deck."""
    deck = np.repeat(np.arange(NUM_RANKS), DECK_COUNTS)
    draws = [rng.choice(deck, size, replace=False) for _ in range(n)]
    return np.stack([np.bincount(d, minlength=NUM_RANKS) for d in draws])


def test_hand_codes_are_linear_and_distinct():
    rng = np.random.default_rng(0)
    hands = _random_hands(rng, 300, 17)
    play = np.minimum(hands, rng.integers(0, 3, hands.shape))
    np.testing.assert_array_equal(hand_codes(hands - play), hand_codes(hands) - hand_codes(play))
    unique_hands = np.unique(hands, axis=0)
    assert len(np.unique(hand_codes(unique_hands))) == len(unique_hands)


@pytest.mark.parametrize("merge_min, limit", [(4096, 2_000_000), (8, 40)])
def test_code_cache_returns_what_it_caches(merge_min, limit):
    """Through merges and drops (small limits) a cache answers every code with its function's value."""
    rng = np.random.default_rng(1)
    cache = CodeCache(hand_cost, np.int64, limit=limit, merge_min=merge_min)
    hands = _random_hands(rng, 120, 9)
    for _ in range(3):
        batch = hands[rng.integers(0, len(hands), (7, 11))]  # repeats inside one call, any shape
        want = np.array([[hand_cost(tuple(int(x) for x in h)) for h in row] for row in batch])
        np.testing.assert_array_equal(cache(hand_codes(batch)), want)
    assert 0 < len(cache) <= max(limit, len(np.unique(hand_codes(hands))))


def test_module_lookups_match_the_functions():
    rng = np.random.default_rng(2)
    hands = np.concatenate([_random_hands(rng, 50, size) for size in (17, 20, 3)])
    codes = hand_codes(hands)
    tuples = [tuple(int(x) for x in h) for h in hands]
    np.testing.assert_array_equal(hand_costs(codes), [hand_cost(t) for t in tuples])
    np.testing.assert_array_equal(hand_strengths(codes), [hand_strength(t) for t in tuples])


def test_batch_hand_strengths_are_the_one_hand_strengths_bit_for_bit():
    """Bids and doubles read the batched strengths; they are :func:`hand_strength`'s floats exactly,
    on hands with rockets, bombs, 2s and long chains among them."""
    rng = np.random.default_rng(5)
    hands = np.concatenate([_random_hands(rng, 300, size) for size in (17, 20, 1)]
                           + [np.array(_chainy_hands(rng, 200))])
    hands = np.concatenate([hands, [parse_hand("XD22223333AAKK")], [parse_hand("D2AKQJT98765")]])
    assert (hands[:, SMALL_JOKER] & hands[:, BIG_JOKER]).any() and (hands == 4).any()
    want = [hand_strength(tuple(int(x) for x in h)) for h in hands]
    np.testing.assert_array_equal(batch_hand_strengths(hands), want)


def _chainy_hands(rng, num: int) -> list[tuple]:
    """Random hands of 1..20 cards, half of them drawn from a few neighbouring ranks (many chains)."""
    deck = np.repeat(np.arange(15), DECK_COUNTS)
    out = []
    for k in range(num):
        size = int(rng.integers(1, 21))
        cards = deck if k % 2 else deck[deck >= rng.integers(0, 6)][: 4 * int(rng.integers(5, 10))]
        out.append(tuple(int(x) for x in np.bincount(rng.choice(cards, min(size, len(cards)), replace=False),
                                                     minlength=15)))
    return out


@pytest.mark.parametrize("slots", [0, 1, 2, 4])
def test_hand_cost_equals_the_plain_search(slots):
    """The rank-by-rank hand cost gives the plain search's answer (every order of every chain set)."""
    hands = _chainy_hands(np.random.default_rng(slots), 3000)
    assert [hand_cost(h, slots) for h in hands] == [reference_hand_cost(h, slots) for h in hands]
    assert max(hand_cost(h, slots) for h in hands) >= 5


def test_batched_hand_costs_equal_the_plain_search():
    """The run-by-run min-plus sum over a whole batch gives the plain search's answer, cold and warm."""
    hands = _chainy_hands(np.random.default_rng(7), 4000)
    want = [reference_hand_cost(h) for h in hands]
    clear_caches()
    assert batch_hand_costs(np.array(hands)).tolist() == want
    assert hand_costs(hand_codes(np.array(hands)[::-1])).tolist() == want[::-1]
