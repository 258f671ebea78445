"""Stable-Baselines3 policies as arena agents: a trained ``MaskablePPO`` (sb3-contrib) plays like any agent.

::

    from doudizhu_arena.arena import format_report, run_arena

    report = run_arena(["sb3:ppo_doudizhu.zip", "random", "random"], 300)  # a model.save() file
    print(format_report(report))

``sb3:PATH`` is the spec of :func:`agents.registry.make_agent` (so also
``python -m doudizhu_arena.evaluate --landlord sb3:ppo_doudizhu.zip --farmers random``);
``SB3Agent(model)`` wraps a model already in memory (with ``run_arena``'s
``agent_factory``).

**Loading never runs code from the file.** A Stable-Baselines3 zip stores
its settings as JSON in which some objects (the spaces, schedules, classes)
are pickles, and ``MaskablePPO.load`` unpickles them: a crafted file runs
whatever it likes. :meth:`SB3Agent.load` reads only the JSON's plain values
and the policy's weights (``policy.pth``, with ``torch.load(weights_only=True)``);
the spaces are this package's own (:mod:`doudizhu_env.spaces`), chosen by
the saved observation space's type name (a ``Dict`` with the mask, or the
bare vector), and ``policy_kwargs`` must be plain JSON (e.g. ``net_arch``). A
file that needs more (a pickled ``activation_fn``, a custom policy class) is
refused, naming what it holds. Running SB3's own loader, pickles and all, is
an explicit opt-in for files you trust: the spec ``sb3-pickle:PATH``
(``SB3Agent.load(path, allow_pickle=True)``).

:class:`SB3Agent` computes, for every game of the seat view it is given, the
observation of the seat to act (:func:`doudizhu_env.observation.observe`) and its
legal-action mask (:func:`doudizhu_env.engine.legal_action_mask`), both from the
view alone, and asks the model for all games in one call:
``model.predict(obs, action_masks=mask, deterministic=True)``. The observation
has the form the model was trained on, read from ``model.observation_space``:
the dict ``{"observation", "action_mask"}`` of ``DouDizhu-v0`` and the PettingZoo
env, or the bare ``(OBS_SIZE,)`` vector (the PettingZoo SB3 tutorial's wrapper
strips the mask from the observation).

Needs the extra ``rl`` (``pip install -e ".[rl]"``: stable-baselines3, sb3-contrib).
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
from gymnasium import spaces

from doudizhu_env import engine
from doudizhu_env.actions import action_table
from doudizhu_env.checks import is_int, short
from doudizhu_env.files import check_input, read_bounded
from doudizhu_env.observation import OBS_SIZE, observe
from doudizhu_env.rules import PRESET_NAMES
from doudizhu_env.spaces import observation_box, observation_space

from .base import Agent

#: The largest SB3 zip read, and the most its members may inflate to (a small MLP policy takes a few MB).
MAX_ZIP_BYTES = 256 * 2**20
MAX_MEMBER_BYTES = {"data": 16 * 2**20, "policy.pth": 256 * 2**20}
#: ``net_arch`` bounds: layers per network and units per layer (the default is two layers of 64).
MAX_NET_LAYERS, MAX_NET_WIDTH = 16, 4096


class SB3Agent(Agent):
    """A Stable-Baselines3 model (anything with ``predict(obs, action_masks=..., deterministic=...)``)."""

    name = "sb3"

    def __init__(self, model, deterministic: bool = True):
        self.model = model
        self.deterministic = deterministic
        space = model.observation_space
        if isinstance(space, spaces.Dict):
            if set(space.spaces) != {"observation", "action_mask"}:
                raise ValueError(f"the model's observation space is a Dict with keys {sorted(space.spaces)}; "
                                 "expected 'observation' and 'action_mask'")
            self.dict_obs, shape = True, space["observation"].shape
        else:
            self.dict_obs, shape = False, space.shape
        if shape != (OBS_SIZE,):
            raise ValueError(f"the model observes shape {shape}; the Dou Dizhu observation is ({OBS_SIZE},)")
        self.num_actions = int(model.action_space.n)

    @classmethod
    def load(cls, path: str, deterministic: bool = True, allow_pickle: bool = False) -> SB3Agent:
        """The policy of a ``MaskablePPO`` saved with ``model.save(path)``, on the CPU, without
        unpickling anything (see the module docstring); ``allow_pickle=True`` runs SB3's own
        ``MaskablePPO.load`` instead, which runs code from the file: only for files you trust."""
        if allow_pickle:
            from sb3_contrib import MaskablePPO

            check_input(path, "SB3 zip", MAX_ZIP_BYTES)
            return cls(MaskablePPO.load(path, device="cpu"), deterministic)
        return cls(load_policy(path), deterministic)

    def act(self, view: engine.State) -> np.ndarray:
        if view.num_actions != self.num_actions:
            raise ValueError(f"the model has {self.num_actions} actions; these rules have {view.num_actions}")
        mask = engine.legal_action_mask(view)  # (N, A) bool, of the seat to act: the view is enough
        vec = observe(view)  # (N, OBS_SIZE): the seat to act, only what it sees
        obs = {"observation": vec, "action_mask": mask.view(np.int8)} if self.dict_obs else vec
        actions, _ = self.model.predict(obs, action_masks=mask, deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64).reshape(view.num_games)


def _read_zip(path: str) -> tuple[dict, bytes]:
    """The settings (JSON) and the policy weights (bytes) of an SB3 zip, or ValueError."""
    check_input(path, "SB3 zip", MAX_ZIP_BYTES)
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            if not {"data", "policy.pth"} <= names:
                raise ValueError(f"{path!r} holds {sorted(names)[:6]}; a Stable-Baselines3 save holds "
                                 "'data' and 'policy.pth'")
            data, weights = (_member(z, path, name) for name in ("data", "policy.pth"))
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        raise ValueError(f"{path!r} is not a Stable-Baselines3 zip ({err}); expected a model.save() file") \
            from None
    try:
        settings = json.loads(data)
    except (ValueError, RecursionError) as err:
        raise ValueError(f"{path!r}: its 'data' is not JSON ({short(str(err))})") from None
    if not isinstance(settings, dict):
        raise ValueError(f"{path!r}: its 'data' is {type(settings).__name__}; expected a JSON object")
    return settings, weights


def _member(z: zipfile.ZipFile, path: str, name: str) -> bytes:
    """A member of the zip, its stated and its actual inflated size bounded (a zip bomb is refused
    after at most the bound is inflated)."""
    most = MAX_MEMBER_BYTES[name]
    if z.getinfo(name).file_size > most:
        raise ValueError(f"{path!r}: its {name!r} inflates to {z.getinfo(name).file_size:,} bytes; expected "
                         f"at most {most:,}")
    with z.open(name) as f:
        return read_bounded(f, most, f"{path!r}: its {name!r}")


def _spaces(path: str, settings: dict) -> tuple[spaces.Space, spaces.Discrete, bool]:
    """This package's observation and action spaces for the saved ones (read by name and size)."""
    obs, act = settings.get("observation_space"), settings.get("action_space")
    if not isinstance(obs, dict) or not isinstance(act, dict):
        raise ValueError(f"{path!r}: its 'data' has no observation_space and action_space; expected "
                         "those of a MaskablePPO save")
    try:
        n = int(act["n"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{path!r}: its action space has no size 'n' ({short(act.get('n'))})") from None
    sizes = {name: len(action_table(name)) for name in PRESET_NAMES}  # the mask's length
    rules = next((name for name, size in sizes.items() if size == n), None)
    if rules is None:
        raise ValueError(f"{path!r}: its policy has {n} actions; the rules presets have "
                         + " or ".join(f"{size} ({name})" for name, size in sizes.items()))
    kind = str(obs.get(":type:", ""))
    if "spaces.dict.Dict" in kind:
        return observation_space(rules), spaces.Discrete(n), True
    if "spaces.box.Box" in kind:
        return observation_box(), spaces.Discrete(n), False
    raise ValueError(f"{path!r}: its observation space is {short(kind)}; expected a gymnasium Dict "
                     "(observation, action_mask) or Box")


def _policy_kwargs(path: str, settings: dict) -> dict:
    """``policy_kwargs`` of the save, if they are plain JSON (no pickled objects)."""
    kwargs = settings.get("policy_kwargs", {})
    if not isinstance(kwargs, dict):
        raise ValueError(f"{path!r}: its policy_kwargs are {short(kwargs)}; expected a JSON object")
    pickled = sorted(k for k, v in kwargs.items() if isinstance(v, dict) and ":serialized:" in v)
    if pickled or ":serialized:" in kwargs:
        raise ValueError(f"{path!r}: its policy_kwargs hold pickled objects ({', '.join(pickled) or 'all'}), "
                         "which this loader does not run; load it with the spec sb3-pickle:PATH "
                         "(SB3Agent.load(path, allow_pickle=True)) only if you trust the file")
    if "net_arch" in kwargs:
        _check_net_arch(path, kwargs["net_arch"])
    return kwargs


def _check_net_arch(path: str, arch) -> None:
    """``net_arch``: a list of layer widths, or a dict of them per network (``pi``, ``vf``), each list
    at most :data:`MAX_NET_LAYERS` integers in 1..:data:`MAX_NET_WIDTH` (before anything is allocated)."""
    lists = list(arch.values()) if isinstance(arch, dict) else [arch]
    for widths in lists:
        if not (isinstance(widths, list) and len(widths) <= MAX_NET_LAYERS
                and all(is_int(w) and 1 <= w <= MAX_NET_WIDTH for w in widths)):
            raise ValueError(f"{path!r}: its policy_kwargs net_arch is {short(arch)}; expected at most "
                             f"{MAX_NET_LAYERS} layer widths in 1..{MAX_NET_WIDTH:,} (a list, or a dict of "
                             "lists per network)")


def load_policy(path: str):
    """The ``MaskableActorCriticPolicy`` of an SB3 zip, built from plain settings and weights only."""
    import torch
    from sb3_contrib.common.maskable.policies import (
        MaskableActorCriticPolicy,
        MaskableMultiInputActorCriticPolicy,
    )

    settings, weights = _read_zip(path)
    obs_space, act_space, is_dict = _spaces(path, settings)
    kwargs = _policy_kwargs(path, settings)
    policy_class = MaskableMultiInputActorCriticPolicy if is_dict else MaskableActorCriticPolicy
    try:
        policy = policy_class(obs_space, act_space, lr_schedule=lambda _: 0.0, **kwargs)  # type: ignore[arg-type]
    except (TypeError, ValueError) as err:
        raise ValueError(f"{path!r}: its policy_kwargs {short(kwargs)} do not build a policy: "
                         f"{short(str(err), 160)}") from None
    try:
        state = torch.load(io.BytesIO(weights), map_location="cpu", weights_only=True)
        policy.load_state_dict(state)
    except Exception as err:  # unpickling refused, wrong keys or shapes: the weights do not fit
        raise ValueError(f"{path!r}: its policy.pth does not load as the weights of that policy "
                         f"({short(str(err), 160)})") from None
    policy.set_training_mode(False)
    return policy
