"""The learner interface (train.learner): every learner implements it, the run and the actors never ask
which one they hold, the sample schema is one place, and a speed change keeps the numbers.

The pinned digests are of the first 10,000 frames of samples and of three updates, for a seed, as the
code gave them before the learner interface existed (commit f1ce5d5), on one torch thread: a change
meant to keep the numbers must keep them; a change meant to alter them updates them here, saying why.

Bytes depend on the CPU: torch's kernels sum in another order on another instruction set (its CPU
capability, ``AVX2`` or ``AVX512``). What the network computes in floats then differs in the last
bits: the PPO samples' ``log_prob`` (their other fields, the moves included, are the same bytes),
and the weights after three Adam steps (whose first steps move a weight by the sign of its gradient,
so a gradient near 0 can move the other way). So the exact digests are pinned per capability and
compared where one is pinned for the machine's, and on every machine the test compares the bytes of
everything else and, within float noise, the sum of ``log_prob``, the last loss and two figures of
the weights' movement from their initial values: the sum of its absolute values (measured to differ
by 1e-5 between capabilities) and its projection on a fixed random direction (by 2e-3), each far
below what a changed update moves them by.
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
from train.learner import LEARNERS, Learner, learner_class, make_learner, plan_networks  # noqa: E402
from train.samples import OBS_BYTES, REQUIRED, TRAJECTORY, Samples  # noqa: E402

#: (learner, overrides) -> (digest of the samples but their ``log_prob``, the sum of ``log_prob``, the
#: last loss, the weights' movement: the sum of its absolute values and its projection on a fixed
#: random direction, the sum of ``log_pi``)
PINNED = {
    ("dmc", ()): ("c1f27641c641a248", 0.0, 579.45776, 29.383546, -0.0116127, 0.0),
    ("ppo", ()): ("d95993215da32379", -9853.4354, 74.58815, 115.58897, -0.328775, -9853.4045),
    ("ppo", (("warm_start_frames", 3000),)): ("e85b9d13821861d5", -6698.5045, 10.31088, 107.41635, -0.629745,
                                              -6698.3930),
}
#: (samples digest, weights digest) after three updates, exact, per torch CPU capability: the
#: AVX512 ones as the code gave them at f1ce5d5, the AVX2 ones on an AMD EPYC machine at 2f2575f.
#: PPO's update changed on purpose since (explored moves weighed by pi_old / b, the ratio taken
#: against pi_old: train.ppo's docstring): its AVX2 weights as the new code gives them on that
#: machine; its AVX512 bytes were not measured again (no such CPU at hand), so none are pinned.
EXACT = {
    ("dmc", ()): {"AVX512": ("c1f27641c641a248", "086616644b33d816"),
                  "AVX2": ("c1f27641c641a248", "62d2c061fb5996c7")},
    ("ppo", ()): {"AVX2": ("4f9980db7a69345e", "17d6156e69be797f")},
    ("ppo", (("warm_start_frames", 3000),)): {"AVX2": ("84327dd439c767df", "7fc473f190d8c07d")},
}
#: The fields in the order of the digest (the names are today's; the digest is of the arrays): the
#: fields of the pins, which came before ``log_pi`` (pinned by its sum, as ``log_prob``).
DIGEST_ORDER = ("obs", "action", "network", "target", "hidden_hands", "legal", "legal_count", "steps_left",
                "warm_start", "log_prob")


def digest_samples(chunks: list[Samples], skip: tuple[str, ...] = ()) -> str:
    h = hashlib.sha256()
    for chunk in chunks:
        for name in DIGEST_ORDER:
            value = getattr(chunk, name)
            if value is not None and name not in skip:
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
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    actor = Actor.from_config(model, cfg, np.random.default_rng([cfg.seed, 0, 0]))
    chunks: list[Samples] = []
    while sum(map(len, chunks)) < 10_000:
        chunks.append(actor.collect(cfg.chunk_size, 0.1, warm=actor.frames < cfg.warm_start_frames))
    buffer = SampleBuffer(cfg.buffer_size)
    for chunk in chunks:
        buffer.put(chunk)
    trainer = make_learner(cfg, model)
    stats = [trainer.update(trainer.take(buffer, cfg.batch_size)) for _ in range(3)]
    samples_digest, log_prob, loss, movement, projection, log_pi = PINNED[(learner, overrides)]
    assert digest_samples(chunks, skip=("log_prob",)) == samples_digest
    log_probs = [c.log_prob.astype(np.float64).sum() for c in chunks if c.log_prob is not None]
    assert sum(log_probs) == pytest.approx(log_prob, rel=1e-6, abs=1e-9)
    log_pis = [c.log_pi.astype(np.float64).sum() for c in chunks if c.log_pi is not None]
    assert sum(log_pis) == pytest.approx(log_pi, rel=1e-6, abs=1e-9)
    assert stats[-1]["loss/all"] == pytest.approx(loss, rel=1e-5)
    moved, projected = weights_movement(initial, model.state_dict())
    assert moved == pytest.approx(movement, rel=1e-4)
    assert projected == pytest.approx(projection, rel=2e-2)
    capability = torch.backends.cpu.get_cpu_capability()
    exact = EXACT[(learner, overrides)].get(capability)
    if exact is not None:  # the bytes, where they were pinned for this kind of CPU
        assert (digest_samples(chunks), weights_digest(model.state_dict())) == exact, capability


#: Learner settings whose two-thread updates are compared with one thread's: DMC with and without
#: the hand head; PPO with each critic, each source of advantages, and cloned warm-start rows.
PPO = {"learner": "ppo", "batch_size": 600, "minibatch_size": 256}
THREADED = {
    "dmc": {"learner": "dmc"},
    "dmc, hand head": {"learner": "dmc", "model": {"hand_head": True}},
    "ppo": PPO,
    "ppo, shared critic, minibatch advantages": {**PPO, "critic": "shared", "advantages": "minibatch",
                                                 "ppo_epochs": 1},
    "ppo, narrow critic, warm start": {**PPO, "critic_hidden": 32, "warm_start_frames": 1000},
}


@pytest.mark.parametrize("name", list(THREADED))
def test_two_learner_threads_give_the_bytes_of_one_thread(name, one_thread):
    """``threads: 2``: the learner runs each network's forward and backward pass on one of two
    threads; the weights (and PPO's critic) after three updates are the same bytes as on one thread,
    and the statistics the same within float noise (sums in another order)."""
    cfg = load_config(TINY, THREADED[name])
    torch.manual_seed(cfg.seed)
    model = learner_class(cfg.learner).new_model(Rules.preset(cfg.rules), cfg.model)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    actor = Actor.from_config(model, cfg, np.random.default_rng([cfg.seed, 0, 0]))
    chunks = [actor.collect(cfg.chunk_size, 0.1, warm=actor.frames < cfg.warm_start_frames) for _ in range(8)]
    buffer = SampleBuffer(cfg.buffer_size)
    for chunk in chunks:
        buffer.put(chunk)
    batches = [make_learner(cfg, model).take(buffer, 600) for _ in range(3)]
    assert all(b is not None and len(np.unique(b.network)) >= 3 for b in batches)  # networks to spread
    results = []
    for threads in (1, 2):
        model.load_state_dict(initial)
        torch.manual_seed(1)  # the critic's initial weights
        trainer = make_learner(dataclasses.replace(cfg, threads=threads), model)
        assert (trainer.pool is not None) == (threads > 1)  # the threaded path is the one compared
        stats = [trainer.update(batch) for batch in batches]
        critic = getattr(trainer, "critic", None)
        results.append((weights_digest(model.state_dict()),
                        None if critic is None else weights_digest(critic.state_dict()), stats))
    (one, critic_one, stats_one), (two, critic_two, stats_two) = results
    assert one == two and critic_one == critic_two and one != weights_digest(initial)
    for a, b in zip(stats_one, stats_two, strict=True):
        assert a.keys() == b.keys() and a == pytest.approx(b, rel=1e-5, abs=1e-7)


def test_learner_threads_are_their_own_and_torch_gets_one():
    """A learner's threads run the networks' work, so its process gives torch one thread (two levels
    of threads would oversubscribe the cores)."""
    assert learner_class("dmc").torch_threads(load_config(TINY, {"threads": 2})) == 1
    ppo = load_config(TINY, {"threads": 2, "learner": "ppo", "minibatch_size": 64})
    assert learner_class("ppo").torch_threads(ppo) == 1


def test_the_plan_gives_whole_networks_largest_first_to_the_least_loaded_thread():
    network = np.array([2] * 5 + [0] * 9 + [3] * 4 + [1] * 2 + [4] * 1)
    rng = np.random.default_rng(0)
    network = network[rng.permutation(len(network))]
    plan = plan_networks(network, 2)
    assert [[int(network[p[0]]) for p in parts] for parts in plan] == [[0, 1], [2, 3, 4]]
    parts = [p for thread in plan for p in thread]
    assert all((network[p] == network[p[0]]).all() and (np.diff(p) > 0).all() for p in parts)
    assert sorted(np.concatenate(parts)) == list(range(len(network)))
    assert len(plan_networks(network[network == 0], 4)) == 1  # threads left without a network get none


def weights_digest(state: dict) -> str:
    weights = hashlib.sha256()
    for _, value in sorted(state.items()):
        weights.update(value.numpy().tobytes())
    return weights.hexdigest()[:16]


def weights_movement(initial: dict, state: dict) -> tuple[float, float]:
    """The sum of the weights' absolute changes, and the changes' projection on a random direction
    (N(0, 1) per weight, from a fixed seed), in float64."""
    generator = torch.Generator().manual_seed(0)
    moved = projected = 0.0
    for name, value in sorted(state.items()):
        if value.is_floating_point():
            change = (value - initial[name]).double().flatten()
            moved += float(change.abs().sum())
            projected += float(change @ torch.randn(change.numel(), generator=generator, dtype=torch.float64))
    return moved, projected


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
                    log_prob=np.zeros(n, np.float32), log_pi=np.zeros(n, np.float32))
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


@pytest.mark.parametrize("name", list(LEARNERS))
def test_trainable_heads_changes_the_heads_and_leaves_every_state_encoder_as_it_was(name):
    """``trainable: heads`` (the cheap fine-tune): after updates every network's state encoder holds
    the weights it started with, its head does not, and the optimizer holds only what trains."""
    cfg = load_config(TINY, {"learner": name, "minibatch_size": 64, "trainable": "heads"})
    torch.manual_seed(0)
    model = learner_class(name).new_model(Rules.preset(cfg.rules), cfg.model)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    buffer = SampleBuffer(cfg.buffer_size)
    actor = Actor.from_config(model, cfg, np.random.default_rng(0))
    trainer = make_learner(cfg, model)
    for _ in range(2):
        while (batch := trainer.take(buffer, cfg.batch_size)) is None:
            buffer.put(actor.collect(cfg.chunk_size, 0.1))
        trainer.update(batch)
    encoder = {id(p) for net in model.nets.values() for p in net.encoder_parameters()}
    names = {id(p): k for k, p in model.named_parameters()}
    changed = {names[id(p)] for p in model.parameters() if not torch.equal(p, before[names[id(p)]])}
    assert encoder and not changed & {names[i] for i in encoder}  # no encoder weight moved
    assert {k for k in changed if ".out." in k or ".state_proj." in k}  # the heads did
    trained = {id(p) for group in trainer.optimizer.param_groups for p in group["params"]}
    assert not trained & encoder


def test_trainable_is_checked():
    with pytest.raises(ConfigError, match=r"trainable must be one of \('all', 'heads'\), got 'middle'"):
        load_config(TINY, {"trainable": "middle"})
