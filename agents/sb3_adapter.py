"""Stable-Baselines3 policies as arena agents: a trained ``MaskablePPO`` (sb3-contrib) plays like any agent.

::

    from agents.arena import format_report, run_arena

    report = run_arena(["sb3:ppo_doudizhu.zip", "random", "random"], 300)  # a model.save() file
    print(format_report(report))

``sb3:PATH`` is the spec of :func:`agents.registry.make_agent` (so also
``python -m train.evaluate --landlord sb3:ppo_doudizhu.zip --farmers random``);
``SB3Agent(model)`` wraps a model already in memory (with ``run_arena``'s
``agent_factory``).

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

import numpy as np
from gymnasium import spaces

from doudizhu_env import engine
from doudizhu_env.observation import OBS_SIZE, observe

from .base import Agent


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
    def load(cls, path: str, deterministic: bool = True) -> SB3Agent:
        """A ``MaskablePPO`` saved with ``model.save(path)``, on the CPU."""
        from sb3_contrib import MaskablePPO

        return cls(MaskablePPO.load(path, device="cpu"), deterministic)

    def act(self, view: engine.State) -> np.ndarray:
        if view.num_actions != self.num_actions:
            raise ValueError(f"the model has {self.num_actions} actions; these rules have {view.num_actions}")
        mask = engine.legal_action_mask(view)  # (N, A) bool, of the seat to act: the view is enough
        vec = observe(view)  # (N, OBS_SIZE): the seat to act, only what it sees
        obs = {"observation": vec, "action_mask": mask.view(np.int8)} if self.dict_obs else vec
        actions, _ = self.model.predict(obs, action_masks=mask, deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64).reshape(view.num_games)
