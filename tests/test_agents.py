"""Agents: RuleAgent legality and strength, decomposition, and the peer adapters (when installed)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from agents.registry import make_agent
from agents.rule import RuleAgent, bid_level, hand_cost, hand_strength
from doudizhu_arena.arena import run_arena
from doudizhu_env import Rules, engine, parse_hand
from doudizhu_env.observation import seat_view


def _cost(text: str) -> int:
    return hand_cost(tuple(int(x) for x in parse_hand(text)))


def test_hand_cost_decomposition():
    assert _cost("") == 0
    assert _cost("34567") == 1
    assert _cost("34567899") == 2  # sequence + single
    assert _cost("3456789TT") == 2
    assert _cost("333444") == 1
    assert _cost("3334445J") == 1  # plane with two kickers
    assert _cost("334455") == 1
    assert _cost("3335") == 1
    assert _cost("XD") == 1
    assert _cost("3579J") == 5


def test_bidding_strength_orders_hands():
    strong = hand_strength(parse_hand("XD22AAK3334445678"))
    weak = hand_strength(parse_hand("3345678899TTJQQKA"[:17]))
    assert strong > weak
    assert bid_level(strong) == 3


def test_rule_agent_plays_legally_in_every_phase():
    """Every action the agent picks passes the engine's legality check (step checks it)."""
    agent = RuleAgent()
    for rules in ("standard", "douzero"):
        state = engine.reset(11, 64, rules)
        rng = np.random.default_rng(0)
        while not state.done.all():
            live = np.flatnonzero(~state.done)
            actions = engine.sample_legal(state, rng)
            mine = live[state.to_act[live] == 0]
            if len(mine):
                actions[mine] = agent.act(seat_view(state, mine))
            state = engine.step(state, actions)


def test_rule_agent_beats_random_fixed_seeds():
    rules = Rules.preset("standard", bidding=False)
    rep = run_arena(["rule", "random", "random"], 60, rules, seed=2024, chunk_size=60)
    rule = rep["agents"]["rule"]
    assert rule["landlord"]["wp"]["mean"] > 0.8
    assert rule["farmer"]["wp"]["mean"] > 0.7
    assert rule["all"]["adp"]["mean"] > 0


def test_registry_rejects_unknown():
    assert make_agent("random").name == "random"
    with pytest.raises(ValueError):
        make_agent("nobody")


def test_rlcard_adapter_plays_legally_and_loses_to_rule():
    pytest.importorskip("rlcard")
    rep = run_arena(["rule", "rlcard", "rlcard"], 30, "standard", seed=7, chunk_size=30)
    assert rep["agents"]["rlcard"]["all"]["games"] == 30 * 3 * 2
    fixed = run_arena(["rlcard", "random", "random"], 30, Rules.preset("standard", bidding=False), seed=7)
    assert fixed["agents"]["rlcard"]["landlord"]["wp"]["mean"] > 0.6


def _douzero_card_list(counts) -> list[int]:
    """Our 15 rank counts -> DouZero's sorted card list (3..14, 17 for 2, 20 and 30 jokers)."""
    cards = [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17, 20, 30]
    return [cards[r] for r in range(15) for _ in range(int(counts[r]))]


def _douzero_infoset(state, i, legal, table):
    """DouZero's InfoSet of the seat to act in game ``i`` of a full (not blanked) state."""
    from douzero.env.game import InfoSet

    landlord, seat = int(state.landlord[i]), int(state.to_act[i])
    names = ("landlord", "landlord_down", "landlord_up")
    pos_of = {(landlord + k) % 3: p for k, p in enumerate(names)}
    info = InfoSet(pos_of[seat])
    info.player_hand_cards = _douzero_card_list(state.hands[i, seat])
    info.other_hand_cards = sorted(_douzero_card_list(state.hands[i, (seat + 1) % 3])
                                   + _douzero_card_list(state.hands[i, (seat + 2) % 3]))
    seq = [_douzero_card_list(table.counts[a]) for a in state.history[i, : state.history_len[i]]]
    who = state.history_seat[i, : state.history_len[i]]
    info.card_play_action_seq = seq
    info.last_move = (seq[-1] if seq[-1] else seq[-2]) if seq else []
    info.last_move_dict = {p: [] for p in names}
    for s, move in zip(who, seq, strict=True):
        info.last_move_dict[pos_of[int(s)]] = move
    info.played_cards = {pos_of[s]: _douzero_card_list(state.played[i, s]) for s in range(3)}
    info.num_cards_left_dict = {pos_of[s]: int(state.hands[i, s].sum()) for s in range(3)}
    info.bomb_num = int(state.bombs[i]) + int(state.rocket[i])
    info.legal_actions = [_douzero_card_list(table.counts[a]) if a else [] for a in legal]
    return info


def _douzero_models(monkeypatch):
    """``douzero.dmc.models``, loaded without ``douzero.dmc``'s package init (it needs GitPython)."""
    import importlib.util
    import sys
    import types

    spec = importlib.util.find_spec("douzero")
    if spec is None:
        pytest.skip("douzero is not installed")
    path = os.path.join(spec.submodule_search_locations[0], "dmc", "models.py")
    mod_spec = importlib.util.spec_from_file_location("douzero.dmc.models", path)
    models = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(models)
    monkeypatch.setitem(sys.modules, "douzero.dmc", types.ModuleType("douzero.dmc"))
    monkeypatch.setitem(sys.modules, "douzero.dmc.models", models)
    return models


def test_douzero_loader_matches_douzero_agent(tmp_path, monkeypatch):
    """A random DouZero model saved in its format picks the same moves through both paths."""
    torch = pytest.importorskip("torch")
    models = _douzero_models(monkeypatch)
    from douzero.evaluation.deep_agent import DeepAgent

    from agents.douzero_adapter import DouZeroAgent
    from doudizhu_env import action_table

    torch.manual_seed(0)
    for pos, cls in models.model_dict.items():
        torch.save(cls().state_dict(), tmp_path / f"{pos}.ckpt")
    ours = DouZeroAgent.load(str(tmp_path))
    theirs = {p: DeepAgent(p, str(tmp_path / f"{p}.ckpt")) for p in models.model_dict}
    table = action_table("douzero")
    state = engine.reset(3, 3, "douzero")
    rng = np.random.default_rng(1)
    checked = 0
    while not state.done.all():
        live = np.flatnonzero(~state.done)
        ids, offsets = engine.legal_actions(state)
        mine = ours.act(seat_view(state, live))
        for k, i in enumerate(live):
            legal = ids[offsets[i] : offsets[i + 1]]
            info = _douzero_infoset(state, i, legal, table)
            move = theirs[info.player_position].act(info)
            assert sorted(move) == _douzero_card_list(table.counts[mine[k]] * (mine[k] > 0))
            checked += 1
        actions = engine.sample_legal(state, rng)
        state = engine.step(state, actions)
    assert checked > 50


def test_random_agent_is_the_env_layers_random_policy():
    """One random player: ``RandomAgent`` is ``engine.RandomPolicy`` with seed 0 by default, and draws
    exactly ``engine.sample_legal`` from ``default_rng(seed)`` (as before the two were merged)."""
    from agents.base import Agent, RandomAgent

    state = engine.reset(3, 64)
    agent = RandomAgent()
    assert isinstance(agent, engine.RandomPolicy) and isinstance(agent, Agent) and agent.name == "random"
    # an agent that may be subclassed is driven like any other; the env's own random player is not
    assert agent.needs_view and not agent.legal_by_construction and agent.act_game is None
    assert not engine.RandomPolicy.needs_view and engine.RandomPolicy.legal_by_construction
    rng = np.random.default_rng(0)
    for _ in range(5):  # the same stream across calls
        expected = engine.sample_legal(state, rng)
        assert (agent.act(state) == expected).all()
        state = engine.step(state, expected)
    assert (RandomAgent(7).act(state) == engine.RandomPolicy(7).act(state)).all()
    assert make_agent("random", Rules(), 5).act(state).tolist() == RandomAgent(5).act(state).tolist()
