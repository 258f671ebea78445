"""One contract for what a seat sees: the observation of a seat view is the observation of the state.

Agents in the arena and the Gymnasium opponents are given seat views
(:func:`doudizhu_env.observation.seat_view`: the other hands blanked), while
self-play actors observe full states. Both must give the same vectors, or a
model is evaluated on inputs it never trained on.
"""

import dataclasses

import numpy as np
import pytest
import torch
from helpers import random_states

from agents.dmc import DMCAgent, ModelConfig, ScoreModel
from doudizhu_env import engine
from doudizhu_env.observation import cards_left, observe, seat_view
from doudizhu_env.rules import Rules

CASES = [("standard", True), ("standard", False), ("douzero", True), ("douzero", False)]


def rules_of(preset: str, bidding: bool) -> Rules:
    return dataclasses.replace(Rules.preset(preset), bidding=bidding)


def random_play(rules: Rules, seed: int, num_games: int = 64, steps: int = 400):
    """Every state of ``num_games`` random games stepped ``steps`` times (auto-reset)."""
    return random_states(rules, np.random.default_rng(seed), num_games, steps, auto_reset=True)


@pytest.mark.parametrize(("preset", "bidding"), CASES)
def test_observe_of_a_seat_view_equals_observe_of_the_state(preset, bidding):
    rules = rules_of(preset, bidding)
    checked, phases = 0, set()
    for t, state in enumerate(random_play(rules, seed=len(preset) + bidding)):
        if t % 4:
            continue
        phases |= set(np.unique(state.phase).tolist())
        for k in range(3):
            seats = np.full(state.num_games, k)
            view = seat_view(state, seats=seats)
            np.testing.assert_array_equal(observe(view, seats), observe(state, seats))
            checked += state.num_games
    assert checked >= 10_000
    expected = {engine.PLAY} | ({engine.BIDDING} if bidding else set())
    expected |= {engine.DOUBLING} if rules.doubling else set()
    assert expected <= phases


@pytest.mark.parametrize(("preset", "bidding"), CASES)
def test_cards_left_counts_the_hands_from_public_facts(preset, bidding):
    for state in random_play(rules_of(preset, bidding), seed=7, num_games=32, steps=200):
        np.testing.assert_array_equal(cards_left(state), state.hands.sum(axis=2))


@pytest.mark.parametrize(("preset", "bidding"), CASES)
def test_a_model_picks_the_same_actions_from_the_state_and_from_the_view(preset, bidding):
    rules = rules_of(preset, bidding)
    torch.manual_seed(0)
    model = ScoreModel(rules, ModelConfig(hidden=32, lstm_hidden=16, action_hidden=16, head_hidden=32))
    agent = DMCAgent(model)  # greedy
    decided = 0
    for t, state in enumerate(random_play(rules, seed=3, num_games=32, steps=240)):
        if t % 3:
            continue
        live = np.flatnonzero(~state.done)
        from_state = agent.decide(state)[0][live]
        from_view = agent.act(seat_view(state, live))
        np.testing.assert_array_equal(from_state, from_view)
        decided += len(live)
    assert decided >= 2000
