"""The shipped agent: weights in the repository, loaded with ``weights_only=True``, playing full games."""

import numpy as np
import pytest
import torch
from helpers import STANDARD

from agents.checkpoint import CheckpointError, export_weights, load_model, read_checkpoint, save_checkpoint
from agents.dmc import DMCAgent, ModelConfig, ScoreModel
from agents.registry import PRETRAINED, make_agent
from doudizhu_arena.arena import run_arena
from doudizhu_env import engine
from doudizhu_env.rules import Rules


def test_shipped_weights_are_a_plain_weights_only_file():
    data = torch.load(PRETRAINED, map_location="cpu", weights_only=True)  # raises on any pickled object
    assert data["optimizer"] is None
    assert Rules.from_dict(data["rules"]) == STANDARD
    assert all(t.dtype == torch.float16 for t in data["model"].values() if t.is_floating_point())
    assert data["frames"] > 1_000_000
    assert read_checkpoint(PRETRAINED)["model_config"] == data["model_config"]


def test_pretrained_spec_loads_the_shipped_agent():
    agent = make_agent("pretrained", rules=STANDARD)
    assert isinstance(agent, DMCAgent)
    assert all(p.dtype == torch.float32 for p in agent.model.parameters())
    with pytest.raises(ValueError, match="rules"):
        make_agent("pretrained", rules=Rules.preset("douzero"))


@pytest.mark.parametrize("bidding", [True, False])
def test_pretrained_plays_full_games_through_the_arena(bidding):
    rules = Rules.preset("standard", bidding=bidding)
    report = run_arena(["pretrained", "random", "random"], 20, rules, seed=5)
    entry = report["agents"]["pretrained"]
    assert entry["all"]["games"] == 60
    # a trained agent beats random players clearly, even on 20 deals
    assert entry["all"]["wp"]["mean"] > 0.6


def test_export_keeps_the_play_and_halves_the_file(tmp_path):
    torch.manual_seed(0)
    model = ScoreModel(STANDARD, ModelConfig(hidden=32, lstm_hidden=16, action_hidden=16, head_hidden=32))
    full = tmp_path / "full.pt"
    save_checkpoint(str(full), model, torch.optim.Adam(model.parameters()), frames=123, updates=4,
                    train_config={"seed": 0})
    small = tmp_path / "small.pt"
    meta = export_weights(str(full), str(small))
    export_weights(str(full), str(tmp_path / "float32.pt"), half=False)
    assert meta["frames"] == 123 and "optimizer" not in meta
    assert small.stat().st_size < 0.6 * (tmp_path / "float32.pt").stat().st_size
    exported = load_model(str(small))
    state = engine.reset(np.random.default_rng(0), 64, STANDARD)
    for _ in range(30):
        a, b = DMCAgent(model).decide(state)[0], DMCAgent(exported).decide(state)[0]
        assert (a == b).mean() > 0.95  # float16 rounding may flip a near tie, rarely
        state = engine.step(state, a, auto_reset=True)


def test_export_of_a_missing_checkpoint_is_a_checkpoint_error(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint"):
        export_weights(str(tmp_path / "none.pt"), str(tmp_path / "out.pt"))
    assert not (tmp_path / "out.pt").exists()
