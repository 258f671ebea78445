"""Properties of random games played with ``sample_legal`` (hypothesis over seeds and batch sizes)."""


import numpy as np
import pytest
from helpers import state_fields
from hypothesis import given, settings
from hypothesis import strategies as st

from doudizhu_env import CombType, Rules, action_table, engine
from doudizhu_env.actions import BID0, DOUBLE, NUM_SPECIAL
from doudizhu_env.cards import DECK_COUNTS
from doudizhu_env.engine import BIDDING, MAX_HISTORY, NO_SPRING, PLAY, REVERSE_SPRING, SPRING, reset, step
from doudizhu_env.engine import sample_legal as sample

SETTINGS = settings(max_examples=25, deadline=None)
seeds = st.integers(0, 2**32 - 1)
batches = st.integers(1, 8)
# with redeal_limit=0 and shy bidders (below), truncation after three passes is common
rules_ = st.sampled_from(["standard", "douzero", Rules.preset("standard", redeal_limit=0)])


def step_bound(rules) -> int:
    """Bidding turns of every allowed redeal, then one full hand."""
    return 3 * (rules.redeal_limit + 1) + MAX_HISTORY


def trajectory(seed, num_games, rules="standard", auto_reset=False, steps=None):
    """Yield ``(state, actions, next_state)`` of random legal play until every game is over."""
    state = reset(seed, num_games, rules)
    rng = np.random.default_rng(seed + 1)
    bound = step_bound(state.rules) if steps is None else steps
    for _ in range(bound):
        if steps is None and state.done.all():
            return
        shy = (state.phase == BIDDING) & (rng.random(num_games) < 0.5)  # more all-pass redeals
        actions = np.where(shy, BID0, sample(state, rng))
        new = step(state, actions, auto_reset=auto_reset)
        yield state, actions, new
        state = new
    assert steps is not None, f"games not over after {bound} steps: {np.flatnonzero(~state.done)}"


def final(seed, num_games, rules="standard"):
    state = reset(seed, num_games, rules)
    for _, _, new in trajectory(seed, num_games, rules):
        state = new
    return state


def history_counts(state):
    """Bombs, rocket, doubles (the farmers' and the redouble) and card plays per seat, from the history."""
    table = action_table(state.rules)
    hist = state.history.astype(np.int64)
    card = hist >= NUM_SPECIAL
    types = table.types[np.where(card, hist, 0)]
    bombs = np.sum(card & (types == CombType.BOMB), axis=1)
    rocket = np.any(hist == table.rocket, axis=1)
    doubles = np.sum(hist == DOUBLE, axis=1)
    plays = np.stack([np.sum(card & (state.history_seat == seat), axis=1) for seat in range(3)], axis=1)
    return bombs, rocket, doubles, plays


@given(seeds, batches, rules_)
@SETTINGS
def test_every_card_is_accounted_for(seed, num_games, rules):
    for _, _, s in trajectory(seed, num_games, rules):
        hole_not_taken = s.hole * (s.landlord < 0)[:, None]
        total = s.hands.sum(axis=1) + s.played.sum(axis=1) + hole_not_taken
        assert (total == DECK_COUNTS).all()
        assert (s.hands >= 0).all()
        assert (np.sort(s.deal, axis=1) == np.arange(54)).all()  # each physical card dealt once


@given(seeds, batches, rules_)
@SETTINGS
def test_only_the_acting_seat_changes_its_hand(seed, num_games, rules):
    table = action_table(rules)
    for prev, actions, s in trajectory(seed, num_games, rules):
        for i in np.flatnonzero(~prev.done):
            seat, expected = prev.to_act[i], prev.hands[i].copy()
            if prev.phase[i] == PLAY:
                expected[seat] -= table.counts[actions[i]]
                assert (s.played[i] - prev.played[i]).sum() == table.num_cards[actions[i]]
            elif prev.phase[i] == BIDDING and s.redeals[i] != prev.redeals[i]:
                continue  # all passed: new cards (or truncated)
            elif prev.phase[i] == BIDDING and s.landlord[i] >= 0:
                expected[s.landlord[i]] += prev.hole[i]  # bidding over: the hole joins the landlord
            np.testing.assert_array_equal(s.hands[i], expected)


@given(seeds, batches, rules_)
@SETTINGS
def test_rewards_are_zero_sum_and_follow_the_scoring(seed, num_games, rules):
    s = reset(seed, num_games, rules)
    for _, _, s in trajectory(seed, num_games, rules):
        assert (s.rewards.sum(axis=1) == 0).all()
    assert s.done.all() and (s.escaped == -1).all()
    assert (s.scores.sum(axis=1) == 0).all()
    for i in np.flatnonzero(~s.truncated):
        winner = int(np.flatnonzero(s.hands[i].sum(axis=1) == 0)[0])
        landlord = s.landlord[i]
        stake = int(s.base[i]) * int(s.multiplier[i])
        sign = 1 if winner == landlord else -1
        expected = [-sign * stake] * 3
        expected[landlord] = 2 * sign * stake
        assert s.scores[i].tolist() == expected
    assert (s.scores[s.truncated] == 0).all()


@given(seeds, batches, rules_)
@SETTINGS
def test_multiplier_counts_bombs_rocket_doubles_and_spring(seed, num_games, rules):
    for _, _, s in trajectory(seed, num_games, rules):
        bombs, rocket, doubles, plays = history_counts(s)
        assert (s.bombs == bombs).all() and (s.rocket == rocket).all()
        finished = s.done & ~s.truncated
        spring = np.full(num_games, NO_SPRING)
        if s.rules.spring:
            idx = np.arange(num_games)
            landlord_plays = plays[idx, s.landlord]
            landlord_won = s.hands[idx, s.landlord].sum(axis=1) == 0
            spring[finished & landlord_won & (plays.sum(axis=1) == landlord_plays)] = SPRING
            spring[finished & ~landlord_won & (landlord_plays == 1)] = REVERSE_SPRING
        assert (s.spring == spring).all()
        assert (s.multiplier == 2 ** (bombs + rocket + doubles + (spring != NO_SPRING))).all()


@given(seeds, batches, rules_)
@SETTINGS
def test_every_game_ends(seed, num_games, rules):
    s = final(seed, num_games, rules)  # trajectory() fails past the step bound
    assert s.done.all() and s.ended.any()
    assert (s.redeals <= s.rules.redeal_limit + s.truncated).all()


@given(seeds, batches)
@SETTINGS
def test_same_seed_same_games(seed, num_games):
    a, b = final(seed, num_games), final(seed, num_games)
    for name, value in state_fields(a).items():
        np.testing.assert_array_equal(value, getattr(b, name), err_msg=name)


@given(seeds, st.integers(1, 4), st.integers(1, 6), rules_)
@SETTINGS
def test_a_game_does_not_depend_on_its_batch(seed, small, extra, rules):
    def assert_prefix(s, big):
        for name, value in state_fields(s).items():
            np.testing.assert_array_equal(value, getattr(big, name)[:small], err_msg=name)

    s = reset(seed, small, rules)
    assert_prefix(s, reset(seed, small + extra, rules))
    for _, actions, big in trajectory(seed, small + extra, rules):
        s = step(s, actions[:small])
        assert_prefix(s, big)


@given(seeds, batches, rules_)
@SETTINGS
def test_auto_reset_deals_a_new_hand(seed, num_games, rules):
    for prev, actions, s in trajectory(seed, num_games, rules, auto_reset=True, steps=150):
        plain = step(prev, actions)
        assert not s.done.any()
        np.testing.assert_array_equal(s.ended, plain.done)
        np.testing.assert_array_equal(s.rewards, plain.rewards)
        for name, value in state_fields(s).items():  # games that did not end: as without auto_reset
            np.testing.assert_array_equal(value[~s.ended], getattr(plain, name)[~s.ended], err_msg=name)
        for i in np.flatnonzero(s.ended):
            assert s.episode[i] == prev.episode[i] + 1 and s.redeals[i] == 0
            assert s.first_bidder[i] == (prev.first_bidder[i] + 1) % 3
            assert s.history_len[i] == 0 and (s.scores[i] == 0).all()
            assert not np.array_equal(s.deal[i], prev.deal[i])
            if s.rules.bidding:
                assert s.phase[i] == BIDDING and s.to_act[i] == s.first_bidder[i]
                assert s.hands[i].sum(axis=1).tolist() == [17, 17, 17]
            else:
                assert s.phase[i] == PLAY and s.to_act[i] == s.landlord[i] and s.hands[i].sum() == 54


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**63 - 1), st.integers(1, 12))
def test_sample_bits_draws_the_kth_set_bit(seed, num_rows):
    """Uniform sampling from bitsets picks, per row, the k-th set id with k = floor(u * count)."""
    from doudizhu_env.legal import bits_to_ids, pack_bits, sample_bits

    gen = np.random.default_rng(seed)
    mask = gen.random((num_rows, 200)) < gen.choice([0.0, 0.01, 0.3, 1.0], size=(num_rows, 1))
    drawn = sample_bits(pack_bits(mask), np.random.default_rng(seed))
    u = np.random.default_rng(seed).random(num_rows)
    ids, offsets = bits_to_ids(pack_bits(mask))
    for i in range(num_rows):
        row = ids[offsets[i] : offsets[i + 1]]
        assert drawn[i] == (row[int(u[i] * len(row))] if len(row) else -1)


@pytest.mark.parametrize("rules", ["standard", "douzero"])
def test_deals_of_deals_the_same_hands_again(rules):
    """engine.deals_of: the deal of a state, mid-game too; reset with it gives the same cards."""
    state = engine.reset(5, 6, rules)
    rng = np.random.default_rng(1)
    for _ in range(12):  # into the play phase (and some games over)
        state = engine.step(state, engine.sample_legal(state, rng))
    again = engine.reset(0, 6, rules, deals=engine.deals_of(state))
    first = engine.reset(5, 6, rules)
    assert np.array_equal(again.hands, first.hands) and np.array_equal(again.hole, first.hole)
    assert np.array_equal(again.first_bidder, first.first_bidder)
    if rules == "douzero":
        assert np.array_equal(again.landlord, first.landlord)
