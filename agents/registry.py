"""Agents by name or checkpoint path, for the arena and the command line.

Specs:

- ``random``: :class:`agents.base.RandomAgent`
- ``rule``: :class:`agents.rule.RuleAgent`
- ``pretrained``: the DMC agent shipped with the package (``agents/weights/pretrained.pt``,
  standard rules; see ``docs/pretrained.md``), played greedily
- ``rlcard``: rlcard's ``DouDizhuRuleAgentV1`` through :mod:`agents.rlcard_adapter`
  (extra ``peers``: ``pip install rlcard==1.2.0``)
- ``dmc:PATH`` or a path ending in ``.pt``: a checkpoint of ``train.run`` (or ``train.export``),
  played greedily: by :class:`agents.dmc.DMCAgent` when the DMC learner wrote it, by
  :class:`agents.policy.PolicyAgent` (its most probable action) when the PPO learner did
- ``douzero:DIR`` or a path to a DouZero ``.ckpt`` file / a directory holding
  ``landlord.ckpt``, ``landlord_up.ckpt``, ``landlord_down.ckpt``: DouZero-format
  checkpoints through :mod:`agents.douzero_adapter` (needs torch)
- ``search:BASE[,key=value...]``: :class:`agents.search.SearchAgent`, Monte Carlo search over
  sampled worlds with ``BASE`` (any spec above but another search) deciding bidding and doubling,
  naming the candidates and playing the rollouts; options ``rollout=SPEC`` (or ``SPEC/SPEC/SPEC``
  by role: landlord, landlord_down, landlord_up), ``worlds``, ``candidates``, ``samples``,
  ``inference`` (``moves``, ``all`` or ``none``), ``inference_moves``, ``objective`` (``adp`` or ``wp``),
  ``time`` (seconds per decision); see ``docs/search.md``
- ``sb3:PATH``: an sb3-contrib ``MaskablePPO`` saved with ``model.save(PATH)``, played greedily
  through :mod:`agents.sb3_adapter` (extra ``rl``); loaded without unpickling anything.
  ``sb3-pickle:PATH`` loads it with SB3's own loader, which runs code from the file: an opt-in for
  files you trust
"""

from __future__ import annotations

import os
import threading

import numpy as np

from doudizhu_env.actions import action_table
from doudizhu_env.rules import Rules

from .base import Agent, RandomAgent

NAMES = ("random", "rule", "pretrained", "rlcard")
#: The prefixes of specs that name a file or folder (``search:`` names other specs).
PREFIXES = ("dmc:", "douzero:", "sb3:", "sb3-pickle:")
#: The shipped agent's weights (float16, loaded with ``weights_only=True``).
PRETRAINED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weights", "pretrained.pt")


class SharedModels:
    """The models of checkpoints (DMC or PPO) loaded once per path and shared by the agents built with them.

    A model's forward pass changes nothing in it, so one model may serve many agents in many
    threads (``tests/test_shared_agents.py``); each agent keeps its own generator, so seeded
    games stay reproducible. Holds one model per distinct path asked for (a server asks only for
    the specs it was started with).
    """

    def __init__(self):
        self._models: dict = {}
        self._lock = threading.Lock()

    def load(self, path: str):
        """The model of ``path``, loaded on the first call."""
        from .checkpoint import load_model

        with self._lock:
            if path not in self._models:
                self._models[path] = load_model(path)
            return self._models[path]


def make_agent(spec: str, rules: Rules | None = None, seed=0, models: SharedModels | None = None) -> Agent:
    """The agent a spec names, seeded with ``seed`` (an int or a list of ints); with ``models``,
    DMC models are loaded through it (once per path, shared)."""
    rng = np.random.default_rng(seed)
    if spec.startswith("search:"):
        return _search_agent(spec, rules, rng, models)
    if spec == "random":
        return RandomAgent(rng)
    if spec == "rule":
        from .rule import RuleAgent

        return RuleAgent()
    if spec == "rlcard":
        from .rlcard_adapter import RlcardRuleAgent

        return RlcardRuleAgent(seed=rng)
    if spec == "pretrained":
        return _dmc_agent(PRETRAINED, rules, models)
    if spec.startswith(("sb3:", "sb3-pickle:")):
        from .sb3_adapter import SB3Agent

        pickles = spec.startswith("sb3-pickle:")
        agent = SB3Agent.load(spec.split(":", 1)[1], allow_pickle=pickles)
        if rules is not None and agent.num_actions != len(action_table(rules)):
            raise ValueError(f"{spec!r} has {agent.num_actions} actions; the rules {rules} have "
                             f"{len(action_table(rules))}")
        return agent
    if spec.startswith("dmc:") or (spec.endswith(".pt") and not spec.startswith("douzero:")):
        return _dmc_agent(spec.removeprefix("dmc:"), rules, models)
    if spec.startswith("douzero:") or spec.endswith(".ckpt") or os.path.isdir(spec):
        from .douzero_adapter import DouZeroAgent

        return DouZeroAgent.load(spec.removeprefix("douzero:"), seed=rng)
    raise ValueError(f"unknown agent {spec!r}; expected one of {list(NAMES)}, dmc:PATH or a .pt checkpoint, "
                     "douzero:DIR, a .ckpt path, sb3:PATH (sb3-pickle:PATH to run its pickles), or "
                     "search:BASE[,key=value...]")


def split_rollout(value: str) -> list[str]:
    """The rollout spec(s) of a search spec's ``rollout=VALUE``: one spec, or three by role separated
    by ``/`` (landlord/landlord_down/landlord_up). ``VALUE`` is one spec when it names an existing file
    or folder (``dmc:runs/x/c.pt``) or reads as one; in the three-spec form a prefixed spec may name a
    path with ``/`` in it (``rule/rule/dmc:/abs/ck.pt``: a spec starts at a name, a prefix, or a
    ``.pt``/``.ckpt`` file after a complete spec), and a bare path needs its prefix. Anything else is a
    one-line :class:`~agents.search.SearchConfigError` saying what was found."""
    path = next((value[len(p):] for p in PREFIXES if value.startswith(p)), value)
    if "/" not in value or os.path.exists(path):
        return [value]
    tokens = value.split("/")
    groups = _role_specs(tokens)
    if groups is None and not _starts_spec(tokens[0]):
        return [value]  # a bare path (or anything else): one spec, which make_agent names if it is wrong
    if groups is not None and len(groups) == 1:
        return [value]
    if groups is not None and len(groups) == 3:
        return groups
    from .search import SearchConfigError

    found = (f"found {len(groups)}: {' | '.join(groups)}" if groups is not None else
             "a part that is no spec: a path in the three-spec form needs its prefix, e.g. "
             "rule/rule/dmc:/abs/ck.pt")
    raise SearchConfigError(f"rollout={value!r}: expected one agent spec, or three separated by '/' "
                            f"(landlord/landlord_down/landlord_up); {found}")


def _starts_spec(token: str) -> bool:
    """Whether ``token`` (a part of a rollout between ``/``) begins a spec: a name or a prefixed spec."""
    return token in NAMES or token.startswith((*PREFIXES, "search:"))


def _complete(spec: str) -> bool:
    """Whether a spec being read ends where it is (a name, a checkpoint file; a prefixed folder may go on)."""
    return spec in NAMES or spec.endswith((".pt", ".ckpt"))


def _role_specs(tokens: list[str]) -> list[str] | None:
    """The specs of a rollout's ``/``-separated ``tokens``: a spec starts at a name or a prefix, or at a
    checkpoint file after a complete spec; other tokens continue the path of a prefixed spec being read.
    None if a token can do neither."""
    groups: list[str] = []
    for token in tokens:
        after_complete = not groups or _complete(groups[-1])
        if _starts_spec(token) or (token.endswith((".pt", ".ckpt")) and after_complete):
            groups.append(token)
        elif groups and groups[-1].startswith(PREFIXES) and not _complete(groups[-1]):
            groups[-1] += "/" + token
        else:
            return None
    return groups


def spec_paths(spec: str) -> list[str]:
    """The files and folders a spec names (a search spec's base and rollouts included; the shipped
    weights for ``pretrained``); a spec that cannot be parsed names none."""
    if spec.startswith("search:"):
        from .search import parse_spec

        try:
            base, rollout, _ = parse_spec(spec)
            parts = [base, *(split_rollout(rollout) if rollout else [])]
        except ValueError:
            return []
        return [p for part in parts if not part.startswith("search:") for p in spec_paths(part)]
    if spec == "pretrained":
        return [PRETRAINED]
    prefixed = next((spec[len(p):] for p in PREFIXES if spec.startswith(p)), None)
    if prefixed is not None:
        return [prefixed]
    return [spec] if spec.endswith((".pt", ".ckpt")) or os.path.isdir(spec) else []


def spec_files(specs) -> list[str]:
    """The existing files the specs name, a named folder's files included (the inputs of a command
    that plays them: none of its outputs may be one of them)."""
    found = []
    for spec in specs:
        for path in spec_paths(spec):
            if os.path.isdir(path):
                found += sorted(os.path.join(path, n) for n in os.listdir(path)
                                if os.path.isfile(os.path.join(path, n)))
            elif os.path.isfile(path):
                found.append(path)
    return list(dict.fromkeys(found))


def check_specs(specs, rules: Rules | None = None, models: SharedModels | None = None) -> None:
    """Build each distinct agent of ``specs`` once, so that a bad spec or checkpoint fails before any
    game: ``ValueError`` naming the spec and what is wrong with it. With ``models``, the models
    loaded stay there (loaded once for the games to come)."""
    for spec in dict.fromkeys(specs):
        try:
            make_agent(spec, rules=rules, models=models)
        except (ValueError, OSError, ImportError) as err:
            raise ValueError(f"agent {spec!r}: {err}") from err


def _dmc_agent(path: str, rules: Rules | None, models: SharedModels | None = None) -> Agent:
    """The greedy agent of a training checkpoint (``train.run``) by the learner that wrote it: the
    policy's weights only (a PPO file's critic is not read)."""
    from .checkpoint import load_model
    from .policy import policy_agent

    model = models.load(path) if models is not None else load_model(path)
    if rules is not None and action_table(rules).names != action_table(model.rules).names:
        raise ValueError(f"{path!r} was trained under rules {model.rules}; its actions differ from {rules}'s")
    return policy_agent(model)


def _search_agent(spec: str, rules: Rules | None, rng: np.random.Generator,
                  models: SharedModels | None = None) -> Agent:
    """A :class:`agents.search.SearchAgent` from ``search:BASE[,key=value...]``."""
    from .search import SearchAgent, SearchConfigError, parse_spec

    base_spec, rollout_spec, config = parse_spec(spec)
    if base_spec.startswith("search:") or "search:" in (rollout_spec or ""):
        raise SearchConfigError(f"{spec!r}: a search agent's base and rollouts cannot be search agents")
    seeds = rng.integers(0, 2**63 - 1, 5)
    base = make_agent(base_spec, rules, seeds[0], models)
    rollout = None
    if rollout_spec is not None:
        parts = split_rollout(rollout_spec)
        built = {p: make_agent(p, rules, seeds[1 + k], models) for k, p in enumerate(dict.fromkeys(parts))}
        rollout = built[parts[0]] if len(parts) == 1 else [built[p] for p in parts]
    return SearchAgent(base, config, rollout, seed=np.random.default_rng(seeds[4]))
