"""Property-based tests over hands, deals, moves and records (``tests/strategies.py``), and a stateful
test driving the PettingZoo env and the batched engine side by side."""

from __future__ import annotations

import importlib.util
import json
import unittest

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from strategies import deals, game_records, hands, moves

from doudizhu_env import engine
from doudizhu_env.actions import action_table
from doudizhu_env.cards import DECK_COUNTS, format_hand, parse_hand
from doudizhu_env.engine import IllegalActionError
from doudizhu_env.moves import classify, legal_moves
from doudizhu_env.observation import observe
from doudizhu_env.records import check_record, replay
from doudizhu_env.rewards import shape_reward

QUICK = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@QUICK
@given(hands())
def test_a_hand_reads_back_as_written(hand):
    counts = parse_hand(hand)
    assert format_hand(counts) == hand and (counts <= DECK_COUNTS).all()


@QUICK
@given(st.data())
def test_a_legal_move_is_cards_of_the_hand_and_one_combination(data):
    hand = data.draw(hands(min_size=1))
    move = data.draw(moves(hand))
    table = action_table("standard")
    cards = table.counts[table.index(move)]
    assert (cards <= parse_hand(hand)).all() and cards.sum() > 0
    assert move in [a.name for a in classify(format_hand(cards))]
    # following it with the cards left: pass first, then only combinations that beat it (not itself)
    left = format_hand(parse_hand(hand) - cards)
    follows = legal_moves(left, move)
    assert follows[0] == "pass" and move not in follows


@QUICK
@given(deals(landlord=True), st.sampled_from(["standard", "douzero"]))
def test_a_deal_is_dealt_as_given(deal, rules):
    state = engine.reset(0, 1, rules, deals=[deal])
    for seat in range(3):
        dealt = state.hands[0, seat] - (parse_hand(deal.hole) if state.landlord[0] == seat else 0)
        assert format_hand(dealt) == deal.hands[seat]
    assert state.hands[0].sum() == 54 - (0 if state.landlord[0] >= 0 else 3)
    if rules == "douzero":
        assert state.landlord[0] == deal.landlord


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_records())
def test_a_record_survives_json_and_replays_to_its_result(rec):
    again = json.loads(json.dumps(rec))
    check_record(again)
    final = replay(again)
    assert final.done[0] and list(final.scores[0]) == rec["result"]["scores"]
    assert sum(rec["result"]["scores"]) == 0


# ------------------------------------------------------------------ the AEC env and the engine, side by side


class EnvAgainstEngine(RuleBasedStateMachine):
    """The PettingZoo env (one game, the single-game path) and the batched engine at B = 1, dealt
    the same cards and given the same actions, legal and illegal, must agree on every seat's
    observation, the mask, the seat to act and the result; escape ends the engine's hand as the
    rules say; reset deals both again."""

    def __init__(self):
        super().__init__()
        from doudizhu_env.aec import raw_env

        self.env = raw_env()
        self.state = None

    def deal_both(self, deal, seed):
        self.env.reset(seed=seed, options={"deal": deal})
        self.state = engine.reset(np.random.default_rng(seed), 1, "standard", deals=[deal])

    @initialize(deal=deals(), seed=st.integers(0, 2**16))
    def start(self, deal, seed):
        self.deal_both(deal, seed)

    @rule(deal=deals(), seed=st.integers(0, 2**16))
    def reset(self, deal, seed):
        self.deal_both(deal, seed)

    @precondition(lambda self: not self.state.done[0])
    @rule(data=st.data())
    def legal_action(self, data):
        action = data.draw(st.sampled_from(engine.legal_actions(self.state)[0].tolist()))
        self.env.step(action)
        self.state = engine.step(self.state, np.array([action]))

    @precondition(lambda self: not self.state.done[0])
    @rule(data=st.data())
    def illegal_action(self, data):
        mask = engine.legal_action_mask(self.state)[0]
        illegal = np.flatnonzero(~mask).tolist()
        action = data.draw(st.sampled_from(illegal) | st.sampled_from([-1, len(mask), 1.5, True, "3"]))
        before = [self.env.observe(a)["observation"].copy() for a in self.env.possible_agents]
        with pytest.raises(IllegalActionError):
            self.env.step(action)
        if isinstance(action, int) and not isinstance(action, bool) and 0 <= action < len(mask):
            with pytest.raises(IllegalActionError):
                engine.step(self.state, np.array([action]))
        after = [self.env.observe(a)["observation"] for a in self.env.possible_agents]
        assert all((b == a).all() for b, a in zip(before, after, strict=True))

    @precondition(lambda self: not self.state.done[0])
    @rule(seat=st.integers(0, 2), deal=deals(), seed=st.integers(0, 2**16))
    def escape_then_deal_again(self, seat, deal, seed):
        before = self.state
        state = engine.escape(before, np.array([seat]))
        # the rule: -3 x base x multiplier for the seat that leaves (-3 before any bid), 0 for the others
        stake = 3 * int(before.base[0]) * int(before.multiplier[0]) if before.base[0] > 0 else 3
        expected = [0, 0, 0]
        expected[seat] = -stake
        assert state.done[0] and list(state.scores[0]) == expected
        self.deal_both(deal, seed)

    @invariant()
    def they_agree(self):
        env, state = self.env, self.state
        if state is None:
            return
        for seat, agent in enumerate(env.possible_agents):
            np.testing.assert_array_equal(env.observe(agent)["observation"], observe(state, seat)[0])
        if state.done[0]:
            assert all(env.terminations.values()) or all(env.truncations.values())
            for seat, agent in enumerate(env.possible_agents):
                assert env.rewards[agent] == float(shape_reward(state.scores[0, seat], env.reward_kind))
        else:
            assert env.agent_selection == env.possible_agents[int(state.to_act[0])]
            mask = env.observe(env.agent_selection)["action_mask"].astype(bool)
            np.testing.assert_array_equal(mask, engine.legal_action_mask(state)[0])


EnvAgainstEngine.TestCase.settings = settings(max_examples=12, stateful_step_count=40, deadline=None,
                                              suppress_health_check=[HealthCheck.too_slow])
TestEnvAgainstEngine = unittest.skipIf(importlib.util.find_spec("pettingzoo") is None,
                                       "the PettingZoo env needs the extra env (pettingzoo)")(
    EnvAgainstEngine.TestCase)
