"""The vectorized engine against the scalar reference (``tests/reference_game.py``), step for step.

Batches of random seeded games are stepped with random legal actions; each
game has a :class:`ReferenceGame` built from the engine's deal. At every step
the legal actions (dense mask, sparse ids, ``is_legal``) and the public state
must agree; at the end of each hand the rewards, scores, multiplier and spring.
Every batch plays two hands per game: the second after ``reset_done``.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import sweep
from reference_game import (
    HAND_SIZE,
    NUM_RANKS,
    ReferenceGame,
    catalog,
    held_combinations,
    held_combinations_brute,
)

from doudizhu_env import engine
from doudizhu_env.actions import BID0, PASS, action_table
from doudizhu_env.rules import Rules

BATCH = 256
SPRING_CODE = {(False, False): engine.NO_SPRING, (True, False): engine.SPRING,
               (False, True): engine.REVERSE_SPRING}


# ----------------------------------------------------------------------------
# Building references from the engine's deal
# ----------------------------------------------------------------------------


def card_rank(card: int) -> int:
    """Card ids (cards.py): 4 * rank + suit for 3..2, 52 the small joker, 53 the big one."""
    return card // 4 if card < 52 else 13 + (card - 52)


def dealt_counts(deal_row: np.ndarray) -> tuple[list[list[int]], list[int]]:
    """Three hands and the hole (15 counts each) of one game's 54 dealt card ids."""
    parts = [[0] * NUM_RANKS for _ in range(4)]
    for pos, card in enumerate(deal_row.tolist()):
        parts[min(pos // HAND_SIZE, 3)][card_rank(card)] += 1
    return parts[:3], parts[3]


def references(state: engine.State) -> list[ReferenceGame]:
    """One reference per game, from the engine's initial deal (and its drawn landlord without bidding)."""
    refs = []
    for i in range(state.num_games):
        hands, hole = dealt_counts(state.deal[i])
        landlord = None if state.rules.bidding else int(state.landlord[i])
        refs.append(ReferenceGame(state.rules, hands, hole, int(state.first_bidder[i]), landlord))
    return refs


# ----------------------------------------------------------------------------
# Comparison
# ----------------------------------------------------------------------------


def describe(state: engine.State, i: int, seed) -> str:
    """Enough to replay game ``i``: the batch seed and the action names of the hand so far."""
    n = int(state.history_len[i])
    names = action_table(state.rules).names
    moves = [names[int(a)] for a in state.history[i, :n]]
    return (f"seed={seed} game={i} episode={int(state.episode[i])} redeals={int(state.redeals[i])} "
            f"moves={moves}")


def compare_state(state: engine.State, ref: ReferenceGame, i: int) -> None:
    """The public state of game ``i`` equals the reference's."""
    assert engine.PHASE_NAMES[state.phase[i]] == ref.phase
    assert bool(state.done[i]) == ref.done
    assert bool(state.truncated[i]) == ref.truncated
    assert int(state.redeals[i]) == ref.redeals
    assert int(state.first_bidder[i]) == ref.first_bidder
    assert state.hands[i].tolist() == ref.hands
    assert state.hole[i].tolist() == ref.hole
    assert state.bids[i].tolist() == ref.bids
    assert int(state.base[i]) == ref.base
    assert int(state.landlord[i]) == ref.landlord
    assert state.doubles[i].tolist() == ref.doubles
    assert state.played[i].tolist() == ref.played
    assert state.num_plays[i].tolist() == ref.num_plays
    assert int(state.bombs[i]) == ref.bombs
    assert bool(state.rocket[i]) == ref.rocket
    assert int(state.multiplier[i]) == ref.multiplier
    assert state.rewards[i].tolist() == ref.rewards
    assert state.scores[i].tolist() == ref.scores
    if not ref.done:
        assert int(state.to_act[i]) == ref.to_act
        assert int(state.to_beat[i]) == ref.to_beat
    if ref.done and not ref.truncated:
        assert int(state.spring[i]) == SPRING_CODE[ref.spring, ref.reverse_spring]
        assert sum(ref.scores) == 0


def compare_legal(state: engine.State, refs: list[ReferenceGame], rng: np.random.Generator) -> None:
    """Dense mask == reference sets; sparse ids == mask; ``is_legal`` == mask (legal and random ids)."""
    mask = engine.legal_action_mask(state)
    ids, offsets = engine.legal_actions(state)
    for i, ref in enumerate(refs):
        dense = np.flatnonzero(mask[i])
        assert set(dense.tolist()) == ref.legal_actions(), f"game {i}: legal sets differ"
        assert np.array_equal(ids[offsets[i]:offsets[i + 1]], dense), f"game {i}: sparse != dense"
    num = mask.shape[1]
    probes = [engine.sample_legal(state, rng), rng.integers(-2, num + 2, size=state.num_games),
              rng.integers(0, 7, size=state.num_games)]
    rows = np.arange(state.num_games)
    for actions in probes:
        in_range = (actions >= 0) & (actions < num)
        expected = in_range & mask[rows, np.clip(actions, 0, num - 1)]
        assert np.array_equal(engine.is_legal(state, actions), expected), "is_legal disagrees with the mask"


def compare_all(state, refs, rng, seed) -> None:
    """Every comparison; a failure names the first disagreeing game and its moves."""
    try:
        compare_legal(state, refs, rng)
        for i, ref in enumerate(refs):
            compare_state(state, ref, i)
    except AssertionError as err:
        bad = next((i for i, ref in enumerate(refs) if not _agrees(state, ref, i)), None)
        where = describe(state, bad, seed) if bad is not None else f"seed={seed}"
        raise AssertionError(f"{where}: {err}") from err


def _agrees(state, ref, i) -> bool:
    """Does game ``i`` pass every per-game comparison?"""
    try:
        compare_state(state, ref, i)
        mask = engine.legal_action_mask(state)[i]
        return set(np.flatnonzero(mask).tolist()) == ref.legal_actions()
    except AssertionError:
        return False


# ----------------------------------------------------------------------------
# Driving a batch
# ----------------------------------------------------------------------------


def spring_seeking_policy(state, rng):
    """Random legal actions, but in a quarter of the games the farmers always pass when following
    (the landlord springs), and in another quarter the landlord does (reverse springs happen).
    """
    actions = engine.sample_legal(state, rng)
    mode = state.key % np.uint64(4)  # fixed per game
    following = (state.phase == engine.PLAY) & ~state.leading
    is_landlord = state.to_act == state.landlord
    passive = ((mode == 1) & ~is_landlord) | ((mode == 2) & is_landlord)
    return np.where(following & passive, PASS, actions)


def make_bid_policy(pass_prob: float):
    """Random legal actions, except that each bid is a pass with probability ``pass_prob``."""

    def policy(state, rng):
        actions = engine.sample_legal(state, rng)
        passing = (state.phase == engine.BIDDING) & (rng.random(state.num_games) < pass_prob)
        return np.where(passing, BID0, actions)

    return policy


def play_hand(state, refs, rng, policy, seed) -> tuple[engine.State, int]:
    """Step every game until its hand is over, comparing with the references; returns the steps made."""
    steps = 0
    compare_all(state, refs, rng, seed)
    while not state.done.all():
        actions = policy(state, rng)
        state = engine.step(state, actions)
        steps += int((~state.done).sum() + state.ended.sum())
        for i, ref in enumerate(refs):
            if ref.done:
                ref.rewards = [0, 0, 0]  # the engine leaves games over untouched, rewards zeroed
                assert not state.ended[i]
                continue
            ref.step(int(actions[i]))
            assert bool(state.ended[i]) == ref.done, describe(state, i, seed)
            if ref.needs_redeal:
                hands, hole = dealt_counts(state.deal[i])
                ref.redeal(hands, hole, int(state.first_bidder[i]))
        compare_all(state, refs, rng, seed)
    return state, steps


def next_hand(state: engine.State) -> engine.State:
    """``reset_done``: a new deal for every game, next episode, first bidder one seat on, no redeals."""
    new = engine.reset_done(state)
    assert np.array_equal(new.episode, state.episode + 1)
    assert np.array_equal(new.first_bidder, (state.first_bidder + 1) % 3)
    assert np.array_equal(new.rewards, state.rewards) and np.array_equal(new.ended, state.ended)
    assert not new.redeals.any() and not new.done.any() and not new.truncated.any()
    assert (new.phase == (engine.BIDDING if state.rules.bidding else engine.DOUBLING if
                          state.rules.doubling else engine.PLAY)).all()
    return new


def run_batch(rules: Rules, seed: int, policy, hands: int = 2, batch: int = BATCH) -> dict:
    """``hands`` hands in each of ``batch`` games; returns counts for the summary."""
    rng = np.random.default_rng(seed)
    state = engine.reset(rng, batch, rules)
    stats = {"games": 0, "steps": 0, "truncated": 0, "redeals": 0, "redealt_then_played": 0,
             "springs": 0, "reverse_springs": 0}
    refs: list[ReferenceGame] = []
    for hand in range(hands):
        if hand:
            state = next_hand(state)
        last_rewards = [ref.rewards for ref in refs]
        refs = references(state)
        for ref, rewards in zip(refs, last_rewards, strict=False):
            ref.rewards = rewards  # reset_done keeps the rewards of the step that ended the hand
        state, steps = play_hand(state, refs, rng, policy, seed)
        stats["games"] += batch
        stats["steps"] += steps
        stats["truncated"] += int(state.truncated.sum())
        stats["redeals"] += int(state.redeals.sum())
        stats["redealt_then_played"] += int(((state.redeals > 0) & ~state.truncated).sum())
        stats["springs"] += int((state.spring == engine.SPRING).sum())
        stats["reverse_springs"] += int((state.spring == engine.REVERSE_SPRING).sum())
    return stats


# ----------------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------------


def test_pass_is_legal_when_following():
    """docs/rules.md, step 5 (Play): every turn but the leader's may pass. The mask must hold
``pass`` as is_legal does.

    Regression found by the reference comparison (the mask lacked ``pass`` on every follow turn, and
    was empty when nothing beat the table): after the landlord (seat 2) leads ``AAAA+3+X``, seat 0
    cannot beat it, so its only legal action is ``pass``.
    """
    table = action_table("standard")
    deal = engine.Deal(("44555667799TTJJQK", "3334467889JJQQK22", "357889TTQKAAA22XD"), "6KA", 2)
    state = engine.reset(0, 1, "standard", deals=[deal])
    for move in ["bid3", "no_double", "no_double", "AAAA+3+X"]:
        state = engine.step(state, np.array([table.index(move)]))
    assert engine.is_legal(state, np.array([PASS]))[0]
    assert engine.legal_action_mask(state)[0].tolist() == [a == PASS for a in range(len(table))]
    ids, offsets = engine.legal_actions(state)
    assert ids.tolist() == [PASS]


# 256 games of two hands per seed; make test runs the first seed of each preset, make test-slow the rest
@pytest.mark.parametrize("seed", sweep([11, 12, 13, 14, 15, 16], default=1))
def test_standard_matches_reference(seed):
    stats = run_batch(Rules.preset("standard"), seed, spring_seeking_policy)
    assert stats["springs"] > 0 and stats["reverse_springs"] > 0


@pytest.mark.parametrize("seed", sweep([21, 22, 23, 24, 25], default=1))
def test_douzero_matches_reference(seed):
    stats = run_batch(Rules.preset("douzero"), seed, spring_seeking_policy)
    assert stats["redeals"] == 0 and stats["springs"] == 0


@pytest.mark.parametrize("preset, overrides", [
    ("standard", {"rocket_as_kickers": False, "doubling": False}),
    ("douzero", {"doubling": True, "spring": True}),
])
def test_other_configurations_match_reference(preset, overrides):
    """Flags switched away from the presets (the reference reads them all from ``rules``)."""
    run_batch(Rules.preset(preset, **overrides), 51, spring_seeking_policy, batch=128)


def test_redeals_then_truncation_when_nobody_bids():
    """Always passing: each game redeals once (redeal_limit=1), then is truncated with 0 points."""
    rules = Rules.preset("standard", redeal_limit=1)
    stats = run_batch(rules, 31, make_bid_policy(1.0), hands=1)
    assert stats["truncated"] == BATCH
    assert stats["redeals"] == 2 * BATCH


@pytest.mark.parametrize("limit", [0, 2])
def test_redeals_mixed_with_play(limit):
    """Mostly passing: some games are truncated, and (with a bound above 0) some redeal and then play."""
    rules = Rules.preset("standard", redeal_limit=limit)
    stats = run_batch(rules, 40 + limit, make_bid_policy(0.75), batch=128)
    assert 0 < stats["truncated"] < stats["games"]
    assert (stats["redealt_then_played"] > 0) == (limit > 0)


@pytest.mark.parametrize("preset", ["standard", "douzero"])
def test_reference_body_index_equals_brute_force(preset):
    """The reference's fast 'holds' (body, then kickers) equals the plainest loop over every id."""
    cat = catalog(Rules.preset(preset))
    rng = np.random.default_rng(5)
    for _ in range(20):
        deck = np.repeat(np.arange(NUM_RANKS), [4] * 13 + [1, 1])
        size = int(rng.integers(1, 21))
        hand = np.bincount(rng.choice(deck, size, replace=False), minlength=NUM_RANKS).tolist()
        assert held_combinations(cat, hand) == held_combinations_brute(cat, hand)
