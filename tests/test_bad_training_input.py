"""Bad training options, checkpoints and command lines: one clear error, nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("yaml")

from helpers import ROOT, TINY, dmc_learner, small_config, small_model  # noqa: E402

from agents.checkpoint import (  # noqa: E402
    CheckpointError,
    export_weights,
    load_model,
    read_checkpoint,
    save_checkpoint,
)
from agents.dmc import DMCAgent, ModelOutputError  # noqa: E402
from agents.registry import PRETRAINED  # noqa: E402
from doudizhu_env import engine  # noqa: E402
from train.config import ConfigError, TrainConfig, load_config, resolve_device  # noqa: E402

SMALL = small_config()


# -- training options ---------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"max_grad_norm": "-1"}, "max_grad_norm must be > 0"),
        ({"learning_rate": "0"}, "learning_rate must be > 0"),
        ({"learning_rate": ".inf"}, "learning_rate must be a finite number"),
        ({"learning_rate_end_factor": "1.5"}, "learning_rate_end_factor must be in \\[0, 1\\]"),
        ({"learning_rate_end_factor": "-0.1"}, "learning_rate_end_factor must be in \\[0, 1\\]"),
        ({"learning_rate_end_factor": "0.1", "total_frames": "0", "max_minutes": "0"},
         "no budget to decay over"),
        ({"max_minutes": ".nan"}, "max_minutes must be a finite number"),
        ({"batch_size": "8192"}, r"batch_size \(8192\) must be <= buffer_size \(4096\)"),
        ({"max_minutes": "-1"}, r"max_minutes must be >= 0 \(0: no limit\)"),
        ({"total_frames": "-5"}, r"total_frames must be >= 0 \(0: no limit\)"),
        ({"epsilon": "2.0"}, r"epsilon must be a probability in \[0, 1\]"),
        ({"epsilon": "-0.5"}, r"epsilon must be a probability in \[0, 1\]"),
        ({"epsilon_final": "1.5"}, r"epsilon_final must be a probability"),
        ({"bidding_epsilon": "-0.1"}, r"bidding_epsilon must be a probability"),
        ({"model.hidden": "0"}, "model.hidden must be an integer in 1..4,096, got 0"),
        ({"checkpoint_minutes": "-1"}, "checkpoint_minutes must be >= 0"),
        ({"log_seconds": "-1"}, "log_seconds must be >= 0"),
        ({"eval_minutes": "-1"}, "eval_minutes must be >= 0"),
        ({"eval_deals": "-1"}, "eval_deals must be >= 0"),
        ({"eval_deals": "1"}, r"eval_deals must be 0 \(no evaluation\) or at least 2"),
        ({"seed": "-1"}, "seed must be >= 0"),
        ({"run_name": "../x"}, "run_name must be a plain folder name"),
        ({"run_name": "a/b"}, "run_name must be a plain folder name"),
        ({"run_name": ".."}, "run_name must be a plain folder name"),
        ({"run_name": ""}, "run_name must be a plain folder name"),
        ({"device": "gpu"}, "device must be auto, cpu, cuda, cuda:N or mps"),
    ],
)
def test_bad_option_values_are_named(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(TINY, overrides)


def test_zero_stays_allowed_where_it_means_something():
    cfg = load_config(TINY, {"checkpoint_minutes": "0", "log_seconds": "0", "eval_minutes": "0",
                             "total_frames": "0", "eval_deals": "0", "epsilon": "0",
                             "epsilon_decay_frames": "0"})
    assert cfg.checkpoint_minutes == 0 and cfg.log_seconds == 0
    assert load_config(TINY, {"batch_size": "4096"}).batch_size == 4096  # = buffer_size


def test_a_device_this_machine_lacks_is_named():
    with pytest.raises(ConfigError, match="'cuda:99' is not on this machine"):
        resolve_device("cuda:99")
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") in ("cpu", "cuda")


@pytest.mark.parametrize("text, key, line", [("seed: 1\nbatch_size: 64\nseed: 2\n", "seed", 3),
                                             ("model:\n  hidden: 8\n  hidden: 16\n", "hidden", 3)])
def test_a_key_given_twice_in_yaml_is_an_error(tmp_path, text, key, line):
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=f"line {line}: the key '{key}' is given a second time"):
        load_config(str(path))


def test_a_missing_config_file_is_a_config_error():
    with pytest.raises(ConfigError, match="no config file at '/nonexistent/config.yaml'; expected a YAML"):
        load_config("/nonexistent/config.yaml")


def test_unknown_eval_opponents_fail_before_training(tmp_path):
    from train.run import train

    cfg = load_config(TINY, {"out_dir": str(tmp_path / "runs"), "eval_deals": 2,
                             "eval_opponents": "[random, randm]"})
    with pytest.raises(ConfigError, match="eval_opponents: agent 'randm': unknown agent"):
        train(cfg)
    assert not (tmp_path / "runs").exists()  # nothing trained, nothing written


# -- checkpoints -----------------------------------------------------------------------


def test_new_checkpoints_carry_a_digest_and_old_files_still_load(tmp_path):
    path = str(tmp_path / "c.pt")
    save_checkpoint(path, small_model(), frames=1)
    assert len(read_checkpoint(path)["digest"]) == 64
    # the shipped weights carry one too, and load
    assert len(torch.load(PRETRAINED, weights_only=True)["digest"]) == 64
    load_model(PRETRAINED)
    # a file written before digests existed loads as before
    data = torch.load(path, weights_only=True)
    del data["digest"]
    old = str(tmp_path / "old.pt")
    torch.save(data, old)
    assert load_model(old).state_dict().keys() == small_model().state_dict().keys()


def _flip_weight_bytes(path: str, tensor: torch.Tensor) -> None:
    """Invert 8 bytes inside ``tensor``'s data in the file (torch stores tensors uncompressed)."""
    raw = bytearray(Path(path).read_bytes())
    data = tensor.contiguous().view(torch.uint8).numpy().tobytes()
    at = raw.find(data)
    assert at >= 0
    raw[at + 16 : at + 24] = bytes(255 - b for b in raw[at + 16 : at + 24])
    Path(path).write_bytes(bytes(raw))


@pytest.mark.parametrize("kind", ["checkpoint", "export"])
def test_flipped_weight_bytes_are_refused(tmp_path, kind):
    model = small_model()
    path = str(tmp_path / "c.pt")
    save_checkpoint(path, model)
    if kind == "export":
        export_weights(path, str(tmp_path / "e.pt"))
        path = str(tmp_path / "e.pt")
    weights = torch.load(path, weights_only=True)["model"]
    name = max(weights, key=lambda k: weights[k].numel())
    _flip_weight_bytes(path, weights[name])
    # torch itself reads the damaged file without complaint
    assert not torch.equal(torch.load(path, weights_only=True)["model"][name], weights[name])
    with pytest.raises(CheckpointError, match="is damaged: its weights do not match the digest"):
        load_model(path)


@pytest.mark.parametrize(
    "entry, value, message",
    [
        ("model_config", {"hidden": "wide"}, "'model_config' entry is not a ModelConfig"),
        ("model_config", {"bogus": 1}, "'model_config' entry is not a ModelConfig"),
        ("model_config", [1, 2], "'model_config' entry is a list, expected a dict"),
        ("rules", {"bidding": "yes"}, "'rules' entry is not a rule configuration"),
        ("rules", {"tricks": True}, "'rules' entry is not a rule configuration"),
        ("rules", 5, "'rules' entry is a int, expected a dict"),
        ("model", {"nets.bidding.out.weight": 5}, "weights do not fit the model"),
        ("model", {"x": torch.zeros(3)}, "weights do not fit the model"),
    ],
)
def test_crafted_entries_are_checkpoint_errors(tmp_path, entry, value, message):
    path = str(tmp_path / "c.pt")
    save_checkpoint(path, small_model())
    data = torch.load(path, weights_only=True)
    data[entry] = value
    data.pop("digest")  # a crafted file without a digest: the entries themselves are checked
    torch.save(data, path)
    with pytest.raises(CheckpointError, match=message):
        load_model(path)


def test_a_crafted_weight_under_a_digest_is_refused(tmp_path):
    path = str(tmp_path / "c.pt")
    save_checkpoint(path, small_model())
    data = torch.load(path, weights_only=True)
    data["model"]["nets.bidding.out.bias"] = "zero"
    torch.save(data, path)
    with pytest.raises(CheckpointError, match="weight 'nets.bidding.out.bias' is a str, expected a tensor"):
        load_model(path)


def test_douzero_files_of_unrelated_tensors_are_refused(tmp_path):
    from agents.douzero_adapter import DouZeroAgent, build_model

    torch.save({"weight": torch.zeros(3, 3)}, tmp_path / "landlord.ckpt")
    with pytest.raises(CheckpointError, match="not a DouZero landlord network: it lacks 16 of its 16"):
        DouZeroAgent.load(str(tmp_path))
    torch.save([1, 2], tmp_path / "landlord.ckpt")
    with pytest.raises(CheckpointError, match="holds a list, expected the state dict"):
        DouZeroAgent.load(str(tmp_path))
    (tmp_path / "landlord.ckpt").write_bytes(b"not a torch file")
    with pytest.raises(CheckpointError, match="not a readable torch checkpoint"):
        DouZeroAgent.load(str(tmp_path))
    torch.save(build_model("landlord").state_dict(), tmp_path / "landlord.ckpt")
    assert set(DouZeroAgent.load(str(tmp_path)).models) == {"landlord"}


# -- a model that diverged ----------------------------------------------------------


def test_nan_q_values_are_named_not_a_shape_mismatch():
    model = small_model()
    with torch.no_grad():
        model.nets["bidding"].out.bias.fill_(float("nan"))
    state = engine.reset(0, 4)
    nan = r"the model produced 16 NaN and 0 infinite Q-values among 16 \(networks: bidding\); expected"
    with pytest.raises(ModelOutputError, match=nan):
        DMCAgent(model).act(state)


def test_the_learner_stops_when_the_loss_is_not_a_number():
    from doudizhu_env.observation import OBS_SIZE
    from train.samples import Samples, pack_obs

    rng = np.random.default_rng(0)
    batch = Samples(obs=pack_obs(rng.integers(0, 2, (8, OBS_SIZE))), action=np.full(8, 1),
                    network=np.zeros(8, np.int8), target=rng.normal(size=8).astype(np.float32))
    learner = dmc_learner(small_model())
    learner.learning_rate = float("inf")
    with pytest.raises(ModelOutputError, match="the loss of update .* is nan"):
        for _ in range(3):
            learner.update(batch)


# -- command lines -------------------------------------------------------------------


def run_module(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env=env)


def assert_one_line_error(proc: subprocess.CompletedProcess, prog: str, *words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"python -m {prog}: error: ")
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.integration  # a subprocess per case: make test-slow
@pytest.mark.parametrize(
    "argv, words",
    [
        (["--landlord", "missing.pt", "--farmers", "random"],
         ["'missing.pt'", "no checkpoint file", "expected a .pt file"]),
        (["--landlord", "rndom", "--farmers", "random"], ["unknown agent 'rndom'", "expected one of"]),
        (["--landlord", "rule", "--farmers", "random", "--rules", "foo"], ["'foo'", "expected one of"]),
        (["--landlord", "rule", "--farmers", "random", "--games", "0"],
         ["--games must be at least 1, got 0"]),
        (["--farmers", "random"], ["give --landlord and --farmers, or --seats"]),
        (["--seats", "rule", "random", "random", "--deals", "missing.json"], ["--deals 'missing.json'"]),
    ],
)
def test_evaluate_command_line_errors_are_one_line(argv, words, tmp_path):
    proc = run_module("doudizhu_arena.evaluate", *argv, "--no-progress", "--json", str(tmp_path / "out.json"))
    assert_one_line_error(proc, "doudizhu_arena.evaluate", *words)
    assert not (tmp_path / "out.json").exists()


# (extra arguments after --config TINY --out-dir RUNS, or None for a missing config file; the words)
DMC_ERRORS = [
    (None, ["no config file at", "nope.yaml", "expected a YAML file"]),
    (["--resume"], ["--resume: no checkpoint at", "expected the checkpoint.pt"]),
    (["--epsilon", "2"], ["epsilon must be a probability in [0, 1], got 2.0"]),
    (["--init-weights", "{tmp}/nope.pt"], ["init_weights: no checkpoint file at", "nope.pt"]),
    # the shipped model is larger than the tiny one
    (["--init-weights", "pretrained"], ["init_weights:", "holds a model of config"]),
]


@pytest.mark.integration  # a subprocess per case: make test-slow
@pytest.mark.parametrize(("extra", "words"), DMC_ERRORS,
                         ids=["config", "resume", "epsilon", "init", "init-size"])
def test_dmc_command_line_errors_are_one_line(tmp_path, extra, words):
    if extra is None:
        argv = ["--config", str(tmp_path / "nope.yaml")]
    else:
        argv = ["--config", TINY, "--out-dir", str(tmp_path / "runs")]
        argv += [arg.replace("{tmp}", str(tmp_path)) for arg in extra]
    assert_one_line_error(run_module("train.run", *argv), "train.run", *words)
    assert not (tmp_path / "runs").exists()


def test_dmc_help_shows_the_fields_docs_and_defaults():
    from train.run import build_parser

    text = build_parser().format_help()
    assert text.startswith("usage: python -m train.run")
    assert "--resume" in text and "--config FILE" in text
    flat = " ".join(text.split())
    defaults = TrainConfig()
    assert f"ppo_epochs times). (default: {defaults.batch_size})" in flat
    assert "Width of the action embedding f(a). (default: 64)" in flat  # a model field
    assert "Baselines the evaluations play against. (default: [random, rule])" in flat
    for name in ("run_name", "learning_rate", "model.head_layers"):
        assert "--" + name.replace("_", "-") in text
    proc = run_module("train.run", "--help")
    assert proc.returncode == 0 and " ".join(proc.stdout.split()) == flat


def test_arena_benchmark_options_have_help(capsys):
    from benchmarks.arena import main

    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("usage: python -m benchmarks.arena")
    for option, words in [("--games GAMES", "deals per study"), ("--workers WORKERS", "arena processes"),
                          ("--seed SEED", "seed of the deals"), ("--out FILE", "write every report"),
                          ("--skip-rlcard", "leave out the studies"), ("--dmc DMC", "DMC agent spec"),
                          ("--throughput-deals THROUGHPUT_DEALS", "deals per throughput")]:
        assert f"{option} {words}" in out, option


# -- hostile inputs: YAML bombs, huge values and sizes, damaged checkpoints and deals files ------

_LAUGHS = "{a: &a [1,1,1,1,1,1,1,1,1], " + ", ".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)) + "}"


@pytest.mark.parametrize("text, message", [
    (f"seed: {_LAUGHS}\n", "config key 'seed' must be int, got dict"),
    (f"eval_opponents: {_LAUGHS}\n", "config key 'eval_opponents' must be a list"),
    (f"run_name: {_LAUGHS}\n", "config key 'run_name' must be str"),
    (f"model: {_LAUGHS}\n", r"unknown config key\(s\) \['model.a'"),
    ("seed: " + "9" * 5000 + "\n", "not valid YAML: a value cannot be read"),
    ("seed: " + "[" * 5000 + "\n", "not valid YAML"),
    ("1: 2\n", r"unknown config key\(s\) \['1'\]"),
    ("~: 3\n", r"unknown config key\(s\) \['None'\]"),
    ("yes: 3\n", r"unknown config key\(s\) \['True'\]"),
    (f"seed: {2**64}\n", r"config key 'seed' must be a number of at most 19 digits \(within \+-2\*\*63\)"),
    ("model: {hidden: 10000000}\n", r"model.hidden must be an integer in 1..4,096, got 10000000"),
    ("model: {head_layers: 100000}\n", r"model.head_layers must be an integer in 1..32, got 100000"),
    ("model: {hidden: 4096, head_hidden: 4096, head_layers: 32}\n", "need about .* GiB for the weights"),
    ("threads: 100000\n", "threads must be <= 1024"),
    ("games_per_actor: 100000000\n", "need about .* GiB of samples"),
    (f"queue_size: {10**12}\n", "need about .* GiB of samples"),
])
def test_hostile_configs_are_one_short_error(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as err:
        load_config(str(path))
    assert len(str(err.value)) < 1000 and "\n" not in str(err.value)  # bounded, one line


def test_a_checkpoint_asking_for_a_huge_model_is_refused(tmp_path):
    path = tmp_path / "huge.pt"
    save_checkpoint(str(path), small_model(), frames=0, updates=0)
    data = torch.load(path, weights_only=True)
    data["model_config"].update(hidden=4096, head_hidden=4096, head_layers=32)
    del data["digest"]
    torch.save(data, path)
    with pytest.raises(CheckpointError, match="is not a ModelConfig.*GiB"):
        load_model(str(path))


def _damaged_resume(tmp_path, edit):
    """A tiny run's checkpoint with ``edit(data)`` applied (the digest covers only the weights)."""
    from train.run import train

    cfg = load_config(TINY, {"out_dir": str(tmp_path), "run_name": "r", "total_frames": 300, "eval_deals": 0})
    train(cfg)
    path = tmp_path / "r" / "checkpoint.pt"
    data = torch.load(path, weights_only=True)
    edit(data)
    torch.save(data, path)
    return cfg, path


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("rng"), "its rng state is None; expected torch's RNG state"),
    (lambda d: d.update(rng={"torch": torch.zeros(7, dtype=torch.uint8)}), "its rng state is tensor"),
    (lambda d: d.pop("frames"), r"its 'frames' is None; expected a count"),
    (lambda d: d.update(frames="many"), r"its 'frames' is 'many'; expected a count"),
    (lambda d: d.update(updates=-3), r"its 'updates' is -3; expected a count"),
    (lambda d: d.update(optimizer={}), "holds no optimizer state to resume from"),
    (lambda d: d.update(optimizer={"state": {}, "param_groups": []}), "optimizer state does not fit"),
    (lambda d: d.update(version=True), "has checkpoint version True, expected the integer 1"),
    (lambda d: d.update(version=1.0), "has checkpoint version 1.0, expected the integer 1"),
])
def test_resume_from_a_damaged_checkpoint_is_one_error(tmp_path, edit, message):
    from train.run import train

    cfg, path = _damaged_resume(tmp_path, edit)
    before = path.read_bytes()
    with pytest.raises(CheckpointError, match=message):
        train(load_config(TINY, {"out_dir": str(tmp_path), "run_name": "r", "total_frames": 600,
                                 "eval_deals": 0}), resume=True)
    assert path.read_bytes() == before


def _deals_file(tmp_path, edit):
    import json

    from doudizhu_arena.arena import make_deals, save_deals

    path = tmp_path / "deals.json"
    save_deals(make_deals(0, 2), str(path))
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return str(path)


def _set(d, key, value):
    d[0][key] = value


@pytest.mark.parametrize("edit, message", [
    (lambda d: d[0]["hands"].__setitem__(0, d[0]["hands"][0] + "3"), "deal 0: a deal has hands of 17 cards"),
    (lambda d: d[0]["hands"].__setitem__(0, "22222" + d[0]["hands"][0][5:]), "deal 0: impossible count"),
    (lambda d: _set(d, "first_bidder", 7), "deal 0: first_bidder must be 0, 1 or 2, got 7"),
    (lambda d: _set(d, "hole", None), "deal 0: "),
    (lambda d: d.__setitem__(slice(None), ["x"]), "deal 0: a deal must be a Deal or a dict"),
])
def test_bad_deals_files_are_one_line(tmp_path, capsys, edit, message):
    from doudizhu_arena.evaluate import main

    path = _deals_file(tmp_path, edit)
    with pytest.raises(SystemExit) as err:
        main(["--landlord", "random", "--farmers", "random", "--deals", path, "--no-progress"])
    assert err.value.code == 2
    line = capsys.readouterr().err
    assert message in line and line.count("\n") == 1


def test_deeply_nested_deals_and_swap_lineups(tmp_path, capsys):
    from doudizhu_arena.evaluate import main

    path = tmp_path / "nested.json"
    path.write_text("[" * 100_000)
    for argv, message in (
        (["--landlord", "random", "--farmers", "random", "--deals", str(path)], "nested too deeply"),
        (["--seats", "rule", "random", "rlcard", "--duplicate", "swap", "--games", "3"],
         "duplicate='swap' needs exactly two distinct agents"),
    ):
        with pytest.raises(SystemExit) as err:
            main([*argv, "--no-progress"])
        assert err.value.code == 2
        line = capsys.readouterr().err
        assert message in line and line.count("\n") == 1


def test_a_huge_chunk_does_not_outlive_the_budget(tmp_path):
    import time

    from train.run import train

    cfg = load_config(TINY, {"out_dir": str(tmp_path), "chunk_size": 10_000_000, "buffer_size": 10_000_000,
                             "total_frames": 0, "max_minutes": 0.05, "eval_deals": 0})
    start = time.monotonic()
    train(cfg)
    assert time.monotonic() - start < 30  # the budget is 3 s; one chunk alone would take minutes


def test_an_evaluation_of_a_billion_deals_is_refused_at_once(capsys):
    from doudizhu_arena.evaluate import main

    with pytest.raises(SystemExit) as err:
        main(["--landlord", "random", "--farmers", "random", "--games", "1000000000"])
    assert err.value.code == 2 and "--games must be at most 10,000,000" in capsys.readouterr().err
