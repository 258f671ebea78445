"""The hand head (``model.hand_head``): an auxiliary head that predicts the two hidden hands.

Its labels are the true hands of the two other seats at each recorded decision,
it only adds a term to the learner's loss, and it never changes what the model
plays or sees.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("yaml")
pytest.importorskip("tensorboard")

from helpers import STANDARD, TINY, dmc_learner, scalars, small_config, small_model, without  # noqa: E402

from agents.checkpoint import load_model, read_checkpoint  # noqa: E402
from agents.dmc import HAND_CLASSES, DMCAgent  # noqa: E402
from doudizhu_env import engine  # noqa: E402
from doudizhu_env.cards import NUM_RANKS, parse_hand  # noqa: E402
from doudizhu_env.legal import bits_to_ids  # noqa: E402
from doudizhu_env.observation import observe  # noqa: E402
from train.actor import Actor, hidden_hands  # noqa: E402
from train.buffer import EpisodeRecorder  # noqa: E402
from train.config import ConfigError, load_config  # noqa: E402
from train.run import train  # noqa: E402
from train.samples import unpack_obs  # noqa: E402

HEAD = dataclasses.replace(small_config(), hand_head=True)


def hand_model(seed: int = 0):
    return small_model(cfg=HEAD, seed=seed)


def counts(cards: str) -> np.ndarray:
    return parse_hand(cards).astype(np.int8)


@pytest.mark.parametrize("to_act, expected", [
    (0, ("4455", "66")),      # the seat after seat 0 is seat 1, then seat 2
    (1, ("66", "3334")),
    (2, ("3334", "4455")),
])
def test_hidden_hands_are_the_next_seat_then_the_one_after(to_act, expected):
    s = engine.reset(np.random.default_rng(0), 1, STANDARD)
    hands = np.stack([counts("3334"), counts("4455"), counts("66")])[None]
    s = dataclasses.replace(s, hands=hands, to_act=np.array([to_act]))
    got = hidden_hands(s, np.array([0]))
    assert got.shape == (1, 2, NUM_RANKS)
    assert np.array_equal(got[0], np.stack([counts(expected[0]), counts(expected[1])]))


def test_recorded_labels_are_the_hidden_hands_at_each_decision():
    """Replaying a batch step by step: every sample's labels are the hands the two other seats held
    when its decision was made (the observation identifies the decision)."""
    model = hand_model()
    actor = Actor(model, 8, "adp", np.random.default_rng(3), fixed_landlord_share=0.5)
    seen = {}
    samples = []
    with torch.no_grad():
        for _ in range(400):
            for table in actor.groups:
                s = table.state  # every game is live (the actor's games are dealt again as they end)
                labels = hidden_hands(s, np.arange(s.num_games))
                for row, label in zip(observe(s), labels, strict=True):
                    seen.setdefault(row.astype(np.uint8).tobytes(), []).append(label)
            samples += [out for out in actor.step(0.1) if len(out.target)]
    assert samples
    checked = 0
    for chunk in samples:
        assert chunk.hidden_hands.shape == (len(chunk.target), 2, NUM_RANKS)
        for obs, labels in zip(unpack_obs(chunk.obs), chunk.hidden_hands, strict=True):
            options = seen[obs.astype(np.uint8).tobytes()]
            assert any(np.array_equal(labels, o) for o in options)
            checked += 1
    assert checked > 100


def test_a_recorder_with_hands_needs_them():
    rec = EpisodeRecorder(2, "adp", hidden_hands=True)
    obs = np.zeros((1, rec.obs.shape[1] * 8), np.float32)
    with pytest.raises(ValueError, match="hidden"):
        rec.record(np.array([0]), np.array([0]), np.array([2]), np.array([1]), obs)


def test_without_the_head_no_labels_are_recorded():
    batch = Actor(small_model(), 8, "adp", np.random.default_rng(0)).collect(64, epsilon=0.1)
    assert batch.hidden_hands is None


def test_the_head_never_changes_what_the_model_plays():
    """The same weights with and without the head give the same Q-values and choices."""
    with_head = hand_model(seed=4)
    without = small_model(seed=4)
    state = {k: v for k, v in with_head.state_dict().items() if "hand_out" not in k}
    without.load_state_dict(state)
    s = engine.reset(np.random.default_rng(5), 64, STANDARD)
    a = DMCAgent(with_head, rng=np.random.default_rng(0))
    b = DMCAgent(without, rng=np.random.default_rng(0))
    for _ in range(30):
        ids, offsets = bits_to_ids(engine.legal_bits(s))
        assert np.allclose(a.action_values(s, ids, offsets), b.action_values(s, ids, offsets))
        act = a.act(s)
        assert np.array_equal(act, b.act(s))
        s = engine.step(s, act, auto_reset=True)


def test_q_and_hands_gives_the_scores_of_score():
    model = hand_model(seed=2)
    batch = Actor(model, 16, "adp", np.random.default_rng(1)).collect(256, epsilon=0.1)
    obs = torch.from_numpy(unpack_obs(batch.obs))
    network, ids = batch.network.astype(np.int64), batch.action.astype(np.int64)
    with torch.no_grad():
        q, logits = model.q_and_hands(obs, network, ids)
        assert torch.allclose(q, model.score(obs, network, ids, np.arange(len(ids))))
    assert logits.shape == (len(ids), 2, NUM_RANKS, HAND_CLASSES)
    with pytest.raises(ValueError, match="hand_head"):
        small_model().q_and_hands(obs, network, ids)


def test_the_learner_learns_the_hands_and_reports_their_loss():
    model = hand_model(seed=1)
    batch = Actor(model, 32, "adp", np.random.default_rng(0)).collect(512, epsilon=0.1)
    batch = batch.rows(0, 512)
    learner = dmc_learner(model, learning_rate=3e-3, max_grad_norm=10.0, hand_loss_weight=1.0)
    first = learner.update(batch)
    assert first["loss/hands"] == pytest.approx(np.log(HAND_CLASSES), rel=0.2)  # near uniform at the start
    for _ in range(60):
        last = learner.update(batch)
    assert last["loss/hands"] < 0.7 * first["loss/hands"]
    with pytest.raises(ValueError, match="no hidden_hands"):
        learner.update(without(batch, "hidden_hands"))


def test_a_zero_weight_leaves_the_q_loss_alone():
    """hand_loss_weight 0: the update is the plain squared error's (the head is not trained)."""
    a, b = hand_model(seed=3), small_model(seed=3)
    b.load_state_dict({k: v for k, v in a.state_dict().items() if "hand_out" not in k})
    batch = Actor(a, 16, "adp", np.random.default_rng(2)).collect(256, epsilon=0.1)
    head_before = a.nets["landlord"].hand_out.weight.detach().clone()
    stats_a = dmc_learner(a, learning_rate=1e-3, hand_loss_weight=0.0).update(batch)
    stats_b = dmc_learner(b, learning_rate=1e-3).update(without(batch, "hidden_hands"))
    assert stats_a["loss/all"] == pytest.approx(stats_b["loss/all"], rel=1e-5)
    assert torch.equal(a.nets["landlord"].hand_out.weight, head_before)
    for k, v in b.state_dict().items():
        assert torch.allclose(a.state_dict()[k], v, atol=1e-6), k


def test_parameters_counts_the_head():
    model = hand_model()
    assert sum(p.numel() for p in model.parameters()) == HEAD.parameters()
    assert HEAD.parameters() > small_config().parameters()


def test_tiny_run_with_the_head_is_deterministic_and_loads(tmp_path):
    def run(name):
        cfg = load_config(TINY, {"out_dir": str(tmp_path / name), "eval_deals": 0, "total_frames": 1500,
                                 "seed": 7, "model.hand_head": True})
        train(cfg)
        return os.path.join(str(tmp_path / name), cfg.run_name)

    a, b = run("a"), run("b")
    ca, cb = (read_checkpoint(os.path.join(run, "checkpoint.pt")) for run in (a, b))
    assert ca["updates"] > 0 and ca["model"].keys() == cb["model"].keys()
    assert all(torch.equal(ca["model"][k], cb["model"][k]) for k in ca["model"])
    assert any("hand_out" in k for k in ca["model"])
    logged = scalars(a)
    assert "loss/hands" in logged and logged["loss/hands"] == scalars(b)["loss/hands"]
    model = load_model(os.path.join(a, "checkpoint.pt"))
    assert model.cfg.hand_head
    s = engine.reset(np.random.default_rng(0), 4, STANDARD)
    agent = DMCAgent(model, rng=np.random.default_rng(0))
    while not s.ended.all():
        s = engine.step(s, agent.act(s))


@pytest.mark.parametrize("weight", [-0.5, float("inf"), float("nan")])
def test_a_bad_hand_loss_weight_is_refused(weight):
    with pytest.raises(ConfigError, match="hand_loss_weight"):
        load_config(TINY, {"hand_loss_weight": weight})


# -- the hand head's benchmark: the head against counting alone ---------------------------------


def brute_force_prior(first: str, second: str) -> np.ndarray:
    """Every split of the two hands' cards (as cards) into hands of their sizes, equally likely: the
    ``(2, NUM_RANKS, HAND_CLASSES)`` law of each seat's count per rank."""
    from itertools import combinations

    cards = [r for r, n in enumerate(counts(first) + counts(second)) for _ in range(n)]
    size = int(counts(first).sum())
    law = np.zeros((2, NUM_RANKS, HAND_CLASSES))
    splits = list(combinations(range(len(cards)), size))
    for chosen in splits:
        mine = np.bincount([cards[i] for i in chosen], minlength=NUM_RANKS)
        theirs = counts(first) + counts(second) - mine
        law[0, np.arange(NUM_RANKS), mine] += 1
        law[1, np.arange(NUM_RANKS), theirs] += 1
    return law / len(splits)


@pytest.mark.parametrize("first, second", [
    ("3", "4"),
    ("33", "34"),
    ("3345", "3"),
    ("2", "XD"),
    ("3333", "4"),
    ("34567", "789T"),
])
def test_counting_prior_is_the_law_of_a_random_split(first, second):
    from benchmarks.hand_head import counting_prior

    hidden = np.stack([counts(first), counts(second)])[None]
    got = counting_prior(hidden)[0]
    assert np.allclose(got, brute_force_prior(first, second))
    assert np.allclose(got.sum(-1), 1.0)


def test_hand_head_command_compares_the_head_with_counting(tmp_path, capsys):
    from agents.checkpoint import save_checkpoint
    from benchmarks.hand_head import main

    model = hand_model(seed=6)
    path = tmp_path / "head.pt"
    save_checkpoint(str(path), model, torch.optim.Adam(model.parameters()), frames=1, updates=1,
                    train_config={"seed": 0})
    out = tmp_path / "hands.json"
    figures = main(["--agent", f"dmc:{path}", "--games", "8", "--steps", "60", "--json", str(out)])
    assert figures["decisions"] > 40
    # an untrained head is near uniform over 5 classes; counting knows every rank with no unseen card
    assert figures["head_ce"] == pytest.approx(np.log(HAND_CLASSES), rel=0.25)
    assert 0 < figures["counting_ce"] < figures["head_ce"]
    assert "hand head" in capsys.readouterr().out and out.exists()

    plain = tmp_path / "plain.pt"
    other = small_model()
    save_checkpoint(str(plain), other, torch.optim.Adam(other.parameters()), frames=1, updates=1,
                    train_config={"seed": 0})
    with pytest.raises(SystemExit) as err:
        main(["--agent", f"dmc:{plain}"])
    assert err.value.code == 2
    assert "hand head" in capsys.readouterr().err


def test_a_chunk_of_no_samples_leaves_the_buffer_as_it_was():
    """An actor stopped before its first sample sends a chunk without ``hands``; the buffer keeps
    only chunks with samples, so batches taken after it still carry the labels."""
    from train.buffer import SampleBuffer
    from train.samples import Samples

    chunk = Actor(hand_model(), 8, "adp", np.random.default_rng(0)).collect(64, epsilon=0.1)
    buffer = SampleBuffer(4096)
    buffer.put(Samples.empty())
    buffer.put(chunk)
    buffer.put(Samples.empty())
    assert buffer.size == len(chunk.target) and len(buffer.parts) == 1
    batch = buffer.take(len(chunk.target))
    assert np.array_equal(batch.hidden_hands, chunk.hidden_hands)
