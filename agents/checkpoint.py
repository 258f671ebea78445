"""DMC checkpoints: written atomically, loaded with ``weights_only=True``, checked.

A checkpoint is a plain dict (tensors, numbers, strings, lists, dicts only)::

    {"format": "doudizhu-dmc", "version": 1,
     "rules": Rules.to_dict(), "model_config": ModelConfig.to_dict(),
     "model": state_dict, "optimizer": state_dict or None,
     "frames": int, "updates": int, "train_config": dict,
     "rng": {"torch": ByteTensor}, "digest": str, "minutes": float,
     "learner": "dmc" or "ppo", "score_kind": "q_values" or "logits"}

``learner`` names the learner that trained the weights (:func:`learner_of`;
files without it are DMC's), and ``score_kind`` what their scores are
(:data:`agents.dmc.SCORE_KINDS`; files without it: ``logits`` where the learner
is ``ppo``, else ``q_values``), which decides the agent that plays them
(:func:`agents.policy.policy_agent`). Every kind has the same networks and
loads the same way. A learner adds what it needs to continue (the optimizer;
PPO's critic, ``critic``, and ``rng["shuffle"]``) for ``--resume``;
:func:`load_model` never reads it, and :func:`export_weights` leaves it out.
A training run keeps its latest checkpoint as :data:`CHECKPOINT_NAME` in its
folder (:func:`checkpoint_path`).

``digest`` is the SHA-256 of the weights (:func:`weights_digest`), checked on
load: a file damaged after it was written is refused, not played. Files
written before digests existed have none and load as they are.

The actors' generators are not saved: a resumed run seeds them from
``(seed, actor, frames at the resume)``, so a resume is reproducible too.

:func:`export_weights` turns a training checkpoint into a file to ship:
the same format without the optimizer and RNG state, the weights stored as
float16 (half the size; they are cast back to float32 on load).

Writing goes to a temporary file in the same folder, flushed and fsynced,
then renamed over the target: a crash mid-write leaves the previous
checkpoint whole.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tempfile
import warnings

import torch

from agents.dmc import MAX_MODEL_GIB, SCORE_KINDS, ModelConfig, ScoreModel
from doudizhu_env.checks import is_int, short
from doudizhu_env.files import input_refusal
from doudizhu_env.rules import Rules

FORMAT, VERSION = "doudizhu-dmc", 1
#: The file name of a training run's latest checkpoint, in the run's folder.
CHECKPOINT_NAME = "checkpoint.pt"
#: The largest checkpoint file read: the largest model a config may ask for (weights and Adam's two
#: moments), and a margin for the rest.
MAX_CHECKPOINT_BYTES = MAX_MODEL_GIB * 2**30 + 2**26


class CheckpointError(ValueError):
    """A file that is not a usable checkpoint for what was asked."""


def weights_digest(state: dict) -> str:
    """SHA-256 (hex) of a state dict: each tensor's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(state):
        t = state[name]
        if not isinstance(t, torch.Tensor):
            raise CheckpointError(f"weight {name!r} is a {type(t).__name__}, expected a tensor")
        t = t.detach().cpu().contiguous()
        h.update(f"{name}\0{t.dtype}\0{tuple(t.shape)}\0".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def checkpoint_path(run_dir: str) -> str:
    """The latest checkpoint of the training run whose folder is ``run_dir``."""
    return os.path.join(run_dir, CHECKPOINT_NAME)


def save_checkpoint(path: str, model: ScoreModel, optimizer=None, **extra) -> None:
    """Write ``model`` (and ``optimizer``'s state, and what ``extra`` holds: counters, RNG states,
    a learner's own entries) to ``path`` atomically."""
    weights = model.state_dict()
    _write(path, {
        "format": FORMAT, "version": VERSION,
        "rules": model.rules.to_dict(), "model_config": model.cfg.to_dict(),
        "model": weights, "optimizer": optimizer.state_dict() if optimizer else None,
        "score_kind": model.score_kind,
        **extra, "digest": weights_digest(weights),
    })


def _write(path: str, data: dict) -> None:
    """``torch.save`` of ``data`` to ``path`` through a fsynced temporary file and a rename."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".ckpt-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a checkpoint is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _load_refusal(err: Exception) -> str:
    """Why ``torch.load(..., weights_only=True)`` refused a file, in a few words: its own message
    repeats advice to load the file with ``weights_only=False``, which would run code from it."""
    text = " ".join(str(err).split())
    found = re.search(r"WeightsUnpickler error: (.*?)(?: Please use| Check the documentation|$)", text)
    if found:
        reason = found.group(1).rstrip(". ")
        return (f"torch's safe loader refused it ({reason[:100]}): it is damaged, or holds objects other "
                "than tensors and plain values, which are never loaded (they could run code)")
    return text[:160]


def read_checkpoint(path: str) -> dict:
    """The checkpoint dict of ``path``, validated (format, version, keys)."""
    refusal = input_refusal(path, "checkpoint", "a .pt file written by train.run or train.export",
                            MAX_CHECKPOINT_BYTES)
    if refusal:
        raise CheckpointError(refusal)
    try:
        with warnings.catch_warnings():  # torch warns of pickle protocols before refusing a file anyway
            warnings.simplefilter("ignore")
            data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several kinds for corrupt or foreign files
        raise CheckpointError(f"{path!r} is not a readable torch checkpoint: {_load_refusal(err)}; expected "
                              "a .pt file written by train.run or train.export") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path!r} is not a doudizhu DMC checkpoint (expected format {FORMAT!r})")
    if type(data.get("version")) is not int or data["version"] != VERSION:  # not True, not 1.0
        raise CheckpointError(f"{path!r} has checkpoint version {short(data.get('version'))}, "
                              f"expected the integer {VERSION}")
    for key in ("rules", "model_config", "model"):
        if key not in data:
            raise CheckpointError(f"{path!r} lacks the {key!r} entry")
    for key in ("rules", "model_config", "model"):
        if not isinstance(data[key], dict):
            raise CheckpointError(f"{path!r}: the {key!r} entry is a {type(data[key]).__name__}, "
                                  "expected a dict")
    if "digest" in data:  # files written before digests existed have none
        try:
            actual = weights_digest(data["model"])
        except CheckpointError as err:
            raise CheckpointError(f"{path!r}: {err}") from err
        if data["digest"] != actual:
            raise CheckpointError(f"{path!r} is damaged: its weights do not match the digest stored with "
                                  f"them (expected {str(data['digest'])[:16]}..., got {actual[:16]}...)")
    return data


def learner_of(data: dict, path: str = "the checkpoint") -> str:
    """The name of the learner that wrote a checkpoint dict (``dmc`` for files from before there
    were two)."""
    learner = data.get("learner", "dmc")
    if not isinstance(learner, str) or not learner.isidentifier():
        raise CheckpointError(f"{path!r}: its 'learner' entry is {short(learner)}; expected a learner's "
                              "name such as 'dmc' or 'ppo'")
    return learner


def score_kind_of(data: dict, path: str = "the checkpoint") -> str:
    """What the scores of a checkpoint's weights are (:data:`agents.dmc.SCORE_KINDS`); files from
    before it was recorded: ``logits`` where the ``ppo`` learner wrote them, else ``q_values``."""
    kind = data.get("score_kind", "logits" if learner_of(data, path) == "ppo" else "q_values")
    if kind not in SCORE_KINDS:
        raise CheckpointError(f"{path!r}: its 'score_kind' entry is {short(kind)}; expected one of "
                              f"{SCORE_KINDS}")
    return kind


def counts_of(data: dict, path: str, missing=None) -> tuple[int, int]:
    """The frames and updates of a checkpoint dict, checked (CheckpointError); ``missing`` stands for
    an absent entry (None: absent is an error too)."""
    counts = []
    for key in ("frames", "updates"):
        value = data.get(key, missing)
        if not is_int(value) or value < 0:
            raise CheckpointError(f"{path!r}: its {key!r} is {short(value)}; expected a count (an integer "
                                  ">= 0)")
        counts.append(int(value))
    return counts[0], counts[1]


def minutes_of(data: dict) -> float:
    """The training minutes a checkpoint records (0 for files from before they were recorded, and
    for a value that is not a finite count of minutes)."""
    minutes = data.get("minutes", 0.0)
    ok = isinstance(minutes, (int, float)) and not isinstance(minutes, bool) and math.isfinite(minutes)
    return float(minutes) if ok and minutes >= 0 else 0.0


def torch_rng_of(data: dict, path: str) -> torch.Tensor:
    """The torch RNG state a training checkpoint saved (``rng["torch"]``), checked (CheckpointError)."""
    rng = data.get("rng", {}).get("torch") if isinstance(data.get("rng"), dict) else None
    expected = torch.get_rng_state()
    if not isinstance(rng, torch.Tensor) or rng.dtype != expected.dtype or rng.shape != expected.shape:
        raise CheckpointError(f"{path!r}: its rng state is {short(rng)}; expected torch's RNG state "
                              f"(a {expected.dtype} tensor of {expected.numel()} entries)")
    return rng


def check_finite(path: str, state: dict, what: str = "weights") -> None:
    """Refuse a state dict with a NaN or infinite entry, naming the first such tensor: weights that
    have diverged play nonsense and train to nothing."""
    for name, tensor in state.items():
        floating = isinstance(tensor, torch.Tensor) and tensor.is_floating_point()
        if floating and not torch.isfinite(tensor).all():
            bad = int((~torch.isfinite(tensor)).sum())
            raise CheckpointError(f"{path!r}: its {what} {name!r} hold {bad} NaN or infinite value(s) of "
                                  f"{tensor.numel()}; expected finite numbers (the run that wrote them had "
                                  "diverged: use an earlier checkpoint)")


def load_model(path: str, rules: Rules | None = None, model_config: ModelConfig | None = None) -> ScoreModel:
    """The :class:`ScoreModel` stored at ``path`` (its ``learner`` the file's: :func:`learner_of`).

    ``rules`` / ``model_config``, when given, must match the checkpoint's;
    otherwise :class:`CheckpointError` says which differs.
    """
    data = read_checkpoint(path)
    try:
        saved_rules = Rules.from_dict(data["rules"])
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"{path!r}: its 'rules' entry is not a rule configuration: {err}") from err
    if rules is not None and rules != saved_rules:
        raise CheckpointError(f"{path!r} was trained under rules {saved_rules}, not {rules}")
    try:
        saved_cfg = ModelConfig(**data["model_config"])
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"{path!r}: its 'model_config' entry is not a ModelConfig: {err}") from err
    if model_config is not None and model_config != saved_cfg:
        raise CheckpointError(f"{path!r} holds a model of config {saved_cfg}, not {model_config}")
    check_weights(path, data["model"], saved_rules, saved_cfg)
    check_finite(path, data["model"])
    model = ScoreModel(saved_rules, saved_cfg, score_kind=score_kind_of(data, path))
    try:
        model.load_state_dict(data["model"])
    except (RuntimeError, TypeError, ValueError, AttributeError) as err:
        raise CheckpointError(f"{path!r}: weights do not fit the model: {err}") from err
    return model


def check_weights(path: str, state: dict, rules: Rules, cfg: ModelConfig) -> None:
    """Refuse, before the model is built, weights whose names or shapes are not those of the model of
    ``rules`` and ``cfg`` (the shapes come from a model on the ``meta`` device: no memory used)."""
    with torch.device("meta"):
        expected = {k: tuple(v.shape) for k, v in ScoreModel(rules, cfg).state_dict().items()}
    missing = [k for k in expected if k not in state]
    extra = [k for k in state if k not in expected]
    wrong = [k for k in expected if k in state and isinstance(state[k], torch.Tensor)
             and tuple(state[k].shape) != expected[k]]
    for what, names in (("lacks", missing), ("has unexpected", extra), ("has wrongly shaped", wrong)):
        if names:
            raise CheckpointError(f"{path!r}: weights do not fit the model: it {what} weights "
                                  f"{short(names[:3], 200)}{' and more' if len(names) > 3 else ''} "
                                  f"({len(names):,} of {len(expected):,}); expected those of {cfg}")


def export_weights(src: str, dst: str, half: bool = True, **extra) -> dict:
    """Write the model of checkpoint ``src`` to ``dst`` for shipping: weights (float16 when ``half``),
    rules, model config, frames, updates and training config, plus ``extra``; no optimizer.

    Returns the metadata written (everything but the weights).
    """
    data = read_checkpoint(src)
    model = load_model(src)
    weights = {k: (v.half() if half and v.is_floating_point() else v) for k, v in model.state_dict().items()}
    meta = {k: data[k] for k in ("frames", "updates", "train_config", "minutes") if k in data}
    meta["learner"] = learner_of(data, src)
    meta["score_kind"] = model.score_kind
    meta.update(extra)
    _write(dst, {"format": FORMAT, "version": VERSION, "rules": model.rules.to_dict(),
                 "model_config": model.cfg.to_dict(), "model": weights, "optimizer": None, **meta,
                 "digest": weights_digest(weights)})
    return meta
