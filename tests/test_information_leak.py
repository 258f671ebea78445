"""No observation leaks hidden cards.

For random positions of random games, in every phase and for every observer
seat, the cards the observer cannot see (the two other hands, and the hole
cards while bidding) are redistributed at random between their places,
keeping every count and the public history, and keeping the cards the
observer *knows* to be in the landlord's hand (the shown hole cards it has
not played yet) where they are. The shuffle key and the dealt card ids are
replaced to match. The observer's observation vector and its seat view must
not change at all.
"""

import dataclasses

import numpy as np
import pytest
from helpers import random_states, state_fields

from doudizhu_env import engine, format_hand
from doudizhu_env.cards import NUM_RANKS
from doudizhu_env.observation import observe, seat_view

PHASES = (engine.BIDDING, engine.DOUBLING, engine.PLAY, engine.OVER)
PER_PHASE = 40


def random_positions(rules, seed, num_games=48):
    """Snapshots of random games at every step, then up to PER_PHASE (snapshot, game) per phase."""
    rng = np.random.default_rng(seed)
    snapshots = list(random_states(rules, rng, num_games))
    positions = []
    for phase in PHASES:
        pairs = [(t, g) for t, s in enumerate(snapshots) for g in np.flatnonzero(s.phase == phase)]
        if not pairs:
            continue
        for k in rng.choice(len(pairs), size=min(PER_PHASE, len(pairs)), replace=False):
            t, g = pairs[k]
            positions.append(engine.take(snapshots[t], [g]))
    return positions


def swap_hidden(state, observer, rng):
    """``state`` (one game) with the cards ``observer`` cannot see redistributed at random."""
    q, r = (observer + 1) % 3, (observer + 2) % 3
    hands = state.hands[0].astype(np.int64)
    hole = state.hole[0].astype(np.int64)
    played = state.played[0].astype(np.int64)
    landlord = int(state.landlord[0])
    shown = landlord >= 0
    known = np.zeros((3, NUM_RANKS), np.int64)  # cards the observer can place in a hidden hand
    if shown:
        known[landlord] = np.maximum(hole - played[landlord], 0)
    pool = hands[q] + hands[r] - known[q] - known[r] + (0 if shown else hole)
    sizes = [hands[q].sum() - known[q].sum(), hands[r].sum() - known[r].sum()]
    cards = rng.permutation(np.repeat(np.arange(NUM_RANKS), pool))
    new = hands.copy()
    new[q] = known[q] + np.bincount(cards[: sizes[0]], minlength=NUM_RANKS)
    new[r] = known[r] + np.bincount(cards[sizes[0] : sizes[0] + sizes[1]], minlength=NUM_RANKS)
    new_hole = hole if shown else np.bincount(cards[sizes[0] + sizes[1] :], minlength=NUM_RANKS)
    # the dealt cards consistent with the new hands: what each seat holds and played, minus taken hole cards
    dealt = new + played
    if shown:
        dealt[landlord] -= new_hole
    deal = engine.deal_from_cards(engine.Deal(tuple(format_hand(c) for c in dealt), format_hand(new_hole)))
    return dataclasses.replace(
        state,
        hands=new[None].astype(np.int8),
        hole=new_hole[None].astype(np.int8),
        deal=deal[None],
        key=rng.integers(0, 2**63 - 1, size=1, dtype=np.int64).astype(np.uint64),
    )


@pytest.mark.parametrize("rules", ["standard", "douzero"])
def test_swapping_hidden_cards_changes_no_observation(rules):
    rng = np.random.default_rng(123)
    positions = random_positions(rules, seed=7)
    phases_seen = {int(p.phase[0]) for p in positions}
    assert phases_seen == ({engine.PLAY, engine.OVER} if rules == "douzero" else set(PHASES))
    changed = checks = 0
    for state in positions:
        for observer in range(3):
            seats = np.array([observer])
            obs = observe(state, seats)
            view = state_fields(seat_view(state, seats=seats))
            for _ in range(2):
                other = swap_hidden(state, observer, rng)
                assert other.hands.sum() == state.hands.sum()
                changed += not np.array_equal(other.hands, state.hands)
                checks += 1
                np.testing.assert_array_equal(observe(other, seats), obs, err_msg=f"phase {state.phase[0]}")
                for name, value in state_fields(seat_view(other, seats=seats)).items():
                    np.testing.assert_array_equal(value, view[name], err_msg=name)
    assert changed > checks // 2  # the swaps were not vacuous


@pytest.mark.parametrize("rules", ["standard", "douzero"])
def test_seat_view_holds_only_the_observers_cards(rules):
    for state in random_positions(rules, seed=3):
        for observer in range(3):
            view = seat_view(state, seats=np.array([observer]))
            others = [s for s in range(3) if s != observer]
            assert not view.hands[0, others].any()
            np.testing.assert_array_equal(view.hands[0, observer], state.hands[0, observer])
            assert np.all(view.deal == -1) and not view.key.any()
            if state.landlord[0] < 0:
                assert not view.hole.any()
            else:
                np.testing.assert_array_equal(view.hole, state.hole)
        # the acting seat's legal actions are the same from its view
        if not state.done[0]:
            np.testing.assert_array_equal(engine.legal_action_mask(seat_view(state)),
                                          engine.legal_action_mask(state))


def test_observation_of_the_acting_seat_is_the_default():
    for state in random_positions("standard", seed=5)[:20]:
        np.testing.assert_array_equal(observe(state), observe(state, state.to_act))
