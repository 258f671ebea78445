"""The arena: statistics on a known case, duplicate rotation, determinism, deals files, CLI."""

from __future__ import annotations

import json
import math
import signal

import numpy as np
import pytest

from agents.base import RandomAgent
from doudizhu_arena.arena import (
    ChunkResult,
    format_report,
    load_deals,
    make_deals,
    mean_ci,
    run_arena,
    save_deals,
    seatings,
    summarize,
)
from doudizhu_env import Rules


def test_mean_ci_known_values():
    r = mean_ci(np.array([0.0, 1.0, 1.0, 0.0]))
    assert r["mean"] == 0.5 and r["n"] == 4
    assert r["ci"] == pytest.approx(1.959964 * np.std([0, 1, 1, 0], ddof=1) / 2, rel=1e-6)
    assert math.isnan(mean_ci(np.array([]))["mean"])


def test_summarize_tiny_known_case():
    """Two deals, each played twice (A and B swap the landlord seat); figures by hand."""
    # seats 0 1 2; agent 0 = "a", 1 = "b"; landlord is seat 0 in every game
    agents = np.array([[0, 1, 1], [1, 0, 0], [0, 1, 1], [1, 0, 0]])
    roles = np.tile([0, 1, 2], (4, 1))
    scores = np.array([[2, -1, -1], [-4, 2, 2], [-2, 1, 1], [2, -1, -1]])
    # bids: seat 0 bids 1 and the others pass, except in game 2 where seat 2 had no turn
    bids = np.array([[1, 0, 0], [1, 0, 0], [3, -1, -1], [1, 0, 0]])
    res = ChunkResult(np.array([0, 0, 1, 1]), agents, roles, scores, np.zeros(4, bool), bids)
    rep = summarize([res], ["a", "b"])
    a = rep["agents"]["a"]
    # a's seats: deal 0 -> scores 2, 2, 2 (wins 1, 1, 1); deal 1 -> -2, -1, -1 (wins 0, 0, 0)
    assert a["all"]["wp"]["mean"] == pytest.approx(0.5)
    assert a["all"]["adp"]["mean"] == pytest.approx((2 + (-4 / 3)) / 2)
    assert a["landlord"]["wp"]["mean"] == pytest.approx(0.5) and a["landlord"]["games"] == 2
    assert a["landlord"]["adp"]["mean"] == pytest.approx(0.0)
    assert a["farmer"]["adp"]["mean"] == pytest.approx((2 - 1) / 2)
    half = 1.959964 * np.std([2, -2], ddof=1) / np.sqrt(2)
    assert a["landlord"]["adp"]["ci"] == pytest.approx(half, rel=1e-6)
    b = rep["agents"]["b"]
    assert b["landlord"]["adp"]["mean"] == pytest.approx((-4 + 2) / 2)
    assert b["all"]["games"] == 6
    # a holds seats 0, 1, 2, 0, 1, 2 ... of games 0..3: 6 seats, landlord in games 0 and 2
    assert a["bidding"]["seats"] == 6 and a["bidding"]["landlord_share"] == pytest.approx(2 / 6)
    # a's turns: game 0 seat 0 (1), game 1 seats 1, 2 (0, 0), game 2 seat 0 (3), game 3 seats 1, 2 (0, 0)
    assert a["bidding"]["turns"] == 6
    assert a["bidding"]["bid_shares"] == pytest.approx([4 / 6, 1 / 6, 0, 1 / 6])


def test_seatings_cover_every_position():
    rot = seatings(["a", "b", "c"])
    assert len(rot) == 3
    for agent in "abc":
        assert sorted(s.index(agent) for s in rot) == [0, 1, 2]
    assert seatings(["a", "b", "b"], "swap") == [("a", "b", "b"), ("b", "a", "a")]
    with pytest.raises(ValueError):
        seatings(["a", "b", "c"], "swap")


class _Spy(RandomAgent):
    """A random agent that records (deal cards, seat) of every decision it makes."""

    log: list = []

    def act(self, view):
        for i in range(view.num_games):
            self.log.append((self.name, int(view.to_act[i]), int(view.landlord[i]), int(view.phase[i])))
        return super().act(view)


def _spy_factory(spec, rules, seed):
    agent = _Spy(np.random.default_rng(seed))
    agent.name = spec
    return agent


@pytest.mark.parametrize("bidding", [True, False])
def test_rotation_puts_each_agent_in_each_seat_and_role(bidding):
    _Spy.log = []
    rules = Rules.preset("standard", bidding=bidding)
    rep = run_arena(["a", "b", "c"], 4, rules, seed=1, chunk_size=4, agent_factory=_spy_factory)
    assert rep["config"]["games"] == 12
    for name in "abc":
        seats = {s for n, s, _, _ in _Spy.log if n == name}
        assert seats == {0, 1, 2}
        if not bidding:
            assert rep["agents"][name]["landlord"]["games"] == 4
            assert rep["agents"][name]["landlord_down"]["games"] == 4


def test_deterministic_across_workers_and_deals_files(tmp_path):
    rules = Rules.preset("standard", bidding=False)
    one = run_arena(["random", "random", "random"], 30, rules, seed=5, chunk_size=10, workers=1)
    two = run_arena(["random", "random", "random"], 30, rules, seed=5, chunk_size=10, workers=2)
    assert one["agents"] == two["agents"]
    deals = make_deals(5, 30, rules, chunk_size=10)
    path = tmp_path / "deals.json"
    save_deals(deals, str(path))
    assert load_deals(str(path)) == deals
    again = run_arena(["random", "random", "random"], rules=rules, seed=5, chunk_size=10,
                      deals=load_deals(str(path)))
    assert again["agents"] == one["agents"]


def test_zero_sum_and_counts_with_bidding():
    rep = run_arena(["random", "random", "random"], 20, "standard", seed=3, chunk_size=7)
    r = rep["agents"]["random"]
    assert r["all"]["games"] == 20 * 3 * 3
    assert r["all"]["adp"]["mean"] == pytest.approx(0.0)


def test_cli_writes_json(tmp_path, capsys):
    from doudizhu_arena.evaluate import main

    out = tmp_path / "r.json"
    main(["--landlord", "rule", "--farmers", "random", "--games", "6", "--fixed-landlord", "--no-progress",
          "--json", str(out), "--save-deals", str(tmp_path / "d.json")])
    report = json.loads(out.read_text())
    assert report["agents"]["rule"]["landlord"]["games"] == 6
    assert "WP" in capsys.readouterr().out
    assert len(load_deals(str(tmp_path / "d.json"))) == 6


@pytest.mark.parametrize("mode", ["bidding", "fixed_landlord"])
def test_cli_paired_prints_and_writes_the_paired_differences(tmp_path, capsys, mode):
    """``--paired`` gives paired_with_reference's figures for the same deals; its "all" is the ADP."""
    from doudizhu_arena.arena import mode_rules
    from doudizhu_arena.evaluate import main
    from doudizhu_arena.evaluation import paired_with_reference

    out = tmp_path / "r.json"
    argv = ["--landlord", "random", "--farmers", "rule", "--games", "8", "--seed", "5", "--no-progress",
            "--json", str(out), "--paired"] + (["--fixed-landlord"] if mode == "fixed_landlord" else [])
    main(argv)
    report = json.loads(out.read_text())
    assert report["paired"] == json.loads(json.dumps(paired_with_reference("random", "rule", mode_rules(mode),
                                                                           8, seed=5)))
    assert report["paired"]["all"]["mean"] == pytest.approx(report["agents"]["random"]["all"]["adp"]["mean"])
    text = capsys.readouterr().out
    assert "paired with rule" in text and all(f"  {k} " in text for k in ("all", "landlord", "farmer"))


@pytest.mark.parametrize("extra, words", [
    (["--seats", "random", "rule", "rule"], "expected --landlord A --farmers REF"),
    (["--landlord", "random", "--farmers", "rule", "--duplicate", "none"], "expected no --duplicate none"),
    (["--landlord", "random", "--farmers", "rule", "--backend", "ray"], "expected no --backend ray"),
])
def test_cli_paired_refuses_what_it_cannot_pair_in_one_line(capsys, extra, words):
    from doudizhu_arena.evaluate import main

    with pytest.raises(SystemExit) as exc:
        main(["--games", "2", "--paired", *extra])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_format_report_lists_each_role_once():
    rep = run_arena(["rule", "random", "random"], 6, "standard", seed=3)
    lines = [line.split()[:2] for line in format_report(rep, agents=["rule"]).splitlines()[1:]
             if line.startswith("rule ")]
    assert [role for _, role in lines] == ["all", "landlord", "farmer", "landlord_down", "landlord_up"]


@pytest.mark.parametrize("mode", ["bidding", "fixed_landlord"])
def test_pairing_with_a_reference_in_the_same_seats_of_the_same_deals(mode):
    """The reference against itself differs by exactly 0 in every seat; another agent's overall
    paired difference is its arena ADP (the reference's three seats of a deal sum to 0), and its
    role figures compare only the seats where both agents held that role."""
    from doudizhu_arena.arena import mode_rules
    from doudizhu_arena.evaluation import paired_with_reference

    rules = mode_rules(mode)
    same = paired_with_reference("rule", "rule", rules, 30, seed=3)
    roles = ("all", "landlord", "farmer", "landlord_down", "landlord_up")
    assert all(same[k]["mean"] == 0.0 and same[k]["ci"] == 0.0 for k in roles)
    assert same["all"]["pairs"] == 90 and same["landlord"]["pairs"] + same["farmer"]["pairs"] == 90
    assert same["landlord_down"]["pairs"] + same["landlord_up"]["pairs"] == same["farmer"]["pairs"]
    other = paired_with_reference("random", "rule", rules, 30, seed=3)
    adp = run_arena(("random", "rule", "rule"), 30, rules, seed=3)["agents"]["random"]["all"]["adp"]
    assert other["all"]["mean"] == pytest.approx(adp["mean"]) and other["all"]["mean"] < 0
    assert 0 < other["farmer"]["pairs"] <= 60 and 0 < other["landlord"]["pairs"] <= 30
    if mode == "fixed_landlord":  # the roles are the deal's: every seat is paired in its role
        assert (other["landlord"]["pairs"], other["farmer"]["pairs"]) == (30, 60)
        assert other["landlord_down"]["pairs"] == other["landlord_up"]["pairs"] == 30
        # every deal has one game in each seat: the farmer figure is the mean of the two seats'
        assert other["farmer"]["mean"] == pytest.approx((other["landlord_down"]["mean"]
                                                         + other["landlord_up"]["mean"]) / 2)


@pytest.mark.parametrize("mode", ["bidding", "fixed_landlord"])
def test_farmer_team_pairs_two_copies_of_the_agent_against_the_reference_landlord(mode):
    """"farmer_team": the agent in both farmer seats against the reference as landlord, per farmer,
    minus the reference's own farmers on the same deals. Without bidding that is minus half the
    difference of the reference landlord's points between the two line-ups, game by game."""
    from doudizhu_arena.arena import mode_rules
    from doudizhu_arena.evaluation import paired_with_reference

    rules = mode_rules(mode)
    same = paired_with_reference("rule", "rule", rules, 30, seed=3)["farmer_team"]
    assert same["mean"] == 0.0 and same["ci"] == 0.0 and 0 < same["pairs"] <= 90
    team = paired_with_reference("random", "rule", rules, 30, seed=3)["farmer_team"]
    assert team["mean"] < 0  # two random farmers do worse than two RuleAgents
    if mode == "fixed_landlord":
        assert team["pairs"] == 30
        line_up = run_arena(("rule", "random", "random"), 30, rules, seed=3, duplicate="none")
        alone = run_arena(("rule",) * 3, 30, rules, seed=3, duplicate="none")
        landlord = [r["agents"]["rule"]["landlord"]["adp"]["mean"] for r in (line_up, alone)]
        assert team["mean"] == pytest.approx(-(landlord[0] - landlord[1]) / 2)


# -- Ctrl-C while the local pool of game workers starts ------------------------------------------


@pytest.fixture
def python_ctrl_c():
    """SIGINT raising KeyboardInterrupt, as in a foreground Python process (a background job may
    start with SIGINT ignored, and Python then leaves it so)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_deferred_delivers_once_the_block_ends(python_ctrl_c):
    from doudizhu_arena.arena import _ctrl_c_deferred

    steps = []
    with pytest.raises(KeyboardInterrupt):
        with _ctrl_c_deferred():
            signal.raise_signal(signal.SIGINT)
            steps.append("after the signal")
    assert steps == ["after the signal"] and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    seen = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        with _ctrl_c_deferred():
            signal.raise_signal(signal.SIGINT)
            assert seen == []
        assert seen == [signal.SIGINT]  # the handler that was there gets it, once
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_ctrl_c_while_the_pool_starts_leaves_no_worker(monkeypatch, python_ctrl_c):
    """multiprocessing's Pool interrupted after forking its workers, before it can be stopped: the
    KeyboardInterrupt still comes, and no worker or worker-replacing thread is left running."""
    import multiprocessing as mp
    import multiprocessing.pool
    import threading

    started = multiprocessing.pool.Pool._repopulate_pool

    def interrupted(self):
        out = started(self)
        signal.raise_signal(signal.SIGINT)  # the user's Ctrl-C, the workers forked
        return out

    monkeypatch.setattr(multiprocessing.pool.Pool, "_repopulate_pool", interrupted)
    rules = Rules.preset("standard", bidding=False)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_arena(["random", "random", "random"], 30, rules, seed=5, chunk_size=10, workers=2)
        assert mp.active_children() == []
        assert not [t for t in threading.enumerate() if "_handle_workers" in t.name]
    finally:
        for child in mp.active_children():  # what a failure left, not the next test's
            child.terminate()
