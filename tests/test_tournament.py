"""The round-robin tournament (doudizhu_arena.tournament): cells, ratings, the cache, the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.base import Agent, RandomAgent
from agents.registry import make_agent
from agents.rule import RuleAgent
from doudizhu_arena.arena import ArenaConfig, chunk_jobs, make_deals, run_arena
from doudizhu_arena.arena import lead_values as arena_lead_values
from doudizhu_arena.arena import play_chunk as arena_play_chunk
from doudizhu_arena.tournament import (
    Cell,
    adp_ratings,
    elo_ratings,
    fit_ratings,
    format_markdown,
    format_table,
    heatmap_png,
    landlord_and_farmers,
    leaderboard,
    main,
    mode_rules,
    play_tournament,
)
from doudizhu_env import engine


class MixAgent(Agent):
    """RuleAgent's move with probability ``p``, else a uniformly random legal move: strength grows with p."""

    def __init__(self, p: float, seed):
        self.p = p
        self.rng = np.random.default_rng(seed)
        self.rule, self.random = RuleAgent(), RandomAgent(self.rng)

    def act(self, view: engine.State) -> np.ndarray:
        rule, rand = self.rule.act(view), self.random.act(view)
        return np.where(self.rng.random(len(rule)) < self.p, rule, rand)


def mix_factory(spec: str, rules, seed):
    """Agent specs of the tests: ``mixP`` (MixAgent with probability P), else the registry's."""
    if spec.startswith("mix"):
        return MixAgent(float(spec[3:]), seed)
    return make_agent(spec, rules=rules, seed=seed)


def test_lead_values_match_the_arena_report():
    """The per-deal values the tournament and the SPRT use agree with the arena's own ADP and WP."""
    rules = mode_rules("bidding")
    report = run_arena(["rule", "random", "random"], 40, rules, seed=3)
    cfg = ArenaConfig(("rule", "random", "random"), rules, "rotate", 3, 200, None, ["random", "rule"])
    (job,) = chunk_jobs(cfg, make_deals(3, 40, rules))
    score, win = arena_lead_values(arena_play_chunk(*job), cfg)
    assert score.mean() == pytest.approx(report["agents"]["rule"]["all"]["adp"]["mean"])
    assert win.mean() == pytest.approx(report["agents"]["rule"]["all"]["wp"]["mean"])


def test_fixed_cell_is_the_landlords_game():
    """In fixed mode the row agent is the landlord: its values are the landlord's score of one game a deal."""
    rules = mode_rules("fixed_landlord")
    cfg = ArenaConfig(("rule", "random", "random"), rules, "none", 0, 200, None, ["random", "rule"])
    (job,) = chunk_jobs(cfg, make_deals(0, 30, rules))
    result = arena_play_chunk(*job)
    score, _ = arena_lead_values(result, cfg)
    landlord = np.argmax(result.roles == 0, axis=1)
    assert np.array_equal(score, result.scores[np.arange(30), landlord])
    assert np.array_equal(result.agents[np.arange(30), landlord], np.full(30, 1))  # "rule"


def test_landlord_and_farmers_is_douzeros_pair_of_games():
    """DouZero's protocol: the agent's landlord games and its farmers' games are those of the arena
    with a fixed landlord, one game a deal on the same deals; the farmers' WP is the share of the
    other landlord's losses, their points per seat half its loss, and ``both`` the average."""
    out = landlord_and_farmers("rule", "random", 40, seed=5)
    rules = mode_rules("fixed_landlord")
    lead = run_arena(["rule", "random", "random"], 40, rules, duplicate="none", seed=5)["agents"]["rule"]
    farm = run_arena(["random", "rule", "rule"], 40, rules, duplicate="none", seed=5)["agents"]
    assert out["deals"] == 40 and out["landlord"]["wp"]["n"] == 40
    assert out["landlord"]["wp"]["mean"] == pytest.approx(lead["landlord"]["wp"]["mean"])
    assert out["landlord"]["adp"]["mean"] == pytest.approx(lead["landlord"]["adp"]["mean"])
    assert out["farmers"]["wp"]["mean"] == pytest.approx(1 - farm["random"]["landlord"]["wp"]["mean"])
    assert out["farmers"]["adp"]["mean"] == pytest.approx(farm["rule"]["farmer"]["adp"]["mean"])
    for key in ("wp", "adp"):
        both = (out["landlord"][key]["mean"] + out["farmers"][key]["mean"]) / 2
        assert out["both"][key]["mean"] == pytest.approx(both)
    assert out["landlord"]["wp"]["mean"] > 0.8 and out["farmers"]["wp"]["mean"] > 0.8  # rule >> random
    with pytest.raises(ValueError, match="named twice"):
        landlord_and_farmers("rule", "rule", 10)
    with pytest.raises(ValueError, match="num_deals must be between 2 and"):
        landlord_and_farmers("rule", "random", 0)


def _cells(table: np.ndarray, deals: int = 4) -> list[list[Cell]]:
    return [[Cell("fixed_landlord", str(a), str(b), np.full(deals, table[a, b]), np.full(deals, 0.5))
             for b in range(len(table))] for a in range(len(table))]


def test_adp_ratings_recover_an_additive_table():
    """cell(a, b) = mu + l_a - f_b: the rating is (l_a + f_a) / 2 centred, and r_a - r_b is
    (cell(a, b) - cell(b, a)) / 2."""
    landlord, farmer = np.array([1.0, -0.5, 2.0]), np.array([0.3, 0.1, -1.0])
    table = 0.7 + landlord[:, None] - farmer[None, :]
    ratings = adp_ratings(table)
    expected = (landlord + farmer) / 2
    assert ratings == pytest.approx(expected - expected.mean())
    assert ratings[0] - ratings[2] == pytest.approx((table[0, 2] - table[2, 0]) / 2)
    report = fit_ratings(_cells(table), ["0", "1", "2"], np.random.default_rng(0), bootstrap=20)
    assert report["2"]["adp"]["rating"] == pytest.approx(ratings[2])
    assert report["2"]["adp"]["low"] == pytest.approx(ratings[2])  # constant deals: no spread


def test_elo_ratings_recover_bradley_terry_strengths():
    u, v, c = np.array([0.5, -0.2, 0.0]), np.array([0.1, 0.4, -0.3]), 0.2
    p = 1.0 / (1.0 + np.exp(-(c + u[:, None] - v[None, :])))
    games = np.full((3, 3), 1e7)
    strength = (u + v) / 2
    assert elo_ratings(p * games, games, ridge=1e-9) == pytest.approx(
        400 / np.log(10) * (strength - strength.mean()), abs=0.5)


@pytest.mark.slow  # 14 agent pairs of games: make test-slow
def test_tournament_and_ratings_recover_the_order_of_known_strengths():
    """Random < rule's move 40% of the time < 80% < RuleAgent, in the table and both ratings."""
    agents = ["random", "mix0.4", "mix0.8", "rule"]
    report = play_tournament(agents, 300, ["fixed_landlord"], seed=1, agent_factory=mix_factory,
                             bootstrap=100)
    ranked = [a for a, _ in leaderboard(report, "fixed_landlord")]
    assert ranked == agents[::-1]
    elo = [report["ratings"]["fixed_landlord"][a]["elo"]["rating"] for a in agents]
    assert elo == sorted(elo)
    cells = report["modes"]["fixed_landlord"]["cells"]
    assert cells["rule"]["random"]["adp"]["mean"] > cells["random"]["random"]["adp"]["mean"]
    assert cells["random"]["rule"]["adp"]["mean"] < cells["random"]["random"]["adp"]["mean"]
    r = report["ratings"]["fixed_landlord"]["rule"]["adp"]
    assert r["low"] < r["rating"] < r["high"]
    ratings = report["ratings"]["fixed_landlord"]
    assert sum(ratings[a]["adp"]["rating"] for a in agents) == pytest.approx(0.0, abs=1e-9)


def test_bidding_cells_rotate_the_seats():
    """With bidding, a deterministic agent against itself scores exactly 0 (every rotation is the same
    zero-sum game), and the row against the column mirrors the column against a pair of the row."""
    report = play_tournament(["rule", "random"], 40, ["bidding"], seed=2, bootstrap=0)
    cells = report["modes"]["bidding"]["cells"]
    assert cells["rule"]["rule"]["adp"]["mean"] == 0.0
    assert cells["rule"]["random"]["adp"]["mean"] > 0 > cells["random"]["rule"]["adp"]["mean"]
    assert report["modes"]["bidding"]["cells"]["rule"]["random"]["deals"] == 40


class Interrupt(Exception):
    pass


@pytest.mark.slow  # two tournaments played in full: make test-slow
def test_an_interrupted_tournament_continues_and_matches_an_uninterrupted_one(tmp_path):
    agents = ["random", "mix0.5", "rule"]
    whole = play_tournament(agents, 30, seed=4, agent_factory=mix_factory, chunk_size=10, bootstrap=50)
    built = []

    def failing_factory(spec, rules, seed):
        built.append(spec)
        if len(built) > 25:  # some cells finished and cached, then the run dies
            raise Interrupt
        return mix_factory(spec, rules, seed)

    cache = str(tmp_path / "cache")
    with pytest.raises(Interrupt):
        play_tournament(agents, 30, seed=4, agent_factory=failing_factory, chunk_size=10, cache=cache)
    done = len(list((tmp_path / "cache").iterdir()))
    assert 0 < done < 18
    resumed = play_tournament(agents, 30, seed=4, agent_factory=mix_factory, chunk_size=10, cache=cache,
                              bootstrap=50)
    assert (resumed["played"], resumed["cached"]) == (18 - done, done)
    assert resumed["modes"] == whole["modes"]


def test_adding_an_agent_plays_only_its_cells_and_a_broken_cell_file_is_played_again(tmp_path):
    cache = str(tmp_path)
    first = play_tournament(["random", "rule"], 20, ["fixed_landlord"], seed=5, cache=cache, bootstrap=0)
    assert first["played"] == 4
    more = play_tournament(["random", "rule", "mix0.5"], 20, ["fixed_landlord"], seed=5, cache=cache,
                           bootstrap=0, agent_factory=mix_factory)
    assert (more["played"], more["cached"]) == (5, 4)
    broken = sorted(tmp_path.iterdir())[0]
    broken.write_text("{not json")
    again = play_tournament(["random", "rule", "mix0.5"], 20, ["fixed_landlord"], seed=5, cache=cache,
                            bootstrap=0, agent_factory=mix_factory)
    assert (again["played"], again["cached"]) == (1, 8)
    assert again["modes"] == more["modes"]
    other_seed = play_tournament(["random", "rule"], 20, ["fixed_landlord"], seed=6, cache=cache, bootstrap=0)
    assert other_seed["played"] == 4


def test_a_changed_checkpoint_is_not_read_from_the_cache(tmp_path):
    from doudizhu_arena.tournament import CellCache

    ckpt = tmp_path / "model.pt"
    ckpt.write_bytes(b"one")
    store = CellCache(str(tmp_path / "cache"))
    before = store.path(store.key("fixed_landlord", f"dmc:{ckpt}", "rule", 0, 10, 200))
    ckpt.write_bytes(b"other contents")
    assert store.path(store.key("fixed_landlord", f"dmc:{ckpt}", "rule", 0, 10, 200)) != before


def test_outputs_text_markdown_heatmap():
    report = play_tournament(["random", "rule"], 20, seed=0, bootstrap=20)
    text = format_table(report, "fixed_landlord")
    assert "leaderboard" in text and "  1. rule" in text
    md = format_markdown(report)
    assert md.count("| rank | agent |") == 2 and "| `rule` |" in md
    assert heatmap_png(report).startswith(b"\x89PNG")


def test_command_line_writes_every_output(tmp_path, capsys):
    out = {k: tmp_path / f"t.{k}" for k in ("json", "md", "png")}
    report = main(["--agents", "random", "rule", "--deals", "20", "--cache", str(tmp_path / "c"),
                   "--json", str(out["json"]), "--markdown", str(out["md"]), "--heatmap", str(out["png"]),
                   "--no-progress", "--bootstrap", "20"])
    printed = capsys.readouterr().out
    assert "8 cells played" in printed and "written:" in printed
    data = json.loads(out["json"].read_text())
    assert set(data["ratings"]) == {"fixed_landlord", "bidding"}
    fixed = data["modes"]["fixed_landlord"]["cells"]
    assert fixed["rule"]["random"] == report["modes"]["fixed_landlord"]["cells"]["rule"]["random"]
    assert out["md"].read_text().startswith("Tournament: 20 deals")
    assert out["png"].read_bytes().startswith(b"\x89PNG")
    again = main(["--agents", "random", "rule", "--deals", "20", "--cache", str(tmp_path / "c"),
                  "--no-progress", "--bootstrap", "20"])
    assert again["played"] == 0 and again["modes"] == report["modes"]


@pytest.mark.parametrize("args, message", [
    (["--agents", "random", "nosuch"], "agent 'nosuch': unknown agent"),
    (["--agents", "random", "rule", "--deals", "0"], "--deals must be between 1"),
    (["--agents", "random", "rule", "random"], "'random' is named twice"),
    (["--agents", "random"], "at least 2 agents"),
    (["--agents", "random", "rule", "--json", "/nonexistent/dir/t.json"], "--json: cannot write"),
    (["--agents", "random", "rule", "--workers", "0"], "--workers must be at least 1"),
    (["--agents", "random", "dmc:/nonexistent.pt"], "agent 'dmc:/nonexistent.pt'"),
])
def test_bad_options_are_one_line_errors(args, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as err:
        main(args + ["--cache", str(tmp_path / "c")])
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert not (tmp_path / "c").exists()


def test_python_api_rejects_bad_input():
    with pytest.raises(ValueError, match="unknown mode"):
        play_tournament(["random", "rule"], 10, ["nosuch"])
    with pytest.raises(ValueError, match="named twice"):
        play_tournament(["rule", "rule"], 10)
    with pytest.raises(ValueError, match="between 1 and"):
        play_tournament(["random", "rule"], 0)
