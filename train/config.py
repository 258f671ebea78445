"""Typed training configuration: a dataclass loaded from YAML, overridable from the command line.

``load_config("configs/default.yaml", ["--batch-size", "512"])`` reads the
file, applies the overrides, and checks every key: an unknown key or a value
of the wrong type raises :class:`ConfigError` naming the key.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import math
import re
import textwrap
import typing
from dataclasses import dataclass, field

import yaml

from agents.dmc import ModelConfig
from doudizhu_arena.cluster import BACKENDS
from doudizhu_env.cards import NUM_RANKS
from doudizhu_env.checks import short
from doudizhu_env.engine import MAX_HISTORY
from doudizhu_env.files import input_refusal
from doudizhu_env.observation import OBS_SIZE
from doudizhu_env.rewards import OBJECTIVES  # adp, wp, logadp
from doudizhu_env.rules import PRESET_NAMES

from .learner import LEARNERS, learner_class

#: How the warm-start agent teaches (``warm_start_mode``): it plays, or it labels the model's play.
WARM_START_MODES = ("clone", "dagger")
#: The most memory a config's samples may take (:meth:`TrainConfig.memory_bytes`), in GiB.
MAX_MEMORY_GIB = 16
_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?|mps")
#: What 0 means for the fields that may be 0.
_ZERO_MEANS = {"seed": "a seed like any other", "epsilon_decay_frames": "epsilon_final from the start",
               "warm_start_frames": "no warm start",
               "total_frames": "no limit", "max_minutes": "no limit", "checkpoint_minutes": "at every step",
               "eval_minutes": "only at the end", "eval_deals": "no evaluation",
               "log_seconds": "at every step"}


class ConfigError(ValueError):
    """A configuration file or override that does not fit :class:`TrainConfig`."""


#: The values of ``trainable``: every weight, or the networks' heads only (the state encoders frozen).
TRAINABLE = ("all", "heads")


@dataclass
class TrainConfig:
    """Everything a self-play run needs (DMC or PPO). Field docstrings are the reference."""

    run_name: str = "dmc"
    """Name of the run: its folder under ``out_dir``."""
    learner: str = "dmc"
    """The learner: ``dmc`` (Deep Monte-Carlo: Q(s, a) regressed on the hands' results) or ``ppo``
    (a softmax policy over the legal actions by PPO, with a critic that sees the hidden hands
    during training: :mod:`train.ppo`). Both train the same five networks, with the same actors."""
    out_dir: str = "runs"
    """Where checkpoints and TensorBoard event files go (``out_dir/run_name``)."""
    seed: int = 0
    """Seed of every random generator of the run."""
    rules: str = "standard"
    """Rules preset (one of :data:`doudizhu_env.rules.PRESET_NAMES`: ``standard`` or ``douzero``)."""
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
    doubling_epsilon: float = 0.2
    """Exploration at doubling decisions (constant). With ``epsilon`` there, a policy that always
    (or never) doubles hardly ever tries the other choice, so its value is barely learned and the
    greedy choice stays stuck on one side whatever the hand (``benchmarks.bidding`` measures it)."""
    fixed_landlord_share: float = 0.5
    """Share of each actor's games dealt without bidding (landlord drawn at random, as in the
    ``fixed_landlord`` evaluation). These games teach the play networks every kind of hand in
    every role, whatever the bidding policy does, and they are the inputs the fixed-landlord
    evaluation shows the agent; the other games are the full game and teach bidding."""
    opponents: list[str] = field(default_factory=list)
    """Agent specs (as in the arena: ``rule``, ``rlcard``, ``pretrained``, ``dmc:PATH``...) that play
    against the model in ``opponent_share`` of each actor's games: the model plays one or two
    seats there (equally often, drawn anew each hand), one of these agents, drawn uniformly (a
    spec listed twice is drawn twice as often), the others. ``past`` is the model's own past:
    frozen copies of it (see ``past_every_frames``), one drawn for each hand. Only the model's
    decisions are trained on."""
    opponent_share: float = 0.0
    """Share of each actor's games played against ``opponents`` (0: pure self-play)."""
    past_every_frames: int = 1_000_000
    """With ``past`` among ``opponents``: an actor's frames between two frozen copies of its model
    (the first is taken at the start: the initial or ``init_weights`` model)."""
    past_pool_size: int = 8
    """With ``past`` among ``opponents``: the most copies an actor keeps (the newest; each hand
    against ``past`` draws one of them uniformly)."""
    warm_start_frames: int = 0
    """For the run's first this many frames, ``warm_start_agent`` plays every seat of the actors'
    games (epsilon-greedily, with the model's exploration) and the model learns from its play, a
    warm start from what that agent knows, before self-play: DMC learns the Q-values of its play,
    PPO clones it (the policy's cross-entropy on its decisions; the critic learns its values)."""
    warm_start_agent: str = "rule"
    """The agent spec that plays the warm-start games (or labels them: ``warm_start_mode``)."""
    warm_start_mode: str = "clone"
    """``clone``: the warm-start agent plays every seat and the model learns from its games (above).
    ``dagger`` (``learner: ppo`` only): the model plays as after the warm start, opponents and all,
    and the warm-start agent says what it would play at each of the model's decisions; the policy
    learns the cross-entropy of those labels on the states its own play reaches (DAgger, Ross et
    al. 2011; with ``search:...`` as the agent, expert iteration's labels), the critic the values
    of the model's play."""
    init_weights: str = ""
    """Weights the model starts from instead of a random initialization: a ``.pt`` file of
    ``train.run`` or ``train.export``, or ``pretrained`` (the shipped agent). Its rules and model
    config must be the run's; frames and updates count on from the file's (so the epsilon
    schedule goes on where it was), the optimizer starts fresh. Ignored by ``--resume``, which
    continues the run's own checkpoint."""
    batch_size: int = 1024
    """Samples per learner update (``ppo``: per batch of whole hands, cut into ``minibatch_size``
    gradient steps ``ppo_epochs`` times)."""
    learning_rate: float = 3e-4
    """Adam step size (at the start of the run)."""
    learning_rate_end_factor: float = 1.0
    """The step size falls linearly from ``learning_rate`` to ``learning_rate`` x this factor over
    the run's budget: the share of ``total_frames`` made or of ``max_minutes`` gone since this run
    started, whichever is larger (a ``--resume`` or ``init_weights`` run decays over its own new
    budget). 1 = constant; below 1 needs ``total_frames`` or ``max_minutes``."""
    max_grad_norm: float = 10.0
    """Gradient clipping."""
    gamma: float = 1.0
    """``ppo``: the discount per decision of a seat (the only reward is the hand's result, at its end)."""
    gae_lambda: float = 0.95
    """``ppo``: lambda of the generalized advantage estimates over each seat's decisions in a hand
    (1: Monte-Carlo returns less the critic's value; 0: one-step temporal differences)."""
    ppo_clip: float = 0.2
    """``ppo``: the clip range of the probability ratio, new policy / policy at the batch's start."""
    ppo_epochs: int = 2
    """``ppo``: passes over each batch (``batch_size`` samples or more, whole hands)."""
    minibatch_size: int = 1024
    """``ppo``: samples per gradient step; each batch is cut into minibatches after a shuffle."""
    entropy_coef: float = 0.01
    """``ppo``: weight of the policy's entropy bonus (mean over the samples of a minibatch)."""
    value_coef: float = 0.5
    """``ppo``: weight of the critic's squared error against the returns."""
    critic: str = "separate"
    """``ppo``: the critic (which reads the hidden hands, in training only): ``separate``, five value
    networks with a state encoder of their own over the observation and the hidden hands; or
    ``shared``, five value heads over the policy's state embedding and the hidden hands (the
    state is encoded once for both; the hidden hands join above the policy's encoder, so the
    policy still reads the seat's observation only)."""
    advantages: str = "batch"
    """``ppo``: where the advantages come from: ``batch``, the critic's values of the whole batch in
    a pass before its first step (advantages normalized over the batch); or ``minibatch``, each
    step's own forward pass (minibatches of whole trajectories; advantages normalized over the
    minibatch, recomputed every epoch), which saves that pass."""
    critic_hidden: int = 0
    """``ppo``: the critic's width: ``separate``'s encoder and head (0: the model's sizes),
    ``shared``'s value head (0: the model's ``head_hidden``)."""
    trainable: str = "all"
    """Which weights training changes: ``all``; or ``heads``, each network's action and scoring
    layers only, its state encoder (``state_mlp``, the history's, ``state_out``) kept as it started
    (``init_weights``): a cheap fine-tune, e.g. of a best response that starts from ``pretrained``
    (``docs/exploitability.md``). The critic of ``ppo`` is trained whole either way."""
    hand_loss_weight: float = 1.0
    """With ``model.hand_head``: the weight of the hand head's cross-entropy (mean over the two
    hidden seats' ranks) added to the Q-values' squared error."""
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
    """Threads of each process: an actor's torch threads; the learner's, where either learner runs
    its networks' forward and backward passes at once (one torch thread each, on the CPU)."""
    device: str = "auto"
    """Learner device: ``cpu``, ``cuda`` or ``auto`` (cuda when available)."""
    backend: str = "local"
    """Where the actors run: ``local`` (``num_actors`` processes on this machine, sharing the model's
    memory) or ``ray`` (``num_actors`` Ray actors anywhere on a Ray cluster, weights broadcast
    through its object store; needs the ``ray`` extra, ``pip install -e ".[ray]"``). The learner,
    checkpoints, logs and evaluations run in this process either way."""
    ray_address: str = ""
    """With ``backend: ray``, the cluster: empty starts a local Ray instance for the run (stopped at
    the end), ``auto`` joins the cluster started on this machine by ``ray start``, ``HOST:PORT`` the
    one of that head node."""
    ray_actor_num_cpus: float = 1.0
    """With ``backend: ray``, CPUs each actor reserves (Ray's ``num_cpus``)."""
    ray_actor_num_gpus: float = 0.0
    """With ``backend: ray``, GPUs each actor reserves (Ray's ``num_gpus``; fractions share one); with
    more than 0 the actors' model plays on their GPU."""
    ray_chunks_in_flight: int = 2
    """With ``backend: ray``, the back-pressure: ``collect`` calls each actor has outstanding. At most
    ``num_actors`` times this many chunks are made and not yet taken by the learner."""
    ray_broadcast_updates: int = 4
    """With ``backend: ray``, learner updates between two weight broadcasts to the actors (the local
    backend's actors see every update). A broadcast costs the learner under a tenth of an update of
    the default config (one ``ray.put`` of the weights); the chunks in flight are older than 4
    updates anyway."""
    model: ModelConfig = field(default_factory=ModelConfig)
    """Network sizes (see :class:`agents.dmc.ModelConfig`)."""

    def __post_init__(self):
        for f in dataclasses.fields(self):  # NaN and infinity are no settings (and NaN passes every < check)
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(f"{f.name} must be a finite number, got {value}")
        self._check_learner()
        if self.objective not in OBJECTIVES:
            raise ConfigError(f"objective must be one of {tuple(OBJECTIVES)}, got {short(self.objective)}")
        if self.rules not in PRESET_NAMES:
            raise ConfigError(f"rules must be one of {PRESET_NAMES}, got {short(self.rules)}")
        for name in ("games_per_actor", "batch_size", "queue_size", "chunk_size", "buffer_size", "threads",
                     "ray_chunks_in_flight", "ray_broadcast_updates", "past_every_frames", "past_pool_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("fixed_landlord_share", "opponent_share"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.opponent_share and not self.opponents:
            raise ConfigError(f"opponent_share is {self.opponent_share} but opponents is empty; expected "
                              "a list of agent specs, e.g. opponents: [rule]")
        if self.num_actors < 0:
            raise ConfigError(f"num_actors must be >= 0, got {self.num_actors}")
        for name in ("epsilon", "epsilon_final", "bidding_epsilon", "doubling_epsilon"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"{name} must be a probability in [0, 1], got {getattr(self, name)}")
        for name in ("learning_rate", "max_grad_norm"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be > 0, got {getattr(self, name)}")
        if self.trainable not in TRAINABLE:
            raise ConfigError(f"trainable must be one of {TRAINABLE}, got {short(self.trainable)}")
        if not 0.0 <= self.hand_loss_weight < float("inf"):
            raise ConfigError(f"hand_loss_weight must be a finite number >= 0, got {self.hand_loss_weight}")
        if not 0.0 <= self.learning_rate_end_factor <= 1.0:
            raise ConfigError(f"learning_rate_end_factor must be in [0, 1] (1: a constant learning rate), "
                              f"got {self.learning_rate_end_factor}")
        if self.learning_rate_end_factor < 1.0 and not (self.total_frames or self.max_minutes):
            raise ConfigError(f"learning_rate_end_factor is {self.learning_rate_end_factor} but the run has "
                              "no budget to decay over; expected total_frames or max_minutes above 0")
        if self.seed >= 2**63:
            raise ConfigError(f"seed must be < 2**63 (torch takes 64-bit seeds), got {short(self.seed)}")
        for name, zero in _ZERO_MEANS.items():
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0 (0: {zero}), got {getattr(self, name)}")
        if self.threads > 1024:
            raise ConfigError(f"threads must be <= 1024 (threads per process), got {self.threads}")
        gib = self.memory_bytes() / 2**30
        if gib > MAX_MEMORY_GIB:
            raise ConfigError(f"games_per_actor ({self.games_per_actor}), buffer_size ({self.buffer_size}), "
                              f"queue_size ({self.queue_size}) and chunk_size ({self.chunk_size}) need about "
                              f"{gib:,.0f} GiB of samples and hands in progress; expected at most "
                              f"{MAX_MEMORY_GIB} GiB (smaller values)")
        if self.eval_deals == 1:
            raise ConfigError("eval_deals must be 0 (no evaluation) or at least 2 (its 95% intervals are "
                              "over deals), got 1")
        if self.batch_size > self.buffer_size:
            raise ConfigError(f"batch_size ({self.batch_size}) must be <= buffer_size ({self.buffer_size}): "
                              "the learner never holds a full batch otherwise")
        if not self.run_name or self.run_name in (".", "..") or re.search(r"[/\\\0]", self.run_name):
            raise ConfigError(f"run_name must be a plain folder name (no '/', '\\', NUL, '.' or '..'), "
                              f"got {short(self.run_name)}: the run goes to out_dir/run_name")
        self._check_backend()
        if not _DEVICE.fullmatch(self.device):
            raise ConfigError(f"device must be auto, cpu, cuda, cuda:N or mps, got {short(self.device)}")

    def _check_learner(self) -> None:
        """The learner and its settings (its own checks: :meth:`train.learner.Learner.check_config`)."""
        if self.learner not in LEARNERS:
            raise ConfigError(f"learner must be one of {tuple(LEARNERS)}, got {short(self.learner)}")
        ranges = {"gamma": (0.0, False, 1.0, "a discount in (0, 1]"),
                  "gae_lambda": (0.0, True, 1.0, "in [0, 1]"),
                  "ppo_clip": (0.0, False, 1.0, "a clip range in (0, 1]")}
        for name, (low, low_ok, high, what) in ranges.items():
            value = getattr(self, name)
            if not (low <= value <= high) or (value == low and not low_ok):
                raise ConfigError(f"{name} must be {what}, got {value}")
        if not 1 <= self.ppo_epochs <= 100:
            raise ConfigError(f"ppo_epochs must be in 1..100 (passes over each batch), got {self.ppo_epochs}")
        if self.minibatch_size < 1:
            raise ConfigError(f"minibatch_size must be in 1..batch_size ({self.batch_size}), got "
                              f"{self.minibatch_size}")
        for name in ("entropy_coef", "value_coef"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.warm_start_mode not in WARM_START_MODES:
            raise ConfigError(f"warm_start_mode must be one of {WARM_START_MODES}, got "
                              f"{short(self.warm_start_mode)}")
        kind = learner_class(self.learner)
        if self.warm_start_mode == "dagger" and not kind.learns_labels:
            raise ConfigError(f"warm_start_mode: dagger needs a learner that learns labels, such as ppo "
                              f"({self.learner} learns from the returns of the actions played, and a label "
                              f"that was not played has none); expected clone with learner: {self.learner}")
        kind.check_config(self)

    def memory_bytes(self) -> int:
        """About how much memory the run's samples take: every actor's hands in progress (one row per
        decision, :class:`train.buffer.EpisodeRecorder`), the chunks in the queue and the buffer."""
        hidden = self.model.hand_head or learner_class(self.learner).recording.hidden_hands
        hands = 2 * NUM_RANKS if hidden else 0
        row = -(-OBS_SIZE // 8) + 8 + 1 + 8 + 1 + hands
        sample = -(-OBS_SIZE // 8) + 8 + 1 + 4 + hands
        actors = max(self.num_actors, 1)
        recorder = actors * self.games_per_actor * 2 * MAX_HISTORY * row
        return recorder + (self.queue_size * self.chunk_size + self.buffer_size) * sample

    def _check_backend(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigError(f"backend must be one of {BACKENDS}, got {short(self.backend)}")
        if self.backend == "ray" and self.num_actors < 1:
            raise ConfigError(f"backend: ray needs num_actors >= 1 (Ray actors), got {self.num_actors}; "
                              "num_actors: 0 (one actor in the learner's process) is the local backend's")
        for name in ("ray_actor_num_cpus", "ray_actor_num_gpus"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def resolve_device(name: str) -> str:
    """The torch device a config's ``device`` names, checked against this machine (``auto`` resolved)."""
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(name.partition(":")[2] or 0)
        if index >= count:
            have = f"cuda:0..cuda:{count - 1}" if count else "none"
            raise ConfigError(f"device {name!r} is not on this machine (CUDA devices: {have}); "
                              "expected cpu, auto or one of those")
    if name == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("device 'mps' is not available on this machine; expected cpu or auto")
    return name


def _check_type(key: str, value, hint):
    """``value`` converted to ``hint`` (int -> float allowed), or ConfigError naming ``key``."""
    origin = typing.get_origin(hint)
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise ConfigError(f"config key {short(key)} must be a list, got {short(value)}")
        return [_check_type(f"{key}[{i}]", v, item) for i, v in enumerate(value)]
    if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
        raise ConfigError(f"config key {short(key)} must be a number of at most 19 digits (within "
                          f"+-2**63), got {short(value)}")
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is float and isinstance(value, str) and _FLOAT.fullmatch(value.strip()):
        number = float(value)  # YAML 1.1 (PyYAML) reads 1e-4 (no dot) as a string
        if not math.isfinite(number):
            raise ConfigError(f"config key {short(key)} must be a finite number, got {short(value)}")
        return number
    if isinstance(value, bool) != (hint is bool) or not isinstance(value, hint):
        raise ConfigError(f"config key {short(key)} must be {hint.__name__}, got {type(value).__name__} "
                          f"{short(value)}")
    return value


def from_dict(cls, data: dict, prefix: str = ""):
    """Build dataclass ``cls`` from a nested dict, checking keys and types."""
    if not isinstance(data, dict):
        raise ConfigError(f"config section {prefix or '<top>'!r} must be a mapping, got {short(data)}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(map(str, set(data) - names))
    if unknown:
        raise ConfigError(f"unknown config key(s) {short([prefix + str(k) for k in unknown], 120)}; "
                          f"known: {sorted(names)}")
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


def dotted_keys(data: dict, prefix: str = "") -> dict:
    """A nested config mapping as dotted keys (``{"model": {"hidden": 8}}`` -> ``{"model.hidden": 8}``),
    the form :func:`load_config`'s overrides take."""
    out: dict = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(dotted_keys(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def _set_dotted(data: dict, dotted: str, value) -> None:
    *parents, leaf = dotted.split(".")
    for p in parents:
        data = data.setdefault(p, {})
    data[leaf] = value


def field_docs(cls) -> dict[str, str]:
    """The attribute docstring of each field of dataclass ``cls`` (the string literal after it), by name.

    Read from the source with :mod:`ast`; ``{}`` when the source is not available.
    """
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = typing.cast(ast.ClassDef, ast.parse(source).body[0]).body
    docs = {}
    for stmt, after in zip(body, body[1:], strict=False):
        if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    return docs


def _plain(doc: str) -> str:
    """A field docstring as one line of plain text for ``--help``."""
    doc = re.sub(r":\w+:`~?([^`]+)`", r"\1", doc).replace("``", "")
    return " ".join(doc.split())


def _shown(value) -> str:
    """A default value as it is written in YAML (and on the command line)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_shown(v) for v in value) + "]"
    return str(value)


def _leaf_defaults(cls, prefix=""):
    """(dotted name, default, docstring) of every leaf field of dataclass ``cls``."""
    hints, docs = typing.get_type_hints(cls), field_docs(cls)
    for f in dataclasses.fields(cls):
        default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
        if dataclasses.is_dataclass(hints[f.name]):
            yield from _leaf_defaults(hints[f.name], f"{prefix}{f.name}.")
        else:
            yield prefix + f.name, default, docs.get(f.name, "")


def override_parser() -> argparse.ArgumentParser:
    """An argparse parser with ``--config`` and one ``--field`` option per config field.

    Each option's help is the field's docstring and its default.
    """
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--config", metavar="FILE",
                        help="YAML file of TrainConfig fields (e.g. configs/default.yaml); the options "
                             "below override it")
    for name, default, doc in _leaf_defaults(TrainConfig):
        text = f"{_plain(doc)} (default: {_shown(default)})".strip().replace("%", "%%")
        parser.add_argument("--" + name.replace("_", "-"), dest=name, metavar="VALUE", help=text)
    return parser


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (PyYAML would keep the last)."""

    def construct_mapping(self, node, deep=False):
        seen: dict[typing.Hashable, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # "<<: *base" merges; its keys may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, typing.Hashable):
                if key in seen:
                    raise yaml.YAMLError(f"line {key_node.start_mark.line + 1}: the key {key!r} is given a "
                                         f"second time (first on line {seen[key] + 1}); give each key once")
                seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


def one_line(err: Exception) -> str:
    """An error message on one line (PyYAML's and others' several-line messages)."""
    return " ".join(str(err).split())


def _read_yaml(text_or_file):
    """The YAML document; what PyYAML cannot build (an integer of more than 4,300 digits, nesting
    deeper than Python's recursion limit) is a ``yaml.YAMLError`` too."""
    try:
        return yaml.load(text_or_file, Loader=_UniqueKeyLoader)
    except ValueError as err:  # int("9" * 5000): Python's limit on integer digits
        raise yaml.YAMLError(f"a value cannot be read ({short(str(err), 120)})") from None
    except RecursionError:
        raise yaml.YAMLError("the document is nested too deeply to read") from None


#: The largest config file read (the default config takes a few KB).
MAX_CONFIG_BYTES = 2**20


def load_config(path: str | None = None, overrides: dict | None = None) -> TrainConfig:
    """The config of YAML file ``path`` (or the defaults) with dotted-key ``overrides`` applied."""
    data: dict = {}
    if path:
        refusal = input_refusal(path, "config", "a YAML file of TrainConfig fields such as "
                                "configs/default.yaml", MAX_CONFIG_BYTES)
        if refusal:
            raise ConfigError(refusal)
        try:
            with open(path) as f:
                data = _read_yaml(f) or {}
        except yaml.YAMLError as err:
            raise ConfigError(f"{path}: not valid YAML: {one_line(err)}") from err
        except (OSError, UnicodeDecodeError) as err:
            raise ConfigError(f"{path}: cannot read the config file: {err}") from err
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of config keys, got {type(data).__name__}")
    text_fields = {name for name, hint in _flat_fields(TrainConfig) if hint is str}
    for dotted, text in (overrides or {}).items():
        if isinstance(text, str) and dotted not in text_fields:  # a str field takes the text as it is
            try:
                text = _read_yaml(text)
            except yaml.YAMLError as err:
                raise ConfigError(f"override of {dotted!r}: not valid YAML: {one_line(err)}") from err
        _set_dotted(data, dotted, text)
    return from_dict(TrainConfig, data)
