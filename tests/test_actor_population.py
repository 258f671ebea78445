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
from train.actor import Actor, PastSelves, explore  # noqa: E402
from train.config import ConfigError, load_config  # noqa: E402
from train.run import train  # noqa: E402
from train.samples import pack_obs  # noqa: E402


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
            out += [o for o in actor.step(epsilon, warm) if len(o.target)]
    return out


def _pairs(samples: list[dict]) -> list[tuple[bytes, int]]:
    return [(row.tobytes(), int(a)) for s in samples for row, a in zip(s.obs, s.action, strict=True)]


@pytest.mark.parametrize("fixed_share", [0.0, 1.0])
def test_warm_start_records_the_teachers_moves(fixed_share):
    teacher = Spy()
    actor = Actor(small_model(), 24, "logadp", np.random.default_rng(0), bidding_epsilon=0.0,
                  fixed_landlord_share=fixed_share, warm_start_agent=teacher)
    samples = _collect(actor, 120, epsilon=0.0, warm=True)
    pairs = _pairs(samples)
    assert len(pairs) > 200
    assert all(p in teacher.seen for p in pairs)  # every sample is a move the teacher chose there
    assert actor.frames == 120 * 24  # every decision of every game is recorded


def test_warm_start_explores_like_the_model():
    teacher = Spy()
    actor = Actor(small_model(), 24, "logadp", np.random.default_rng(1), fixed_landlord_share=1.0,
                  warm_start_agent=teacher)
    pairs = _pairs(_collect(actor, 120, epsilon=0.5, warm=True))
    off = sum(p not in teacher.seen for p in pairs) / len(pairs)
    assert 0.1 < off < 0.5  # about half the moves random, many of them the teacher's move anyway


def test_dagger_records_the_teachers_labels_at_the_models_own_decisions():
    """warm_start_mode: dagger. The model (a policy drawing its moves) plays its seats against the
    opponents, and each of its decisions is recorded with the move the teacher chose there: the
    labels are the teacher's, the hands the model's (its moves differ from the labels)."""
    teacher = Spy()
    actor = Actor(small_model(), 24, "logadp", np.random.default_rng(2), fixed_landlord_share=1.0,
                  opponents=[RuleAgent()], opponent_share=0.5, warm_start_agent=teacher, learner="ppo",
                  dagger=True)
    samples = _collect(actor, 150, epsilon=0.0, warm=True)
    pairs = _pairs(samples)
    assert len(pairs) > 200 and all(s.warm_start.all() for s in samples)
    assert all(p in teacher.seen for p in pairs)  # every label is the teacher's move at that state
    # the teacher was asked about the model's decisions only (not the opponents' seats) ...
    assert sum(len(v.to_act) for v in teacher.views) == actor.frames < 150 * 24
    # ... and the model played its own moves: an untrained policy rarely agrees with RuleAgent
    clone = Actor(small_model(), 24, "logadp", np.random.default_rng(2), fixed_landlord_share=1.0,
                  opponents=[RuleAgent()], opponent_share=0.5, warm_start_agent=Spy(), learner="ppo")
    cloned = _pairs(_collect(clone, 150, epsilon=0.0, warm=True))
    assert clone.frames == 150 * 24 and {o for o, _ in cloned} != {o for o, _ in pairs}


def test_without_warm_the_teacher_does_not_play():
    teacher = Spy()
    actor = Actor(small_model(), 8, "logadp", np.random.default_rng(0), warm_start_agent=teacher)
    _collect(actor, 30, epsilon=0.0, warm=False)
    assert not teacher.views


def test_explore_keeps_finished_games_and_draws_legal_moves():
    state = engine.reset(np.random.default_rng(0), 64, dataclasses.replace(STANDARD, bidding=False))
    network = np.where(np.arange(64) % 2 == 0, 2, -1)
    actions = np.full(64, -5, np.int64)
    out = explore(actions, state, network, np.ones(64), np.random.default_rng(0))
    assert (out[1::2] == -5).all()
    assert engine.is_legal(engine.take(state, np.arange(0, 64, 2)), out[::2]).all()


def _seats(actor: Actor) -> np.ndarray:
    return np.concatenate([t.seat_player for t in actor.groups])


@pytest.mark.parametrize("share", [0.25, 1.0])
def test_opponents_play_a_share_of_the_games(share):
    opponent = Spy()
    actor = Actor(small_model(), 24, "logadp", np.random.default_rng(3), fixed_landlord_share=0.5,
                  opponents=[opponent], opponent_share=share)
    model_seats = (_seats(actor) == 0).sum(1)
    mixed = sum(int(round(t.state.num_games * share)) for t in actor.groups)
    assert (model_seats < 3).sum() == mixed
    assert set(model_seats[model_seats < 3]) <= {1, 2}  # the model plays one or two seats there
    steps = 80
    samples = _collect(actor, steps, epsilon=0.0)
    theirs = sum(v.num_games for v in opponent.views)
    assert actor.frames + theirs == steps * 24  # each decision is the model's or the opponent's
    assert actor.frames == sum(len(s.target) for s in samples) + sum(
        int((t.recorder.game >= 0).sum()) for t in actor.groups)  # recorded = trained on or in progress
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
              warm_start_agent=Spy()).collect(300, 0.1)
    for field in dataclasses.fields(a):
        np.testing.assert_array_equal(getattr(a, field.name), getattr(b, field.name))


# -- the model's own past as an opponent (``past``) ---------------------------------------------


def _q(agent, state) -> np.ndarray:
    """The agent's Q-values of every legal action of ``state``."""
    from doudizhu_env.legal import bits_to_ids

    return agent.action_values(state, *bits_to_ids(engine.legal_bits(state)))


def test_past_selves_keeps_frozen_copies_of_the_newest_snapshots():
    model = small_model()
    past = PastSelves(model, every=100, size=3)
    state = engine.reset(np.random.default_rng(0), 8, STANDARD)
    start = _q(past.players[0], state)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.5)  # the learner moves the model: the copy taken at the start stays as it was
    np.testing.assert_array_equal(_q(past.players[0], state), start)
    assert past.taken_at == [0]
    for frames in (99, 100, 150, 230, 250, 420):
        past.update(model, frames)
    assert past.taken_at == [100, 230, 420]  # a copy once every 100 frames have passed; the newest 3 kept
    assert not np.array_equal(_q(past.players[0], state), start)
    assert all(not p.requires_grad for player in past.players for p in player.model.parameters())


def test_past_opponent_plays_one_copy_for_the_whole_hand():
    model = small_model()
    actor = Actor(model, 24, "logadp", np.random.default_rng(6), fixed_landlord_share=0.5,
                  opponents=[PastSelves(model, every=40, size=4)], opponent_share=1.0)
    past, drawn = actor.opponents[0], set()
    with torch.no_grad():
        for step in range(400):
            if step == 150:  # the pool has turned over; from now on it stays as it is
                assert len(past.taken_at) == 4 and past.taken_at[0] > 0
                past.every = 10**9
            before = [t.player_of.copy() for t in actor.groups]
            actor.step(0.0)
            for table, was in zip(actor.groups, before, strict=True):
                changed = np.array([a is not b for a, b in zip(was, table.player_of, strict=True)])
                assert not (changed & ~table.state.ended).any()  # a new copy only for a new hand
                drawn |= {id(p) for p in table.player_of}
    assert {id(p) for p in past.players} <= drawn  # every copy of the pool has played


def test_past_opponents_train_deterministically(tmp_path):
    runs = []
    for name in ("a", "b"):
        train(_cfg(tmp_path, name, opponents=["rule", "past"], opponent_share=0.75, warm_start_frames=0,
                   past_every_frames=500, past_pool_size=2))
        runs.append(read_checkpoint(str(tmp_path / name / "checkpoint.pt")))
    a, b = runs
    assert a["frames"] == b["frames"] >= 3000
    for key, value in a["model"].items():
        torch.testing.assert_close(value, b["model"][key], rtol=0, atol=0)


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
    ({"past_every_frames": 0}, "past_every_frames must be >= 1"),
    ({"past_pool_size": 0}, "past_pool_size must be >= 1"),
    ({"warm_start_mode": "imitate"}, "warm_start_mode must be one of \\('clone', 'dagger'\\)"),
    ({"warm_start_mode": "dagger"}, "warm_start_mode: dagger needs a learner that learns labels"),
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
