"""The training configuration: YAML files, type and key checks, command-line overrides."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
pytest.importorskip("torch")

from helpers import ROOT, get_dotted  # noqa: E402

from agents.dmc import ModelConfig  # noqa: E402
from train.config import ConfigError, TrainConfig, _flat_fields, load_config  # noqa: E402
from train.run import parse_command_line  # noqa: E402


def parse_args(argv):
    """The config of a ``python -m train.run`` command line."""
    return parse_command_line(argv)[0]

CONFIGS = ROOT / "configs"


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    return str(path)


# -- files -------------------------------------------------------------------


def test_defaults_without_a_file():
    assert load_config(None) == TrainConfig()
    assert parse_args([]) == TrainConfig()


@pytest.mark.parametrize("name", ["tiny.yaml", "default.yaml", "ppo.yaml", "ppo_fast.yaml"])
def test_shipped_configs_load(name):
    cfg = load_config(str(CONFIGS / name))
    data = yaml.safe_load((CONFIGS / name).read_text())
    # every value of the file is the config's, the model's sizes included
    model = data.pop("model")
    assert model and {k: getattr(cfg.model, k) for k in model} == model
    assert {k: getattr(cfg, k) for k in data} == data
    assert isinstance(cfg.model, ModelConfig)
    assert cfg.run_name == name.removesuffix(".yaml")


def test_games_per_actor_is_what_the_docs_measured():
    """docs/training.md, "More games per actor": 1,024 games per actor kept PPO's learning per frame
    (1.19x the frames a minute) and bought DMC nothing at equal minutes, so only ppo_fast steps 1,024."""
    games = {name: load_config(str(CONFIGS / name)).games_per_actor
             for name in ("default.yaml", "ppo.yaml", "ppo_fast.yaml")}
    assert games == {"default.yaml": 256, "ppo.yaml": 256, "ppo_fast.yaml": 1024}


@pytest.mark.parametrize("name", ["default.yaml", "ppo.yaml", "ppo_fast.yaml"])
def test_default_yaml_lists_every_field(name):
    import yaml

    data = yaml.safe_load((CONFIGS / name).read_text())
    assert set(data) == {f.name for f in dataclasses.fields(TrainConfig)}
    assert set(data["model"]) == {f.name for f in dataclasses.fields(ModelConfig)}


def test_tiny_yaml_values(tmp_path):
    cfg = load_config(str(CONFIGS / "tiny.yaml"))
    assert cfg.num_actors == 0 and cfg.total_frames == 3000
    assert cfg.model == ModelConfig(hidden=32, lstm_hidden=16, action_hidden=16, head_hidden=32)


def test_empty_file_gives_defaults(tmp_path):
    assert load_config(write(tmp_path, "")) == TrainConfig()
    assert load_config(write(tmp_path, "# only a comment\n")) == TrainConfig()


def test_partial_nested_section_keeps_other_defaults(tmp_path):
    cfg = load_config(write(tmp_path, "model:\n  hidden: 64\n"))
    assert cfg.model == ModelConfig(hidden=64)


# -- errors name the key ------------------------------------------------------


@pytest.mark.parametrize(
    "text, key",
    [
        ("batch_sise: 64\n", "batch_sise"),
        ("model:\n  widht: 3\n", "model.widht"),
    ],
)
def test_unknown_key_is_named(tmp_path, text, key):
    with pytest.raises(ConfigError, match=f"'{key}'"):
        load_config(write(tmp_path, text))


@pytest.mark.parametrize(
    "text, key",
    [
        ("batch_size: big\n", "batch_size"),
        ("batch_size: 1.5\n", "batch_size"),
        ("num_actors: true\n", "num_actors"),
        ("learning_rate: fast\n", "learning_rate"),
        ("learning_rate: true\n", "learning_rate"),
        ("run_name: [a, b]\n", "run_name"),
        ("eval_opponents: random\n", "eval_opponents"),
        ("eval_opponents: [random, 3]\n", r"eval_opponents\[1\]"),
        ("model:\n  hidden: 1.5\n", "model.hidden"),
        ("model:\n  lstm_hidden: x\n", "model.lstm_hidden"),
    ],
)
def test_wrong_type_is_named(tmp_path, text, key):
    with pytest.raises(ConfigError, match=f"'{key}'"):
        load_config(write(tmp_path, text))


def test_int_is_accepted_for_float(tmp_path):
    cfg = load_config(write(tmp_path, "learning_rate: 1\nmax_minutes: 2\n"))
    assert cfg.learning_rate == 1.0 and isinstance(cfg.learning_rate, float)
    assert cfg.max_minutes == 2.0 and isinstance(cfg.max_minutes, float)


def test_exponent_without_dot_is_a_float(tmp_path):
    # PyYAML (YAML 1.1) reads 1e-4 as a string; the config takes it as the float it means
    assert load_config(write(tmp_path, "learning_rate: 1e-4\n")).learning_rate == pytest.approx(1e-4)
    assert parse_args(["--learning-rate", "3e-5"]).learning_rate == pytest.approx(3e-5)


@pytest.mark.parametrize(
    "text, word",
    [
        ("objective: points\n", "objective"),
        ("rules: chinese\n", "rules"),
        ("batch_size: 0\n", "batch_size"),
        ("games_per_actor: -1\n", "games_per_actor"),
        ("num_actors: -1\n", "num_actors"),
    ],
)
def test_invalid_value_is_named(tmp_path, text, word):
    with pytest.raises(ConfigError, match=word):
        load_config(write(tmp_path, text))


def test_section_that_is_not_a_mapping(tmp_path):
    with pytest.raises(ConfigError, match="model"):
        load_config(write(tmp_path, "model: 5\n"))


def test_yaml_syntax_error_is_clear(tmp_path):
    path = write(tmp_path, "batch_size: [1, 2\nseed: 3\n")
    with pytest.raises(ConfigError, match="not valid YAML") as info:
        load_config(path)
    assert path in str(info.value)


def test_top_level_that_is_not_a_mapping(tmp_path):
    with pytest.raises(ConfigError, match="mapping"):
        load_config(write(tmp_path, "- a\n- b\n"))


def test_missing_file():
    with pytest.raises(ConfigError, match="no config file at '/nonexistent/config.yaml'"):
        load_config("/nonexistent/config.yaml")


# -- command line ----------------------------------------------------------


_NEW_VALUES = {
    "init_weights": ("pretrained", "pretrained"),
    "run_name": ("other", "other"),
    "out_dir": ("/tmp/somewhere", "/tmp/somewhere"),
    "rules": ("douzero", "douzero"),
    "objective": ("wp", "wp"),
    "keep_checkpoints": ("true", True),
    "hand_head": ("true", True),
    "fixed_landlord_share": ("0.25", 0.25),
    "learning_rate_end_factor": ("0.25", 0.25),
    "device": ("cpu", "cpu"),
    "history": ("mlp", "mlp"),
    "eval_opponents": ("[rule, random]", ["rule", "random"]),
    "opponents": ("[rlcard]", ["rlcard"]),
    "warm_start_agent": ("rlcard", "rlcard"),
    "backend": ("ray", "ray"),
    "ray_address": ("auto", "auto"),
    "learner": ("ppo", "ppo"),
    "warm_start_mode": ("dagger", "dagger"),
    "gamma": ("0.5", 0.5),
    "gae_lambda": ("0.5", 0.5),
    "ppo_clip": ("0.5", 0.5),
    "critic": ("shared", "shared"),
    "advantages": ("minibatch", "minibatch"),
    "trainable": ("heads", "heads"),
}


def _new_value(name: str, hint, default):
    if name.split(".")[-1] in _NEW_VALUES:
        return _NEW_VALUES[name.split(".")[-1]]
    if hint is int:
        return str(default + 3), default + 3
    if hint is float:
        return str(default + 0.5), default + 0.5
    raise AssertionError(f"no test value for {name} ({hint})")


def test_every_field_can_be_overridden():
    defaults = TrainConfig()
    fields = list(_flat_fields(TrainConfig))
    assert "model.hidden" in dict(fields) and "model.head_hidden" in dict(fields)
    argv, expected = [], {}
    for name, hint in fields:
        text, value = _new_value(name, hint, get_dotted(defaults, name))
        assert value != get_dotted(defaults, name)
        argv += ["--" + name.replace("_", "-"), text]
        expected[name] = value
    cfg = parse_args(argv)
    for name, value in expected.items():
        assert get_dotted(cfg, name) == value, name


def test_overrides_apply_on_top_of_the_file():
    cfg = parse_args(["--config", str(CONFIGS / "tiny.yaml"), "--batch-size", "64",
                      "--model.hidden", "48", "--model.lstm-hidden", "8"])
    assert cfg.batch_size == 64
    assert cfg.model == ModelConfig(hidden=48, lstm_hidden=8, action_hidden=16, head_hidden=32)
    assert cfg.total_frames == 3000  # from the file
    assert load_config(str(CONFIGS / "tiny.yaml"), {"model.hidden": 48}).model.hidden == 48


@pytest.mark.parametrize(
    "argv, key",
    [
        (["--batch-size", "lots"], "batch_size"),
        (["--model.hidden", "1.5"], "model.hidden"),
        (["--eval-opponents", "rule"], "eval_opponents"),
        (["--eval-opponents", "[rule"], "eval_opponents"),  # not valid YAML
    ],
)
def test_bad_override_is_named(argv, key):
    with pytest.raises(ConfigError, match=f"'{key}'"):
        parse_args(argv)


def test_unknown_option_is_refused(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--batch-sise", "3"])
    assert "--batch-sise" in capsys.readouterr().err


def test_to_dict_round_trips():
    cfg = parse_args(["--config", str(CONFIGS / "tiny.yaml")])
    from train.config import from_dict

    assert from_dict(TrainConfig, cfg.to_dict()) == cfg
