"""Typed training configuration: a dataclass loaded from YAML, overridable from the command line.

``load_config("configs/default.yaml", ["--batch-size", "512"])`` reads the
file, applies the overrides, and checks every key: an unknown key or a value
of the wrong type raises :class:`ConfigError` naming the key.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import typing
from dataclasses import dataclass, field

import yaml

from agents.dmc import ModelConfig

OBJECTIVES = ("adp", "wp", "logadp")
_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


class ConfigError(ValueError):
    """A configuration file or override that does not fit :class:`TrainConfig`."""


@dataclass
class TrainConfig:
    """Everything a DMC self-play run needs. Field docstrings are the reference."""

    run_name: str = "dmc"
    """Name of the run: its folder under ``out_dir``."""
    out_dir: str = "runs"
    """Where checkpoints and TensorBoard event files go (``out_dir/run_name``)."""
    seed: int = 0
    """Seed of every random generator of the run."""
    rules: str = "standard"
    """Rules preset (``standard`` or ``douzero``)."""
    objective: str = "adp"
    """Monte-Carlo target: ``adp`` (the points), ``wp`` (+1/-1) or ``logadp`` (sign x log2(1 + |points|))."""
    num_actors: int = 1
    """Actor processes; 0 runs one actor in the learner's process, alternating (fully deterministic)."""
    games_per_actor: int = 256
    """Games each actor steps together on the batched engine."""
    epsilon: float = 0.05
    """Exploration: probability of a uniformly random legal action, at the start of training."""
    epsilon_final: float = 0.01
    """Exploration at ``epsilon_decay_frames`` and after (linear in between)."""
    epsilon_decay_frames: int = 2_000_000
    """Frames over which epsilon decays."""
    bidding_epsilon: float = 0.2
    """Exploration at bidding decisions (constant). Higher than ``epsilon``: a policy that
    learns to pass everywhere otherwise spends its frames on redeals, and landlord play
    needs landlords."""
    fixed_landlord_share: float = 0.5
    """Share of each actor's games dealt without bidding (landlord drawn at random, as in the
    ``fixed_landlord`` evaluation). These games teach the play networks every kind of hand in
    every role, whatever the bidding policy does, and they are the inputs the fixed-landlord
    evaluation shows the agent; the other games are the full game and teach bidding."""
    batch_size: int = 1024
    """Samples per learner update."""
    learning_rate: float = 3e-4
    """Adam step size."""
    max_grad_norm: float = 10.0
    """Gradient clipping."""
    queue_size: int = 8
    """Bounded queue of sample chunks between actors and learner."""
    chunk_size: int = 2048
    """Samples an actor gathers before sending them."""
    buffer_size: int = 65_536
    """Most samples the learner holds (older ones are dropped)."""
    total_frames: int = 0
    """Stop after this many frames (decisions); 0 = no limit."""
    max_minutes: float = 60.0
    """Stop after this much wall time; 0 = no limit."""
    checkpoint_minutes: float = 10.0
    """Minutes between checkpoints (one is always written at the end)."""
    keep_checkpoints: bool = False
    """Also keep a copy of every periodic checkpoint, ``checkpoints/<frames>.pt`` (weights only),
    to evaluate the run's progress afterwards."""
    eval_minutes: float = 10.0
    """Minutes between evaluations (one is always run at the end); 0 = only at the end."""
    eval_deals: int = 200
    """Deals per evaluation against each baseline (duplicate format)."""
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "rule"])
    """Baselines the evaluations play against."""
    log_seconds: float = 10.0
    """Seconds between TensorBoard scalar writes."""
    threads: int = 1
    """torch threads per process."""
    device: str = "auto"
    """Learner device: ``cpu``, ``cuda`` or ``auto`` (cuda when available)."""
    model: ModelConfig = field(default_factory=ModelConfig)
    """Network sizes (see :class:`agents.dmc.ModelConfig`)."""

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise ConfigError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        if self.rules not in ("standard", "douzero"):
            raise ConfigError(f"rules must be 'standard' or 'douzero', got {self.rules!r}")
        for name in ("games_per_actor", "batch_size", "queue_size", "chunk_size", "buffer_size", "threads"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0.0 <= self.fixed_landlord_share <= 1.0:
            raise ConfigError(f"fixed_landlord_share must be in [0, 1], got {self.fixed_landlord_share}")
        if self.num_actors < 0:
            raise ConfigError(f"num_actors must be >= 0, got {self.num_actors}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _check_type(key: str, value, hint):
    """``value`` converted to ``hint`` (int -> float allowed), or ConfigError naming ``key``."""
    origin = typing.get_origin(hint)
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise ConfigError(f"config key {key!r} must be a list, got {value!r}")
        return [_check_type(f"{key}[{i}]", v, item) for i, v in enumerate(value)]
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is float and isinstance(value, str) and _FLOAT.fullmatch(value.strip()):
        return float(value)  # YAML 1.1 (PyYAML) reads 1e-4 (no dot) as a string
    if isinstance(value, bool) != (hint is bool) or not isinstance(value, hint):
        raise ConfigError(f"config key {key!r} must be {hint.__name__}, got {type(value).__name__} {value!r}")
    return value


def from_dict(cls, data: dict, prefix: str = ""):
    """Build dataclass ``cls`` from a nested dict, checking keys and types."""
    if not isinstance(data, dict):
        raise ConfigError(f"config section {prefix or '<top>'!r} must be a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ConfigError(f"unknown config key(s) {[prefix + k for k in unknown]}; known: {sorted(names)}")
    values = {}
    for key, value in data.items():
        hint = hints[key]
        if dataclasses.is_dataclass(hint):
            values[key] = from_dict(hint, value, f"{prefix}{key}.")
        else:
            values[key] = _check_type(prefix + key, value, hint)
    try:
        return cls(**values)
    except (TypeError, ValueError) as err:
        raise ConfigError(str(err)) from err


def _flat_fields(cls, prefix=""):
    """(dotted name, type) of every leaf field."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            yield from _flat_fields(hints[f.name], f"{prefix}{f.name}.")
        else:
            yield prefix + f.name, hints[f.name]


def _set_dotted(data: dict, dotted: str, value) -> None:
    *parents, leaf = dotted.split(".")
    for p in parents:
        data = data.setdefault(p, {})
    data[leaf] = value


def override_parser() -> argparse.ArgumentParser:
    """An argparse parser with ``--config`` and one ``--field`` option per config field."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--config", help="YAML file of TrainConfig fields")
    for name, _ in _flat_fields(TrainConfig):
        parser.add_argument("--" + name.replace("_", "-"), dest=name, metavar="VALUE",
                            help=f"override {name} (YAML syntax)")
    return parser


def load_config(path: str | None = None, overrides: dict | None = None) -> TrainConfig:
    """The config of YAML file ``path`` (or the defaults) with dotted-key ``overrides`` applied."""
    data = {}
    if path:
        with open(path) as f:
            try:
                data = yaml.safe_load(f) or {}
            except yaml.YAMLError as err:
                raise ConfigError(f"{path}: not valid YAML: {err}") from err
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of config keys, got {type(data).__name__}")
    text_fields = {name for name, hint in _flat_fields(TrainConfig) if hint is str}
    for dotted, text in (overrides or {}).items():
        if isinstance(text, str) and dotted not in text_fields:  # a str field takes the text as it is
            try:
                text = yaml.safe_load(text)
            except yaml.YAMLError as err:
                raise ConfigError(f"override of {dotted!r}: not valid YAML: {err}") from err
        _set_dotted(data, dotted, text)
    return from_dict(TrainConfig, data)


def parse_args(argv=None) -> TrainConfig:
    """``--config FILE`` plus ``--any-field VALUE`` overrides, into a checked :class:`TrainConfig`."""
    parser = argparse.ArgumentParser(parents=[override_parser()], description="DMC self-play training")
    args = vars(parser.parse_args(argv))
    path = args.pop("config")
    return load_config(path, {k: v for k, v in args.items() if v is not None})
