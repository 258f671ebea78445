"""The learner interface (train.learner): every learner implements it, the run and the actors never ask
which one they hold, the sample schema is one place, and a speed change keeps the numbers.

The pinned digests are of the first 10,000 frames of samples and of three updates, for a seed, as the
code gave them before the learner interface existed (commit f1ce5d5), on one torch thread: a change
meant to keep the numbers must keep them; a change meant to alter them updates them here, saying why.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("yaml")
pytest.importorskip("tensorboard")

from helpers import ROOT, TINY, small_model  # noqa: E402

from agents.checkpoint import CheckpointError, read_checkpoint, save_checkpoint  # noqa: E402
from agents.dmc import SCORE_KINDS  # noqa: E402
from doudizhu_env.rules import Rules  # noqa: E402
from train.actor import Actor  # noqa: E402
from train.buffer import SampleBuffer  # noqa: E402
from train.config import ConfigError, load_config  # noqa: E402
from train.learner import LEARNERS, Learner, learner_class, make_learner  # noqa: E402
from train.samples import OBS_BYTES, REQUIRED, TRAJECTORY, Samples  # noqa: E402

#: (learner, overrides) -> (samples digest, weights digest after three updates, last loss)
PINNED = {
    ("dmc", ()): ("c1f27641c641a248", "086616644b33d816", 579.45776),
    ("ppo", ()): ("126b634c36030592", "113fb4c6290c40bf", 74.58815),
    ("ppo", (("warm_start_frames", 3000),)): ("9ba4bf22c617e208", "167050a61daa5fa1", 10.31088),
}
#: The fields in the order of the digest (the names are today's; the digest is of the arrays).
DIGEST_ORDER = ("obs", "action", "network", "target", "hidden_hands", *TRAJECTORY)


def digest_samples(chunks: list[Samples]) -> str:
    h = hashlib.sha256()
    for chunk in chunks:
        for name in DIGEST_ORDER:
            value = getattr(chunk, name)
            if value is not None:
                h.update(name.encode())
                h.update(np.ascontiguousarray(value).tobytes())
    return h.hexdigest()[:16]


@pytest.fixture
def one_thread():
    """One torch thread (a run's ``threads: 1``): float sums, and so the digests, depend on it."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize(("learner", "overrides"), list(PINNED))
def test_the_same_seed_gives_the_same_samples_and_updates_as_before(learner, overrides, one_thread):
    cfg = load_config(TINY, {"learner": learner, "minibatch_size": 64, **dict(overrides)})
    torch.manual_seed(cfg.seed)
    model = learner_class(cfg.learner).new_model(Rules.preset(cfg.rules), cfg.model)
    actor = Actor.from_config(model, cfg, np.random.default_rng([cfg.seed, 0, 0]))
    chunks: list[Samples] = []
    while sum(map(len, chunks)) < 10_000:
        chunks.append(actor.collect(cfg.chunk_size, 0.1, warm=actor.frames < cfg.warm_start_frames))
    buffer = SampleBuffer(cfg.buffer_size)
    for chunk in chunks:
        buffer.put(chunk)
    trainer = make_learner(cfg, model)
    stats = [trainer.update(trainer.take(buffer, cfg.batch_size)) for _ in range(3)]
    weights = hashlib.sha256()
    for _, value in sorted(model.state_dict().items()):
        weights.update(value.numpy().tobytes())
    samples_digest, weights_digest, loss = PINNED[(learner, overrides)]
    assert digest_samples(chunks) == samples_digest
    assert weights.hexdigest()[:16] == weights_digest
    assert stats[-1]["loss/all"] == pytest.approx(loss, rel=1e-5)


@pytest.mark.parametrize("name", list(LEARNERS))
def test_every_learner_implements_the_interface(name):
    kind = learner_class(name)
    assert issubclass(kind, Learner) and kind.name == name
    assert kind.score_kind in SCORE_KINDS
    cfg = load_config(TINY, {"learner": name, "minibatch_size": 64})
    model = kind.new_model(Rules.preset(cfg.rules), cfg.model)
    assert model.score_kind == kind.score_kind
    trainer = kind(model, cfg)
    trainer.learning_rate = 1e-4
    assert trainer.learning_rate == 1e-4 and trainer.updates == 0
    assert isinstance(trainer.exploration({}, 0.05, False), str)
    agent = kind.acting_agent(model, np.random.default_rng(0), 0.2, 0.2)
    assert agent.model is model


def test_an_unknown_learner_is_a_config_error_naming_the_learners():
    with pytest.raises(ConfigError, match=r"learner must be one of \('dmc', 'ppo'\), got 'a2c'"):
        load_config(TINY, {"learner": "a2c"})
    with pytest.raises(ValueError, match="learner must be one of"):
        learner_class("a2c")


def test_the_run_and_the_actors_never_ask_which_learner_they_hold():
    """Target of the training floor: no ``cfg.learner ==`` / ``isinstance(..., XLearner)`` outside the
    learner modules and the config, and one literal ``"checkpoint.pt"`` in the package code."""
    asks = re.compile(r"learner\s*[!=]=\s*['\"]|isinstance\([^)]*(Learner|PolicyAgent)\b|\.learner == ")
    literal = re.compile(r"[\"']checkpoint\.pt[\"']")
    places, literals = [], []
    for package in ("train", "agents", "doudizhu_arena", "doudizhu_env", "doudizhu_table", "benchmarks"):
        for folder, _, files in os.walk(ROOT / package):
            for name in files:
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                text = open(path, encoding="utf-8").read()
                relative = os.path.relpath(path, ROOT)
                if relative not in ("train/learner.py", "train/dmc.py", "train/ppo.py", "train/config.py"):
                    places += [f"{relative}: {m.group(0)}" for m in asks.finditer(text)]
                literals += [relative for _ in literal.finditer(text)]
    assert places == []
    assert literals == ["agents/checkpoint.py"]


def test_samples_check_their_fields():
    n = 3
    base = dict(obs=np.zeros((n, OBS_BYTES), np.uint8), action=np.zeros(n, np.int64),
                network=np.zeros(n, np.int8), target=np.zeros(n, np.float32))
    assert len(Samples(**base)) == 3 and not Samples(**base).trajectories
    with pytest.raises(ValueError, match="Samples.action has 2 rows, expected 3"):
        Samples(**{**base, "action": np.zeros(2, np.int64)})
    with pytest.raises(ValueError, match="trajectory fields"):
        Samples(**base, legal_count=np.ones(n, np.int32))
    whole = Samples(**base, legal=np.arange(6), legal_count=np.array([1, 2, 3], np.int32),
                    steps_left=np.zeros(n, np.int16), warm_start=np.zeros(n, bool),
                    log_prob=np.zeros(n, np.float32))
    assert whole.rows(1, 3).legal.tolist() == [1, 2, 3, 4, 5]
    assert whole.rows(0, 1).legal.tolist() == [0]
    joined = Samples.concat([whole.rows(0, 1), whole.rows(1, 3)])
    for name in (*REQUIRED, *TRAJECTORY):
        np.testing.assert_array_equal(getattr(joined, name), getattr(whole, name))
    with pytest.raises(ValueError, match="in some parts and not in others"):
        Samples.concat([whole, Samples(**base)])
    assert len(Samples.concat([])) == 0


def test_a_checkpoint_with_non_finite_weights_is_refused_naming_the_tensor(tmp_path):
    model = small_model()
    with torch.no_grad():
        next(iter(model.parameters()))[0].fill_(float("nan"))
    path = str(tmp_path / "nan.pt")
    save_checkpoint(path, model, frames=0, updates=0)  # its digest is of these weights: not damaged
    first = next(iter(model.state_dict()))
    with pytest.raises(CheckpointError, match=rf"its weights '{re.escape(first)}' hold \d+ NaN or infinite"):
        from agents.checkpoint import load_model

        load_model(path)


def _tiny(tmp_path, **over):
    return load_config(TINY, {"out_dir": str(tmp_path), "run_name": "r", **over})


def _hashes(folder) -> dict[str, str]:
    out = {}
    for dirpath, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            out[os.path.relpath(path, folder)] = hashlib.sha256(open(path, "rb").read()).hexdigest()
    return out


def test_a_diverging_run_ends_in_one_line_and_keeps_the_earlier_run(tmp_path, capsys):
    """--overwrite with a setting that fails only once the run trains (a learning rate that makes the
    weights infinite): one line, exit 2, and the earlier run's files are all back, byte for byte."""
    from train.run import main

    main(["--config", TINY, "--out-dir", str(tmp_path), "--run-name", "r", "--total-frames", "2000",
          "--eval-deals", "0"])
    before = _hashes(tmp_path / "r")
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["--config", TINY, "--out-dir", str(tmp_path), "--run-name", "r", "--overwrite",
              "--learning-rate", "1e30", "--eval-deals", "0"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("python -m train.run: error: ") and "NaN" in err[-1]
    assert err == [err[-1]] and err[-1].endswith("outputs are back in " + repr(str(tmp_path / "r")) +
                                                 " (this run saved no checkpoint)")
    assert _hashes(tmp_path / "r") == before


def test_a_diverging_run_keeps_its_last_good_checkpoint(tmp_path, capsys):
    from train.run import main

    args = ["--config", TINY, "--out-dir", str(tmp_path), "--run-name", "r", "--eval-deals", "0"]
    main([*args, "--total-frames", "2000"])
    saved = read_checkpoint(str(tmp_path / "r" / "checkpoint.pt"))
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main([*args, "--resume", "--learning-rate", "1e30", "--total-frames", "5000"])
    assert stop.value.code == 2
    assert "the last good checkpoint is kept" in capsys.readouterr().err
    again = read_checkpoint(str(tmp_path / "r" / "checkpoint.pt"))
    assert again["frames"] == saved["frames"]
    assert all(torch.isfinite(v).all() for v in again["model"].values() if v.is_floating_point())


def test_overwrite_deletes_the_earlier_run_once_the_new_one_saved(tmp_path):
    from train.run import train
    from train.run_folder import ASIDE_FOLDER, run_outputs

    train(_tiny(tmp_path, total_frames=600, eval_deals=0))
    first = _hashes(tmp_path / "r")
    events = sum("tfevents" in p for p in first)
    train(_tiny(tmp_path, total_frames=300, eval_deals=0, seed=3), overwrite=True)
    assert not (tmp_path / "r" / ASIDE_FOLDER).exists()
    assert _hashes(tmp_path / "r")["checkpoint.pt"] != first["checkpoint.pt"]
    assert sum("tfevents" in p for p in run_outputs(str(tmp_path / "r"))) == events  # this run's only


def test_a_folder_left_aside_by_a_killed_run_is_not_overwritten(tmp_path):
    from train.run import train
    from train.run_folder import ASIDE_FOLDER

    train(_tiny(tmp_path, total_frames=300, eval_deals=0))
    (tmp_path / "r" / ASIDE_FOLDER).mkdir()
    with pytest.raises(ConfigError, match="holds the outputs of a run replaced by one that never saved"):
        train(_tiny(tmp_path, total_frames=300, eval_deals=0), overwrite=True)


def test_samples_are_a_dataclass_the_learners_read():
    """Both learners read the same schema: the PPO samples carry every field, DMC's the four."""
    cfg = load_config(TINY, {"learner": "ppo", "minibatch_size": 64})
    model = small_model()
    chunk = Actor.from_config(model, cfg, np.random.default_rng(0)).collect(200, 0.1)
    assert dataclasses.is_dataclass(chunk) and chunk.trajectories and chunk.hidden_hands is not None
    plain = Actor.from_config(model, dataclasses.replace(cfg, learner="dmc"),
                              np.random.default_rng(0)).collect(200, 0.1)
    assert not plain.trajectories and plain.hidden_hands is None


def test_more_threads_than_cores_is_allowed_but_said(tmp_path, capsys):
    from train.run import train

    threads = (os.cpu_count() or 1) + 1
    train(_tiny(tmp_path, total_frames=300, eval_deals=0, threads=threads))
    assert f"threads: {threads} is more than this machine's {os.cpu_count()} cores" in capsys.readouterr().out


@pytest.mark.parametrize("learner", list(LEARNERS))
def test_a_tiny_run_on_cuda(tmp_path, learner):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device on this machine: device: cuda is tested where one exists")
    from train.run import train

    cfg = _tiny(tmp_path, total_frames=3000, eval_deals=2, device="cuda", learner=learner, minibatch_size=64)
    train(cfg)
    saved = read_checkpoint(str(tmp_path / "r" / "checkpoint.pt"))
    assert saved["updates"] > 0 and saved["learner"] == learner


def test_eval_json_is_strict_json_when_a_role_has_no_interval(tmp_path):
    """Two deals with bidding: some role gets one game (no interval); eval.json says null, never NaN."""
    import json

    from train.run import train

    train(_tiny(tmp_path, total_frames=300, eval_deals=2, rules="standard"))

    def refuse(name):
        raise AssertionError(f"eval.json holds {name}")

    data = json.loads((tmp_path / "r" / "eval.json").read_text(), parse_constant=refuse)
    assert data["frames"] >= 300 and data["results"]
