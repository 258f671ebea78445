"""Actors with other players: opponents in a share of the games, and the warm start from an agent's play.

Written from the config fields' rules (``train.config.TrainConfig``): in ``opponent_share`` of the
games the model plays one or two seats and an opponent the others, and only the model's
decisions become samples; during the warm start the warm-start agent plays every seat,
epsilon-greedily, and all its decisions become samples.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("yaml")

from helpers import STANDARD, TINY, small_model  # noqa: E402

from agents.base import Agent  # noqa: E402
from agents.checkpoint import read_checkpoint  # noqa: E402
from agents.rule import RuleAgent  # noqa: E402
from doudizhu_env import engine  # noqa: E402
from doudizhu_env.observation import observe  # noqa: E402
from train.actor import Actor, explore  # noqa: E402
from train.buffer import pack_obs  # noqa: E402
from train.config import ConfigError, load_config  # noqa: E402
from train.dmc import train  # noqa: E402


class Spy(Agent):
    """RuleAgent, remembering every (observation, action) it was asked for and the views it saw."""

    def __init__(self):
        self.inner = RuleAgent()
        self.seen: set[tuple[bytes, int]] = set()
        self.views: list[engine.State] = []

    def act(self, view):
        actions = self.inner.act(view)
        self.views.append(view)
        for row, a in zip(pack_obs(observe(view)), actions, strict=True):
            self.seen.add((row.tobytes(), int(a)))
        return actions


def _collect(actor: Actor, steps: int, epsilon: float, warm: bool = False) -> list[dict]:
    out = []
    with torch.no_grad():
        for _ in range(steps):
            out += [o for o in actor.step(epsilon, warm) if len(o["target"])]
    return out


def _pairs(samples: list[dict]) -> list[tuple[bytes, int]]:
    return [(row.tobytes(), int(a)) for s in samples for row, a in zip(s["obs"], s["action"], strict=True)]


@pytest.mark.parametrize("fixed_share", [0.0, 1.0])
def test_warm_start_records_the_teachers_moves(fixed_share):
    teacher = Spy()
    actor = Actor(small_model(), 24, "logadp", np.random.default_rng(0), bidding_epsilon=0.0,
                  fixed_landlord_share=fixed_share, teacher=teacher)
    samples = _collect(actor, 120, epsilon=0.0, warm=True)
    pairs = _pairs(samples)
    assert len(pairs) > 200
    assert all(p in teacher.seen for p in pairs)  # every sample is a move the teacher chose there
    assert actor.frames == 120 * 24  # every decision of every game is recorded


def test_warm_start_explores_like_the_model():
    teacher = Spy()
    actor = Actor(small_model(), 24, "logadp", np.random.default_rng(1), fixed_landlord_share=1.0,
                  teacher=teacher)
    pairs = _pairs(_collect(actor, 120, epsilon=0.5, warm=True))
    off = sum(p not in teacher.seen for p in pairs) / len(pairs)
    assert 0.1 < off < 0.5  # about half the moves random, many of them the teacher's move anyway


def test_without_warm_the_teacher_does_not_play():
    teacher = Spy()
    actor = Actor(small_model(), 8, "logadp", np.random.default_rng(0), teacher=teacher)
    _collect(actor, 30, epsilon=0.0, warm=False)
    assert not teacher.views


def test_explore_keeps_finished_games_and_draws_legal_moves():
    state = engine.reset(np.random.default_rng(0), 64, dataclasses.replace(STANDARD, bidding=False))
    pos = np.where(np.arange(64) % 2 == 0, 2, -1)
    actions = np.full(64, -5, np.int64)
    out = explore(actions, state, pos, np.ones(64), np.random.default_rng(0))
    assert (out[1::2] == -5).all()
    assert engine.is_legal(engine.take(state, np.arange(0, 64, 2)), out[::2]).all()


def _seats(actor: Actor) -> np.ndarray:
    return np.concatenate([t.seat_of for t in actor.tables])


@pytest.mark.parametrize("share", [0.25, 1.0])
def test_opponents_play_a_share_of_the_games(share):
    opponent = Spy()
    actor = Actor(small_model(), 24, "logadp", np.random.default_rng(3), fixed_landlord_share=0.5,
                  opponents=[opponent], opponent_share=share)
    model_seats = (_seats(actor) == 0).sum(1)
    mixed = sum(int(round(t.state.num_games * share)) for t in actor.tables)
    assert (model_seats < 3).sum() == mixed
    assert set(model_seats[model_seats < 3]) <= {1, 2}  # the model plays one or two seats there
    steps = 80
    samples = _collect(actor, steps, epsilon=0.0)
    theirs = sum(v.num_games for v in opponent.views)
    assert actor.frames + theirs == steps * 24  # each decision is the model's or the opponent's
    assert actor.frames == sum(len(s["target"]) for s in samples) + sum(
        int((t.recorder.game >= 0).sum()) for t in actor.tables)  # recorded = trained on or in progress
    for view in opponent.views:  # opponents get seat views: the other hands are hidden
        others = np.ones((view.num_games, 3), bool)
        others[np.arange(view.num_games), view.to_act] = False
        assert (view.hands[others] == 0).all()


def test_opponent_seats_are_drawn_anew_each_hand():
    actor = Actor(small_model(), 16, "logadp", np.random.default_rng(4), fixed_landlord_share=1.0,
                  opponents=[RuleAgent(), RuleAgent()], opponent_share=1.0)
    before, seen = _seats(actor).copy(), set()
    for _ in range(20):
        _collect(actor, 10, epsilon=0.0)
        seen |= {tuple(row) for row in _seats(actor)}
    assert (_seats(actor) != before).any(1).mean() > 0.3  # new seatings after hands ended
    assert len(seen) == 12  # every seating: the model at any 1 or 2 seats, either opponent at the rest


def test_self_play_is_unchanged_without_opponents():
    a = Actor(small_model(), 16, "adp", np.random.default_rng(5)).collect(300, 0.1)
    b = Actor(small_model(), 16, "adp", np.random.default_rng(5), opponents=[Spy()], opponent_share=0.0,
              teacher=Spy()).collect(300, 0.1)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


def _cfg(tmp_path, name, **over):
    return load_config(TINY, {"out_dir": str(tmp_path), "run_name": name, "total_frames": 3000,
                              "eval_deals": 0, "opponents": ["rule"], "opponent_share": 0.5,
                              "warm_start_frames": 1000, **over})


@pytest.mark.slow  # two short training runs: make test-slow
def test_warm_start_and_opponents_train_deterministically(tmp_path):
    for name in ("a", "b"):
        train(_cfg(tmp_path, name))
    a, b = (read_checkpoint(str(tmp_path / n / "checkpoint.pt")) for n in ("a", "b"))
    assert a["frames"] == b["frames"] >= 3000
    for key, value in a["model"].items():
        torch.testing.assert_close(value, b["model"][key], rtol=0, atol=0)
    train(_cfg(tmp_path, "c", seed=1))
    c = read_checkpoint(str(tmp_path / "c" / "checkpoint.pt"))
    assert any(not torch.equal(v, c["model"][k]) for k, v in a["model"].items())


@pytest.mark.parametrize("over, message", [
    ({"opponents": [], "opponent_share": 0.5}, "opponent_share is 0.5 but opponents is empty"),
    ({"opponent_share": 1.5}, r"opponent_share must be in \[0, 1\]"),
    ({"warm_start_frames": -1}, "warm_start_frames must be >= 0"),
])
def test_bad_population_settings(tmp_path, over, message):
    with pytest.raises(ConfigError, match=message):
        _cfg(tmp_path, "bad", **over)


@pytest.mark.parametrize("over, message", [
    ({"opponents": ["rul"]}, "opponents: agent 'rul': unknown agent 'rul'"),
    ({"warm_start_agent": "nobody"}, "warm_start_agent: agent 'nobody': unknown agent"),
])
def test_bad_agents_fail_before_training(tmp_path, over, message):
    with pytest.raises(ConfigError, match=message):
        train(_cfg(tmp_path, "bad", **over))
    assert not (tmp_path / "bad").exists()
