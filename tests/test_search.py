"""The search agent (agents/search.py): worlds agree with the view, the replay reproduces the history,
no peeking, determinism, full games in the arena, and clear errors for bad specs and budgets."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import DOUZERO, STANDARD

from agents.base import RandomAgent
from agents.registry import make_agent
from agents.rule import RuleAgent
from agents.search import (
    FIRST_ROUND,
    SearchAgent,
    SearchConfig,
    choose_candidates,
    dealt_states,
    hidden_cards,
    opening_states,
    parse_spec,
    replay_mismatches,
    rollout_values,
    sample_worlds,
    with_hands,
)
from doudizhu_arena.arena import run_arena
from doudizhu_env import engine
from doudizhu_env.actions import action_table
from doudizhu_env.cards import DECK_COUNTS
from doudizhu_env.driver import play_out
from doudizhu_env.engine import PLAY
from doudizhu_env.observation import cards_left, seat_view

TINY = SearchConfig(worlds=2, candidates=3, samples=4)


def play_positions(rules, seed: int, num_games: int = 48, agents=None, every: int = 1):
    """Full states (play phase, the seat to act has a choice) of games played by ``agents`` per seat."""
    agents = agents or [RandomAgent(seed)] * 3
    state = engine.reset(np.random.default_rng(seed), num_games, rules)
    out, t = [], 0
    while not state.done.all():
        live = ~state.done
        actions = np.zeros(state.num_games, np.int64)
        for seat in range(3):
            games = np.flatnonzero(live & (state.to_act == seat))
            if len(games):
                actions[games] = agents[seat].act(seat_view(state, games))
        if t % every == 0:
            ids, offsets = engine.legal_actions(state)
            pick = np.flatnonzero((state.phase == PLAY) & (np.diff(offsets) > 1))
            if len(pick):
                out.append(engine.take(state, pick))
        state = engine.step(state, actions)
        t += 1
    return out


# ----------------------------------------------------------------------------
# worlds
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("rules", [STANDARD, DOUZERO], ids=["standard", "douzero"])
def test_worlds_agree_with_the_view(rules):
    """Own hand kept; every seat holds its cards left; nothing played twice or missing; the landlord
    holds the hole cards it has not played; over thousands of random positions."""
    rng = np.random.default_rng(1)
    checked = 0
    for state in play_positions(rules, seed=3, num_games=64):
        view = seat_view(state)
        hands = sample_worlds(view, 8, rng).astype(np.int64)
        n, seat = view.num_games, view.to_act.astype(np.int64)
        assert hands.shape == (n, 8, 3, 15) and hands.min() >= 0
        own = view.hands[np.arange(n), seat]
        assert np.array_equal(hands[np.arange(n), :, seat], np.repeat(own[:, None], 8, 1))
        assert np.array_equal(hands.sum(axis=3), np.repeat(cards_left(view)[:, None], 8, 1))
        total = hands.sum(axis=2) + view.played.sum(axis=1)[:, None].astype(np.int64)
        assert np.array_equal(total, np.broadcast_to(DECK_COUNTS, total.shape))
        lord = view.landlord.astype(np.int64)
        unplayed_hole = np.maximum(view.hole - view.played[np.arange(n), lord], 0)
        assert np.all(hands[np.arange(n), :, lord] >= unplayed_hole[:, None])
        checked += n * 8
    assert checked > 5000


def test_worlds_are_uniform_splits():
    """A card of the pool lands in a hidden seat in proportion to that seat's share of the pool."""
    for state in play_positions(STANDARD, seed=5, num_games=4)[::9]:
        view = engine.take(seat_view(state), [0])
        pool, forced, need = hidden_cards(view)
        hands = sample_worlds(view, 4000, np.random.default_rng(0)).astype(np.int64)
        first = (int(view.to_act[0]) + 1) % 3
        share = hands[0, :, first].mean(axis=0) - forced[0, first]
        np.testing.assert_allclose(share, pool[0] * need[0, first] / need[0].sum(), atol=0.06)


def test_sampling_needs_a_landlord():
    state = engine.reset(0, 2, STANDARD)
    with pytest.raises(ValueError, match="play phase"):
        sample_worlds(seat_view(state), 4, np.random.default_rng(0))


# ----------------------------------------------------------------------------
# inference: the replay
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("rules", [STANDARD, DOUZERO], ids=["standard", "douzero"])
def test_the_true_world_replays_with_no_mismatch(rules):
    """Replaying the real hands under the agents that really played reproduces every move."""
    rule = RuleAgent()
    for state in play_positions(rules, seed=11, num_games=32, agents=[rule] * 3, every=7):
        wrong = replay_mismatches(state, state.to_act.astype(np.int64), [rule] * 3)
        assert not wrong.any()


@pytest.mark.parametrize("rules", [STANDARD, dataclasses.replace(STANDARD, bidding=False), DOUZERO],
                         ids=["bidding", "fixed-landlord", "douzero"])
def test_the_true_world_replays_from_its_deal_with_no_mismatch(rules):
    """From the deal: the rule agent's bids, doublings and plays are all reproduced on the real hands."""
    rule = RuleAgent()
    checked = 0
    for state in play_positions(rules, seed=15, num_games=24, agents=[rule] * 3, every=5):
        wrong = replay_mismatches(state, state.to_act.astype(np.int64), [rule] * 3, start="deal")
        assert not wrong.any()
        dealt = dealt_states(state)
        assert np.array_equal(dealt.hands.astype(np.int64).sum(axis=(1, 2)),
                              np.full(state.num_games, 51 if rules.bidding else 54))
        checked += state.num_games
    assert checked > 50


@pytest.mark.slow  # hundreds of worlds replayed from the deal: make test-slow
def test_inference_over_bids_sees_a_strong_bidder():
    """A seat that bid 3 holds a strong hand: worlds kept by inference=all give it more control cards
    than uniform worlds do."""
    rule = RuleAgent()
    first = engine.reset(np.random.default_rng(16), 300, STANDARD)
    while np.any((first.phase != PLAY) & ~first.done) or np.any(first.history_len[~first.done] <= 3):
        first = engine.step(first, rule.act(first))  # to the first farmer's first play decision
    bid3 = np.flatnonzero((first.bids.max(axis=1) == 3) & (first.to_act != first.landlord) & ~first.done)
    assert len(bid3) >= 5
    view = engine.take(seat_view(first), bid3)
    lord = view.landlord.astype(np.int64)
    control = slice(12, 15)  # 2s and jokers
    kept = SearchAgent(rule, SearchConfig(worlds=8, samples=64, inference="all"), seed=0)._worlds(view)
    uniform = SearchAgent(rule, SearchConfig(worlds=8, samples=64, inference="none"), seed=0)._worlds(view)
    rows = np.arange(len(bid3))
    assert kept[rows, :, lord, control].sum() > uniform[rows, :, lord, control].sum()


def test_the_opening_is_the_start_of_the_play_phase():
    state = play_positions(STANDARD, seed=2, num_games=16, every=20)[-1]
    opening, first = opening_states(state)
    assert np.all(opening.phase == PLAY) and np.all(opening.to_act == opening.landlord)
    assert np.array_equal(opening.hands.astype(np.int64).sum(axis=(1, 2)), np.full(state.num_games, 54))
    assert np.all(opening.played == 0) and np.all(opening.to_beat == -1)
    assert np.array_equal(opening.history_len, first) and np.all(first == 6)  # 3 bids (or fewer) + doublings


def test_mismatches_count_the_moves_the_policy_would_not_make():
    """Games played by a random agent, replayed under the rule agent: most moves disagree."""
    rule = RuleAgent()
    states = play_positions(STANDARD, seed=4, num_games=32, every=9)
    late = states[-3]
    wrong = replay_mismatches(late, late.to_act.astype(np.int64), [rule] * 3)
    assert wrong.sum() > 0
    only_last = replay_mismatches(late, late.to_act.astype(np.int64), [rule] * 3, last=1)
    assert np.all(only_last <= 1) and np.all(only_last <= wrong)


# ----------------------------------------------------------------------------
# candidates and rollouts
# ----------------------------------------------------------------------------


def test_candidates_put_the_base_choice_first_then_pass():
    state = play_positions(STANDARD, seed=6, num_games=32)[10]
    view = seat_view(state)
    ids, offsets = engine.legal_actions(view)
    chosen = RuleAgent().act(view)
    scores = np.arange(len(ids), dtype=float)
    cands = choose_candidates(view, chosen, scores, ids, offsets, 3)
    for i, c in enumerate(cands):
        legal = ids[offsets[i] : offsets[i + 1]]
        assert c[0] == chosen[i] and len(c) == min(3, len(legal)) and len(set(c)) == len(c)
        if 0 in legal and chosen[i] != 0:
            assert c[1] == 0


def _finishing_positions(rules, seed):
    """Views where the seat to act holds a move that empties its hand, and that move per game."""
    table = action_table(rules)
    out = []
    for state in play_positions(rules, seed=seed, num_games=48, agents=[RuleAgent()] * 3):
        view = seat_view(state)
        own = view.hands[np.arange(view.num_games), view.to_act].sum(axis=1)
        ids, offsets = engine.legal_actions(view)
        for i in range(view.num_games):
            legal = ids[offsets[i] : offsets[i + 1]]
            going_out = legal[table.num_cards[legal] == own[i]]
            if len(going_out):
                out.append((engine.take(view, [i]), int(going_out[0]), legal))
    return out


def test_rollouts_value_going_out_as_a_win():
    """A move that empties the hand wins in every world: WP 1 and positive points."""
    positions = _finishing_positions(DOUZERO, seed=8)
    assert len(positions) > 10
    rule = RuleAgent()
    for view, out, legal in positions[:20]:
        cands = [np.unique(np.r_[out, legal[:3]])]
        worlds = sample_worlds(view, 4, np.random.default_rng(0))
        wp = rollout_values(view, worlds, cands, [rule] * 3, objective="wp")[0]
        adp = rollout_values(view, worlds, cands, [rule] * 3)[0]
        k = int(np.flatnonzero(cands[0] == out)[0])
        assert wp[k] == 1.0 and adp[k] > 0 and np.all((wp >= -1) & (wp <= 1))  # wins minus losses


def test_the_agent_goes_out_when_it_can():
    table = action_table(DOUZERO)
    for view, _, _ in _finishing_positions(DOUZERO, seed=10)[:30]:
        out = SearchAgent(RuleAgent(), TINY, seed=0).act(view)
        assert table.num_cards[out[0]] == view.hands[0, view.to_act[0]].sum()


# ----------------------------------------------------------------------------
# no peeking, determinism
# ----------------------------------------------------------------------------


def _swap_hidden(state: engine.State, rng) -> engine.State:
    """The same state with the two hidden hands re-dealt (same counts, still consistent)."""
    other = sample_worlds(seat_view(state), 1, rng)[:, 0]
    return dataclasses.replace(state, hands=other)


@pytest.mark.parametrize("spec", ["search:rule,worlds=3,samples=6,candidates=4",
                                  "search:rule,worlds=3,samples=6,candidates=4,inference=all",
                                  "search:rule,worlds=3,candidates=4,inference=none"])
def test_no_peeking(spec):
    """Full state, seat view, and a state with other hidden hands: the same decisions."""
    rng = np.random.default_rng(9)
    states = play_positions(STANDARD, seed=12, num_games=24, agents=[RuleAgent()] * 3, every=5)
    for state in states[::3]:
        decisions = [make_agent(spec, STANDARD, seed=4).act(s)
                     for s in (state, seat_view(state), _swap_hidden(state, rng))]
        assert np.array_equal(decisions[0], decisions[1]) and np.array_equal(decisions[0], decisions[2])


def test_deterministic_for_a_seed():
    lineup = ["search:rule,worlds=2,samples=4,candidates=3", "rule", "rule"]
    a = run_arena(lineup, num_deals=4, rules=DOUZERO, seed=3, chunk_size=4)
    b = run_arena(lineup, num_deals=4, rules=DOUZERO, seed=3, chunk_size=4)
    assert a["agents"] == b["agents"]


# ----------------------------------------------------------------------------
# full games, specs
# ----------------------------------------------------------------------------


@pytest.mark.parametrize("rules", [STANDARD, DOUZERO, dataclasses.replace(STANDARD, bidding=False)],
                         ids=["standard-bidding", "douzero", "standard-fixed"])
def test_full_games_in_the_arena(rules):
    spec = "search:rule,worlds=2,samples=4,candidates=3"
    report = run_arena([spec, "random", "rule"], num_deals=3, rules=rules, seed=1, chunk_size=3)
    assert report["agents"][spec]["all"]["games"] == 9 and report["truncated"] == 0


def test_search_over_a_dmc_agent():
    """A DMC base ranks candidates by its Q-values; pretrained rollouts under standard rules."""
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    agent = make_agent("search:pretrained,worlds=2,samples=4,candidates=3,rollout=rule/pretrained/rule",
                       STANDARD, seed=0)
    assert isinstance(agent, SearchAgent) and agent.policies[0] is agent.policies[2]
    state = play_positions(STANDARD, seed=13, num_games=8)[5]
    out = agent.act(seat_view(state))
    assert engine.is_legal(state, out).all()


def test_large_batches_are_searched_in_parts(monkeypatch):
    """Decisions beyond MAX_BATCH games of rollouts and worlds are searched in turn (here one by one)."""
    import agents.search as search

    states = play_positions(DOUZERO, seed=17, num_games=12, agents=[RuleAgent()] * 3, every=9)
    state = states[len(states) // 2]
    monkeypatch.setattr(search, "MAX_BATCH", 10)
    agent = make_agent("search:rule,worlds=2,samples=4,candidates=3", DOUZERO, seed=2)
    sizes = []
    original = SearchAgent._search

    def recording(self, view, chosen):
        sizes.append(view.num_games)
        return original(self, view, chosen)

    monkeypatch.setattr(SearchAgent, "_search", recording)
    out = agent.act(state)
    assert engine.is_legal(state, out).all()
    assert sizes and set(sizes) == {1} and len(sizes) == agent.searched


def test_time_limit_bounds_the_rounds():
    budget = SearchConfig(worlds=16, samples=16, candidates=4, time_limit=1e-4)
    agent = SearchAgent(RuleAgent(), budget, seed=0)
    state = play_positions(STANDARD, seed=14, num_games=4)[8]
    out = agent.act(state)
    assert engine.is_legal(state, out).all()
    assert agent.searched and agent.worlds_rolled == FIRST_ROUND * agent.searched  # the first round only
    unlimited = SearchAgent(RuleAgent(), dataclasses.replace(budget, time_limit=0), seed=0)
    unlimited.act(state)
    assert unlimited.worlds_rolled == 16 * unlimited.searched


@pytest.mark.parametrize("spec, message", [
    ("search:", "names no base agent"),
    ("search:rule,worlds", "not key=value"),
    ("search:rule,depth=3", "unknown search option 'depth'"),
    ("search:rule,worlds=many", "worlds must be an integer"),
    ("search:rule,worlds=0", "worlds must be an integer in 1..4096"),
    ("search:rule,worlds=32,samples=8", "must be at least worlds"),
    ("search:rule,worlds=4096,candidates=4096,samples=4096", "at most 65,536 are allowed"),
    ("search:rule,inference=bayes", "inference must be one of"),
    ("search:rule,objective=elo", "objective must be one of"),
    ("search:rule,time=-1", "time must be a number of seconds"),
    ("search:rule,time=soon", "time must be a number of seconds"),
    ("search:search:rule", "cannot be search agents"),
    ("search:rule,rollout=rule/random", "three separated by '/'"),
    ("search:nobody", "unknown agent 'nobody'"),
])
def test_bad_specs_are_one_line_errors(spec, message):
    with pytest.raises(ValueError, match=message) as err:
        make_agent(spec, STANDARD)
    assert "\n" not in str(err.value)


def test_parse_spec():
    base, rollout, cfg = parse_spec("search:pretrained,rollout=rule,worlds=32,samples=64,time=0.5")
    assert (base, rollout) == ("pretrained", "rule")
    assert cfg == SearchConfig(worlds=32, samples=64, time_limit=0.5)


def test_bad_spec_on_the_command_line(capsys):
    from doudizhu_arena.evaluate import main

    with pytest.raises(SystemExit) as exit_:
        main(["--landlord", "search:rule,worlds=0", "--farmers", "rule", "--games", "3"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "worlds must be an integer" in err[0]


def test_play_out_is_the_rollout_driver():
    """The driver the rollouts use plays games to their end with one agent per seat."""
    state = engine.reset(0, 5, DOUZERO)
    final, decisions = play_out(state, np.zeros((5, 3), np.int64), [RuleAgent()])
    assert final.done.all() and decisions > 5 * 10
    again = with_hands(seat_view(state), np.array([0, 0]), np.repeat(state.hands[:1], 2, axis=0))
    assert again.num_games == 2 and np.array_equal(again.hands[0], state.hands[0])


def test_as_a_gymnasium_opponent():
    """DouDizhu-v0 with a search agent in one of the other seats plays whole hands."""
    gymnasium = pytest.importorskip("gymnasium")
    from doudizhu_env.gym_env import DouDizhuEnv

    env = DouDizhuEnv(seat=0, opponents=[make_agent("search:rule,worlds=2,samples=4,candidates=3", STANDARD),
                                         RuleAgent()])
    assert isinstance(env, gymnasium.Env)
    obs, _ = env.reset(seed=3)
    for _ in range(2):
        done = False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(env.action_space.sample(obs["action_mask"]))
            done = terminated or truncated
        obs, _ = env.reset()


def test_at_the_terminal_table():
    """The terminal table builds search opponents from their specs (a bad one is refused there too)."""
    from doudizhu_table.terminal import make_opponents

    agents, names = make_opponents(["search:rule,worlds=2,samples=2", "rule"], DOUZERO, seat=0, seed=1)
    assert isinstance(agents[1], SearchAgent) and names[1].startswith("search:rule")
    with pytest.raises(ValueError, match="unknown search option"):
        make_opponents(["search:rule,depth=1", "rule"], DOUZERO, seat=0, seed=1)


@pytest.mark.integration  # the benchmark's command end to end: make test-slow
def test_the_budget_benchmark_runs_end_to_end(tmp_path):
    """benchmarks.search: a match and the timing per budget, its table, JSON, merge and plot."""
    from benchmarks.search import main

    pytest.importorskip("matplotlib")
    out = main(["--budgets", "2x3x4", "--inference", "moves", "none", "--deals", "3", "--workers", "1",
                "--positions", "3", "--json", str(tmp_path / "a.json")])
    assert [r["inference"] for r in out["rows"]] == ["moves", "none"]
    row = out["rows"][0]
    assert row["spec"] == "search:rule,worlds=2,candidates=3,samples=4,inference=moves"
    assert 0 <= row["strength"]["wp_all"][0] <= 1 and row["latency"]["median_s"] > 0
    merged = main(["--merge", str(tmp_path / "a.json"), str(tmp_path / "a.json"),
                   "--plot", str(tmp_path / "s.png")])
    assert len(merged["rows"]) == 4 and (tmp_path / "s.png").stat().st_size > 1000
