"""The training benchmarks' commands end to end on tiny budgets: the ablation and the bidding analysis."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("yaml")

from helpers import STANDARD, TINY, get_dotted, small_config, small_model  # noqa: E402

from agents.checkpoint import save_checkpoint  # noqa: E402
from agents.dmc import DMCAgent  # noqa: E402
from agents.rule import RuleAgent  # noqa: E402
from doudizhu_env import engine  # noqa: E402
from doudizhu_env.actions import BID3, DOUBLE  # noqa: E402
from train.buffer import objective_targets  # noqa: E402


def test_ablation_by_frames_runs_end_to_end(tmp_path, capsys):
    from benchmarks.ablation import main

    out = tmp_path / "ablation.json"
    rows = main(["--variants", "default", "rule_opponents", "--frames", "1500", "--deals", "4",
                 "--out-dir", str(tmp_path), "--json", str(out)])
    assert [r["variant"] for r in rows] == ["default", "rule_opponents"]
    assert all(r["frames"] >= 1500 for r in rows)
    assert rows[1]["overrides"] == {"opponents": ["rule"], "opponent_share": 0.5}
    for r in rows:
        fixed = r["rule/fixed_landlord"]
        assert {"adp_landlord", "adp_landlord_down", "adp_landlord_up"} <= set(fixed)
    from benchmarks import finite

    assert json.loads(out.read_text()) == finite(rows)  # an interval over one deal is null, not NaN
    table = capsys.readouterr().out
    assert "| rule_opponents | " in table and "landlord_down" in table


@pytest.mark.slow
def test_ablation_evaluation_in_worker_processes_gives_the_same_row(tmp_path):
    """--eval-workers only spreads the evaluation: a deterministic run (num_actors 0) gets the same row."""
    from benchmarks.ablation import main

    args = ["--variants", "default", "--frames", "1500", "--deals", "6", "--out-dir", str(tmp_path)]
    one, = main(args)
    two, = main(args + ["--eval-workers", "2"])
    for key in ("rule/fixed_landlord", "rule/bidding"):
        assert one[key] == two[key]


def test_every_ablation_variant_is_a_valid_config():
    """Each variant's overrides load on top of the default config and take effect (a misspelt key or a
    value out of range fails here, not after an hour of the variants before it)."""
    from benchmarks.ablation import DEFAULT_CONFIG, VARIANTS
    from train.config import load_config

    for name, overrides in VARIANTS.items():
        cfg = load_config(DEFAULT_CONFIG, {"total_frames": 1000, "max_minutes": 0, **overrides})
        for key, value in overrides.items():
            assert get_dotted(cfg, key) == value, (name, key)


def _checkpoint(tmp_path) -> str:
    path = str(tmp_path / "small.pt")
    save_checkpoint(path, small_model(seed=3), frames=0, updates=0)
    return path


def test_bidding_analysis_records_every_bid_and_double(tmp_path):
    from benchmarks.bidding import play_and_record, summarize

    agent = DMCAgent(small_model(seed=3))
    rec = play_and_record(agent, RuleAgent(), 60, STANDARD, seed=5)
    mine = rec["mine"]
    assert set(rec["network"]) <= {0, 1} and mine.any() and (~mine).any()
    assert set(rec["seat"][mine]) == {0, 1, 2}
    assert np.isfinite(rec["q"][mine]).all() and np.isnan(rec["q"][~mine]).all()
    summary = summarize(rec, "logadp")
    for position in (0, 1):  # the shares of each position's actions add up to 1
        names = ("bid0", "bid1", "bid2", "bid3") if position == 0 else ("double", "no_double")
        total = sum(summary["actions"][n]["share_of_position"] for n in names if n in summary["actions"])
        assert total == pytest.approx(1.0)
    bid0 = mine & (rec["action"] == 1)
    target = objective_targets(rec["points"][bid0], "logadp")
    target = np.where(rec["redeals"][bid0] < rec["final_redeals"][bid0], 0.0, target)
    assert summary["actions"]["bid0"]["mean_result"] == pytest.approx(float(target.mean()))
    assert all(0.0 <= v <= 1.0 for v in summary["doubling"].values())


def test_the_bidding_analysis_gives_a_policys_probability_of_double():
    """For a policy (a model whose scores are logits), each of its doubling decisions' softmax
    probability of ``double``; none for a DMC agent (Q-values)."""
    from agents.dmc import ScoreModel
    from agents.policy import PolicyAgent
    from benchmarks.bidding import double_probability, play_and_record, summarize

    scores, ids = np.array([0.3, -1.2, 2.0, 0.5]), np.array([DOUBLE, 6, 7, DOUBLE + 1])
    p = double_probability(scores, ids, np.array([0, 2, 3, 4]))
    assert p[0] == pytest.approx(np.exp(0.3) / (np.exp(0.3) + np.exp(-1.2))) and np.isnan(p[1:]).all()
    torch.manual_seed(3)
    policy = ScoreModel(STANDARD, small_config(), score_kind="logits")  # a PPO checkpoint's model
    rec = play_and_record(PolicyAgent(policy), RuleAgent(), 60, STANDARD, seed=5)
    doubling = rec["mine"] & (rec["network"] == 1)
    assert doubling.any() and ((rec["p_double"][doubling] > 0) & (rec["p_double"][doubling] < 1)).all()
    assert np.isnan(rec["p_double"][~doubling]).all()
    figures = summarize(rec, "logadp")["policy_doubling"]
    assert sum(f["decisions"] for f in figures.values()) == doubling.sum()
    dmc = play_and_record(DMCAgent(small_model(seed=3)), RuleAgent(), 60, STANDARD, seed=5)
    assert "policy_doubling" not in summarize(dmc, "logadp")


class AlwaysDouble(RuleAgent):
    """RuleAgent, doubling (and redoubling) in every hand."""

    def act(self, view):
        return np.where(view.phase == engine.DOUBLING, DOUBLE, super().act(view))


class AlwaysBidThree(RuleAgent):
    """RuleAgent, bidding 3 at its every bidding turn (always legal: a 3 ends the bidding)."""

    def act(self, view):
        return np.where(view.phase == engine.BIDDING, BID3, super().act(view))


def test_never_double_as_farmer_changes_only_the_farmers_doubles():
    """Same deals, same bidding and play; as a farmer the agent's double is gone, so its stake is halved
    (or quartered, where the landlord's redouble went with it); as landlord nothing changes."""
    from benchmarks.bidding import NeverDoubleAsFarmer, play

    games, seats = np.arange(90), np.arange(90) % 3
    always = play(AlwaysDouble(), RuleAgent(), 90, STANDARD, seed=4)
    never = play(NeverDoubleAsFarmer(AlwaysDouble()), RuleAgent(), 90, STANDARD, seed=4)
    assert np.array_equal(always.landlord, never.landlord)
    farmer = (never.landlord >= 0) & (never.landlord != seats)
    landlord = never.landlord == seats
    assert farmer.any() and landlord.any()
    assert (never.doubles[games, seats][farmer] == 0).all()
    assert (always.doubles[games, seats][farmer] == 1).all()
    a, b = always.scores[games, seats], never.scores[games, seats]
    assert np.array_equal(a[landlord], b[landlord])
    assert (np.sign(a[farmer]) == np.sign(b[farmer])).all()
    assert set(np.unique(a[farmer] // b[farmer])) <= {2, 4}


def test_farmer_doubling_worth_is_zero_where_the_agent_never_doubles_and_paired_otherwise():
    from benchmarks.bidding import farmer_doubling_worth

    agent = DMCAgent(small_model(seed=3))
    worth = farmer_doubling_worth(agent, "rule", 90, STANDARD, seed=6)
    assert worth["farmer_hands"] > 0
    assert worth["adp_farmer_never"] - worth["adp_farmer"] == pytest.approx(worth["difference"])
    from benchmarks.bidding import NeverDoubleAsFarmer

    never = farmer_doubling_worth(NeverDoubleAsFarmer(RuleAgent()), "rule", 90, STANDARD, seed=6)
    assert never["changed_hands"] == 0 and never["farmer_hands"] > 0
    assert never["difference"] == 0.0  # no double to take back: the two passes are the same games
    always = farmer_doubling_worth(AlwaysDouble(), "rule", 90, STANDARD, seed=6)
    assert always["changed_hands"] == always["farmer_hands"] > 0
    assert abs(always["adp_farmer_never"]) < abs(always["adp_farmer"])  # every stake halved or quartered


@pytest.mark.parametrize("count, seats", [
    (0, ["...", "...", "..."]),
    (1, ["A..", ".A.", "..A", "A.."]),
    (2, ["AA.", ".AA", "A.A", "AA."]),
])
def test_agent_seats_rotate(count, seats):
    from benchmarks.bidding import agent_seats

    got = agent_seats(len(seats), count)
    assert ["".join("A" if a else "." for a in row) for row in got] == seats


def test_farmer_teams_are_the_same_games_when_the_agent_is_the_opponent():
    """RuleAgent is deterministic: as the agent against ``rule`` every pass plays the same games as
    RuleAgent alone, and each keeps those games whose landlord sits at a seat the agent does not hold."""
    from benchmarks.bidding import agent_seats, farmer_teams, play

    final = play(RuleAgent(), RuleAgent(), 60, STANDARD, seed=4)
    games, landlord = np.arange(60), final.landlord
    assert (landlord >= 0).all() and not final.truncated.any()
    team = (final.scores[games, (landlord + 1) % 3] + final.scores[games, (landlord + 2) % 3]) / 2
    teams = farmer_teams(RuleAgent(), "rule", 60, STANDARD, seed=4)
    assert list(teams) == ["agent_seats_0", "agent_seats_1", "agent_seats_2"]
    for count in range(3):
        kept = ~agent_seats(60, count)[games, landlord]
        got = teams[f"agent_seats_{count}"]
        assert got["hands"] == kept.sum() > 0
        assert got["landlord_wp"] == pytest.approx((final.scores[games, landlord][kept] > 0).mean())
        assert got["farmer_adp"] == pytest.approx(team[kept].mean())
    assert teams["agent_seats_0"]["hands"] == 60


def test_farmer_teams_keep_only_hands_an_opponent_won():
    """An agent that always bids 3 first wins every bidding it opens: with two agent seats, the
    opponent's seat is landlord only where it opened the bidding and bid 3 itself."""
    from benchmarks.bidding import farmer_teams

    teams = farmer_teams(AlwaysBidThree(), "rule", 60, STANDARD, seed=4)
    alone = teams["agent_seats_0"]["hands"]
    assert teams["agent_seats_2"]["hands"] < teams["agent_seats_1"]["hands"] < alone


def test_bidding_command(tmp_path, capsys):
    from benchmarks.bidding import main

    out = tmp_path / "bidding.json"
    main(["--agent", f"dmc:{_checkpoint(tmp_path)}", "--deals", "30", "--json", str(out)])
    assert "| bid0 |" in capsys.readouterr().out
    assert json.loads(out.read_text())["deals"] == 30
    main(["--agent", f"dmc:{_checkpoint(tmp_path)}", "--deals", "30", "--farmer-doubling",
          "--json", str(out)])
    assert "never doubling minus as played" in capsys.readouterr().out
    worth = json.loads(out.read_text())["farmer_doubling"]
    assert set(worth) >= {"farmer_hands", "adp_farmer", "adp_farmer_never", "difference", "difference_ci"}
    main(["--agent", f"dmc:{_checkpoint(tmp_path)}", "--deals", "30", "--farmer-teams", "--json", str(out)])
    assert "farmers against a rule landlord, by the agent's seats:" in capsys.readouterr().out
    assert set(json.loads(out.read_text())["farmer_teams"]) == {f"agent_seats_{k}" for k in range(3)}
    with pytest.raises(SystemExit) as err:
        main(["--agent", "rule", "--deals", "3"])
    assert err.value.code == 2


def _row(minutes, frames, adp):
    return {"minutes": minutes, "frames": frames, "results": {"rule/fixed_landlord": {"adp": adp}}}


@pytest.mark.parametrize("adps, expected", [
    ([-1.0, -0.5, 0.5], {"minutes": 15.0, "frames": 1500.0, "interpolated": True}),
    ([0.1, 0.2, 0.3], {"minutes": 0.0, "frames": 0, "interpolated": False}),
    ([-1.0, 0.0, 0.3], {"minutes": 10.0, "frames": 1000.0, "interpolated": True}),
    ([-1.0, -0.5, -0.1], None),
])
def test_parity_is_where_adp_first_reaches_zero(adps, expected):
    from benchmarks.learning import parity

    rows = [_row(10.0 * i, 1000 * i, a) for i, a in enumerate(adps)]
    assert parity(rows[::-1]) == expected  # in any order


@pytest.mark.integration  # trains, keeps checkpoints and evaluates them: make test-slow
def test_learning_curve_over_kept_checkpoints(tmp_path, capsys):
    from benchmarks.learning import evaluate_checkpoint, main
    from train.config import load_config
    from train.run import train

    train(load_config(TINY, {"out_dir": str(tmp_path), "run_name": "curve", "total_frames": 2000,
                             "chunk_size": 64, "keep_checkpoints": True, "checkpoint_minutes": 0,
                             "eval_deals": 0}))
    png, out = tmp_path / "curve.png", tmp_path / "curve.json"
    rows = main(["--run", str(tmp_path / "curve"), "--every", "--opponents", "random", "rule", "--deals", "3",
                 "--workers", "1", "--paired", "--plot", str(png), "--json", str(out)])
    assert len(rows) >= 3 and png.stat().st_size > 10_000
    assert [r["frames"] for r in rows] == sorted(r["frames"] for r in rows)
    assert json.loads(out.read_text())[0]["results"].keys() == {
        "random/bidding", "random/fixed_landlord", "rule/bidding", "rule/fixed_landlord"}
    results = json.loads(out.read_text())[0]["results"]
    paired_keys = {f"paired_{role}{ci}" for role in ("landlord", "farmer", "landlord_down", "landlord_up",
                                                     "farmer_team") for ci in ("", "_ci")}
    assert paired_keys <= results["rule/fixed_landlord"].keys()
    assert "paired_landlord" not in results["rule/bidding"]  # the roles are fixed only without bidding
    text = capsys.readouterr().out
    # paired with itself, a greedy agent gains nothing in either role (a pairing of other seats or
    # deals would not give exactly 0)
    path = rows[-1]["path"]
    itself = evaluate_checkpoint(path, [f"dmc:{path}"], 4, seed=5, workers=1, paired=True)
    assert itself[f"dmc:{path}/fixed_landlord"]["paired_landlord"] == 0.0
    assert itself[f"dmc:{path}/fixed_landlord"]["paired_farmer"] == 0.0
    assert itself[f"dmc:{path}/fixed_landlord"]["paired_landlord_down"] == 0.0
    assert "landlord minus the baseline's (paired)" in text
    assert "parity with RuleAgent (fixed landlord, ADP 0): " in text


@pytest.mark.parametrize("module, option", [
    ("ablation", "--json"), ("pretrained", "--json"), ("arena", "--out"), ("training", "--json"),
    ("engine", "--json"), ("learning", "--json"), ("learning", "--plot"), ("bidding", "--json")])
def test_benchmark_outputs_are_checked_before_any_work(module, option, tmp_path, capsys):
    """An output in a folder that does not exist is a one-line error (exit 2) naming the option,
    before anything is measured or trained (nothing is written, no run folder is made)."""
    import importlib

    main = importlib.import_module(f"benchmarks.{module}").main
    target = tmp_path / "missing" / "out.file"
    with pytest.raises(SystemExit) as exit_info:
        main([option, str(target), *(["--out-dir", str(tmp_path)] if module == "ablation" else [])])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert option in err and "out.file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_learning_refuses_one_file_for_both_outputs(tmp_path, capsys):
    from benchmarks.learning import main

    same = str(tmp_path / "both")
    with pytest.raises(SystemExit) as exit_info:
        main(["--run", str(tmp_path), "--json", same, "--plot", same])
    assert exit_info.value.code == 2
    assert "also the file of --json" in capsys.readouterr().err


def test_write_png_is_atomic_and_a_real_png(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from benchmarks import write_png

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = tmp_path / "plot.png"
    path.write_bytes(b"old")
    write_png(str(path), fig, dpi=50)
    plt.close(fig)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plot.png"]  # no temporary file left


def test_model_card_benchmark_runs_each_part(tmp_path, capsys):
    """benchmarks.pretrained on a tiny budget: the one-seat table, DouZero's protocol and the paired
    comparison, each printed as Markdown and kept in the JSON; --parts runs only those named."""
    from benchmarks.pretrained import main

    out = tmp_path / "card.json"
    figures = main(["--agent", "rule", "--opponents", "random", "--douzero-opponents", "random",
                    "--reference", "random", "--deals", "6", "--workers", "1", "--json", str(out)])
    text = capsys.readouterr().out
    assert "| random | bidding | landlord |" in text and "| WP as landlord |" in text
    assert "| farmer | " in text and f"figures: {out}" in text
    assert set(figures["results"]) == {"random/bidding", "random/fixed_landlord"}
    protocol = figures["douzero_protocol"]["random"]
    assert protocol["landlord"]["wp"]["n"] == 6 and protocol["both"]["wp"]["mean"] > 0.5
    assert figures["paired"]["reference"] == "random" and figures["paired"]["bidding"]["all"]["n"] == 6
    from benchmarks import finite

    assert json.loads(out.read_text()) == finite(figures)  # an interval over one deal is null, not NaN
    only = main(["--agent", "rule", "--douzero-opponents", "random", "--deals", "4", "--workers", "1",
                 "--parts", "douzero"])
    assert set(only) == {"agent", "deals", "seed", "workers", "douzero_protocol"}


def test_the_rates_projection_picks_the_learner_threads_for_each_machine_size():
    from benchmarks.training import machine_sizes

    rows = machine_sizes(10_000.0, {1: 30_000.0, 2: 45_000.0}, [2, 4, 8, 64])
    by_cores = {row["cores"]: row for row in rows}
    assert by_cores[2] == {"cores": 2, "threads": 1, "actors": 1, "frames_per_s": 10_000.0,
                           "bound_by": "actors"}
    assert by_cores[4]["threads"] == 1 and by_cores[4]["frames_per_s"] == 30_000.0  # 3 actors fill one thread
    assert by_cores[8]["threads"] == 2 and by_cores[8]["bound_by"] == "learner"
    assert by_cores[64]["frames_per_s"] == 45_000.0  # the learner's ceiling: more cores add nothing


def test_the_machines_ceiling_for_threads_is_a_ratio_of_real_work():
    """``matmul_scaling``: the same chains of products on one thread and on two at once; two threads
    can do at most twice the work, and never much less than one thread's."""
    torch = pytest.importorskip("torch")
    from benchmarks.training import matmul_scaling

    before = torch.get_num_threads()
    try:
        ratio = matmul_scaling(0.3, 2)
    finally:
        torch.set_num_threads(before)
    assert 0.5 < ratio < 2.3


def test_the_rates_measure_one_actor_at_each_games_per_actor(tmp_path, capsys):
    """``--rates --games-per-actor 4 8``: one actor's rate at each size, in the table and the JSON; the
    projection uses the first size's."""
    from benchmarks.training import actor_rate, main

    assert actor_rate(0.1, TINY, 4)["games_per_actor"] == 4
    assert actor_rate(0.1, TINY)["games_per_actor"] == 32  # the config's
    before = torch.get_num_threads()
    out = tmp_path / "rates.json"
    try:
        result = main(["--rates", "--config", TINY, "--seconds", "0.1", "--games-per-actor",
                       "4", "8", "--machines", "1", "--core-counts", "2", "--json", str(out)])
    finally:
        torch.set_num_threads(before)
    rates = result["rates"]
    assert rates["games_per_actor"] == 4 and rates["actor_fps"] == rates["actor_fps_games_4"]
    assert rates["actor_fps_games_8"] > 0
    table = capsys.readouterr().out
    assert "games per actor" in table and "\n              4 " in table and "\n              8 " in table
    assert json.loads(out.read_text())["rates"]["games_per_actor"] == 4


def test_the_rates_refuse_a_games_per_actor_below_one(capsys):
    from benchmarks.training import main

    with pytest.raises(SystemExit) as err:
        main(["--rates", "--games-per-actor", "0"])
    assert err.value.code == 2 and "--games-per-actor" in capsys.readouterr().err
