"""Agents shared between threads: N threads playing seeded hands make the moves one thread makes.

RuleAgent's caches (hand costs, strengths, run frontiers) are module-level and serve every thread;
the search agent plays its rollouts with RuleAgent, and DMC agents share one model. Each thread
plays its own seeded hands one decision at a time (the web table's pattern: many small calls that
interleave), starting from empty caches kept small, so that merges and drops happen while other
threads read; every thread must make exactly the moves one thread made alone.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import agents.rule as rule
from agents.registry import make_agent
from doudizhu_env import engine
from doudizhu_env.driver import decide
from doudizhu_env.rules import Rules

RULES = Rules.preset("standard")


def play_hand(seat_agents, seed: int) -> list[int]:
    """Every move of one seeded hand, one decision at a time."""
    state = engine.reset(np.random.default_rng(seed), 1, RULES)
    moves = []
    while not state.done[0]:
        action = decide(seat_agents[int(state.to_act[0])], state, np.array([0]))
        moves.append(int(action[0]))
        state = engine.step(state, action)
    return moves


def play_in_threads(make_seats, seeds_per_thread: list[list[int]]) -> list[list[list[int]]]:
    """Each thread plays its seeds (with seats from ``make_seats(seed)``) at once; their moves."""
    results: list = [None] * len(seeds_per_thread)
    errors: list = []
    start = threading.Barrier(len(seeds_per_thread))

    def work(k: int) -> None:
        try:
            start.wait()
            results[k] = [play_hand(make_seats(seed), seed) for seed in seeds_per_thread[k]]
        except Exception as err:  # noqa: BLE001 - reported below, with the thread
            errors.append((k, repr(err)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(seeds_per_thread))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    return results


@pytest.fixture
def small_rule_caches(monkeypatch):
    """RuleAgent's module caches, emptied and made small (frequent merges and drops)."""
    monkeypatch.setattr(rule, "_COSTS", rule.CodeCache(rule.batch_hand_costs, np.int64, limit=3000,
                                                       merge_min=16, batch=True))
    monkeypatch.setattr(rule, "_STRENGTHS", rule.CodeCache(rule.batch_hand_strengths, np.float64, limit=500,
                                                           merge_min=4, batch=True))
    monkeypatch.setattr(rule, "_FRONTIERS", rule.CodeCache(rule._run_frontiers, np.int64, limit=300,
                                                           merge_min=8, batch=True, width=rule._WIDTH))
    rule._one_hand_cost.cache_clear()
    rule._run_frontier.cache_clear()
    yield
    rule._one_hand_cost.cache_clear()


def _same_in_threads(make_seats, threads: int, hands: int) -> None:
    seeds = [[100 * k + h for h in range(hands)] for k in range(threads)]
    alone = [[play_hand(make_seats(seed), seed) for seed in row] for row in seeds]
    rule.clear_caches()
    assert play_in_threads(make_seats, seeds) == alone


def test_one_rule_agent_shared_by_threads_plays_as_one_thread(small_rule_caches):
    agent = rule.RuleAgent()
    _same_in_threads(lambda seed: [agent] * 3, threads=8, hands=4)


def test_threads_of_rule_agents_on_cold_caches_play_as_one_thread(small_rule_caches):
    seats = lambda seed: [rule.RuleAgent() for _ in range(3)]  # noqa: E731
    seeds = [[7 + k] for k in range(8)]
    in_threads = play_in_threads(seats, seeds)  # first, on empty caches
    rule.clear_caches()
    assert in_threads == [[play_hand(seats(s), s) for s in row] for row in seeds]


@pytest.mark.slow
def test_search_agents_in_threads_play_as_one_thread(small_rule_caches):
    spec = "search:rule,worlds=4,samples=8,candidates=4"
    seats = lambda seed: [make_agent(spec, RULES, [seed, s]) for s in range(3)]  # noqa: E731
    _same_in_threads(seats, threads=4, hands=1)


def test_dmc_agents_sharing_one_model_play_as_one_thread():
    pytest.importorskip("torch")
    model = make_agent("pretrained", RULES).model
    from agents.dmc import DMCAgent

    _same_in_threads(lambda seed: [DMCAgent(model) for _ in range(3)], threads=6, hands=2)
