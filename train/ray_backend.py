"""DMC training on Ray (``backend: ray``): self-play actors as Ray actors, anywhere on a cluster.

The learner stays in the process that runs :func:`train.run.train` (with
its ``device`` and ``threads``: the GPU of that machine, if any), and with it
the buffer, checkpoints, TensorBoard and evaluations (:class:`train.run.Run`,
the same as with the local backend). What differs is how samples arrive and
how weights reach the actors:

- ``num_actors`` :class:`RolloutWorker` Ray actors, each reserving
  ``ray_actor_num_cpus`` CPUs and ``ray_actor_num_gpus`` GPUs, each running a
  :class:`train.actor.Actor` on its own copy of the model;
- weights: every ``ray_broadcast_updates`` learner updates the learner puts
  its weights (numpy arrays, read without a copy) into Ray's object store
  once; an actor loads the newest ones when it starts a chunk;
- samples: each actor has ``ray_chunks_in_flight`` ``collect`` calls
  outstanding; the learner takes finished chunks as they come and only then
  asks that actor for another, so at most ``num_actors x ray_chunks_in_flight``
  chunks are in flight (the back-pressure: actors wait for a slow learner);
- an actor that dies (its process killed, its node lost) is replaced by a new
  one in its slot, with a new seed, and training goes on; the replacement is
  printed and counted in TensorBoard (``perf/actor_replacements``).

Frames are counted when the learner receives a chunk. ``perf/weights_lag_updates``
is how many learner updates older than the newest the weights of the chunks were.
"""

from __future__ import annotations

import dataclasses
import math
import os
import warnings
from typing import cast

import numpy as np
import torch

from agents.dmc import ScoreModel
from doudizhu_env.rules import Rules

from .actor import Actor
from .config import ConfigError, TrainConfig
from .learner import learner_class

#: An actor slot whose actors die this many times in a row before delivering a chunk stops the run.
MAX_EARLY_DEATHS = 3


def check_ray() -> None:
    """``ConfigError`` saying how to install Ray when it is missing (``backend: ray``)."""
    from doudizhu_arena.cluster import import_ray

    try:
        import_ray()
    except ImportError as err:
        raise ConfigError(f"backend: ray needs Ray: {err}") from err


def weights_of(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """The model's weights as numpy arrays (Ray stores them unpickled; actors read them without a copy)."""
    return {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}


def load_weights(model: torch.nn.Module, weights: dict[str, np.ndarray]) -> None:
    """Copy ``weights`` (from :func:`weights_of`) into ``model``: one copy, from the object store's memory."""
    with warnings.catch_warnings():  # the object store's arrays are read-only, and only read here
        warnings.simplefilter("ignore", UserWarning)
        tensors = {k: torch.from_numpy(v) for k, v in weights.items()}
    model.load_state_dict(tensors)


@dataclasses.dataclass(frozen=True)
class Broadcast:
    """The newest weights in the object store: a version number and ``[ObjectRef]``.

    The reference sits in a list so that Ray passes it to an actor as it is
    (a top-level reference would be fetched for every call); the actor
    fetches it only when the version is new to it.
    """

    version: int
    ref: list


class OnDevice:
    """A :class:`~agents.dmc.ScoreModel` on ``device`` for :class:`~agents.dmc.DMCAgent`, which gives it
    CPU tensors and reads CPU tensors back: the inputs go to the device, the Q-values come back.
    ``rules`` and ``cfg`` are the model's (the actor reads both)."""

    def __init__(self, model: ScoreModel, device: str):
        self.model, self.device = model.to(device), torch.device(device)
        self.rules, self.cfg = model.rules, model.cfg

    def score(self, obs: torch.Tensor, network: np.ndarray, ids: np.ndarray, seg: np.ndarray) -> torch.Tensor:
        """:meth:`agents.dmc.ScoreModel.score` on the device, returned on the CPU."""
        return self.model.score(obs.to(self.device), network, ids, seg).cpu()


def actor_device(cfg: TrainConfig) -> str:
    """Where a Ray actor's model plays: its GPU (Ray sets ``CUDA_VISIBLE_DEVICES``) when it reserves one."""
    return "cuda" if cfg.ray_actor_num_gpus > 0 else "cpu"


class RolloutWorker:
    """One self-play actor of a Ray run: a :class:`train.actor.Actor` on its own copy of the model
    (on the GPU that the actor reserved, if any: :func:`actor_device`)."""

    def __init__(self, cfg: TrainConfig, seed_seq: list[int], weights: Broadcast):
        torch.set_num_threads(cfg.threads)
        self.model = learner_class(cfg.learner).new_model(Rules.preset(cfg.rules), cfg.model)
        device = actor_device(cfg)
        self.version = -1
        self._sync(weights)
        plays = OnDevice(self.model, device) if device != "cpu" else self.model
        # OnDevice plays the model's part for the actor (forward, rules, cfg): typed as the model
        self.actor = Actor.from_config(cast(ScoreModel, plays), cfg, np.random.default_rng(seed_seq))
        self.chunk_size = cfg.chunk_size

    def pid(self) -> int:
        """The process id of this actor (to watch or kill it)."""
        return os.getpid()

    def _sync(self, weights: Broadcast) -> None:
        if weights.version != self.version:
            import ray

            load_weights(self.model, ray.get(weights.ref[0]))
            self.version = weights.version

    def collect(self, weights: Broadcast, epsilon: float, warm: bool = False) -> dict:
        """One chunk of ``chunk_size`` or more samples, played with ``weights``; and the frames it took."""
        self._sync(weights)
        before = self.actor.frames
        samples = self.actor.collect(self.chunk_size, epsilon, warm)
        return {"samples": samples, "frames": self.actor.frames - before, "version": self.version}


class Fleet:
    """The Ray actors of a run, their calls in flight, and the weights they play with."""

    def __init__(self, ray, run):
        self.ray, self.run, cfg = ray, run, run.cfg
        _announce(ray, cfg)
        self.remote = ray.remote(num_cpus=cfg.ray_actor_num_cpus, num_gpus=cfg.ray_actor_num_gpus,
                                 max_restarts=0)(RolloutWorker)
        self.version, self.broadcast_at = 0, run.updates
        self.weights = Broadcast(0, [ray.put(weights_of(run.model))])
        self.pending: dict = {}  # ObjectRef of a collect call -> slot
        self.actors: list = [None] * cfg.num_actors
        self.generation = [0] * cfg.num_actors
        self.early_deaths = [0] * cfg.num_actors  # deaths in a row before a first chunk
        self.delivered = [0] * cfg.num_actors
        self.replacements = 0
        for slot in range(cfg.num_actors):
            self._start(slot)

    def _start(self, slot: int) -> None:
        """A new actor in ``slot``, seeded by the slot and its generation, with its calls submitted."""
        cfg, gen = self.run.cfg, self.generation[slot]
        seed = [cfg.seed, slot + 1, self.run.resumed_from] + ([gen] if gen else [])  # generation 0: as local
        self.actors[slot] = self.remote.remote(cfg, seed, self.weights)
        self.delivered[slot] = 0
        for _ in range(cfg.ray_chunks_in_flight):
            self._submit(slot)

    def _submit(self, slot: int) -> None:
        ref = self.actors[slot].collect.remote(self.weights, self.run.epsilon(), self.run.warming())
        self.pending[ref] = slot

    def next_chunk(self, timeout: float) -> dict | None:
        """The next finished chunk (its slot's next call submitted), or None after ``timeout`` seconds
        or when the chunk's actor died (it is then replaced)."""
        ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=timeout)
        if not ready:
            return None
        slot = self.pending.pop(ready[0])
        try:
            result = self.ray.get(ready[0])
        except self.ray.exceptions.RayActorError as err:
            self._replace(slot, err)
            return None
        self.delivered[slot] += 1
        self.early_deaths[slot] = 0
        lag = (self.version - result["version"]) * self.run.cfg.ray_broadcast_updates
        self.run.stats.setdefault("perf/weights_lag_updates", []).append(lag)
        if self.generation[slot] and self.delivered[slot] == 1:
            print(f"the new actor {slot} delivered its first chunk at {self.run.frames + result['frames']:,} "
                  "frames", flush=True)
        self._submit(slot)
        return result

    def _replace(self, slot: int, err: Exception) -> None:
        """Drop the dead actor of ``slot`` and its calls; start a new one (stop the run if it keeps dying)."""
        if not self.delivered[slot]:
            self.early_deaths[slot] += 1
            if self.early_deaths[slot] >= MAX_EARLY_DEATHS:
                raise RuntimeError(f"Ray actor {slot} died {MAX_EARLY_DEATHS} times in a row before "
                                   f"delivering a chunk; the last error: {_first_line(err)}")
        for ref in [r for r, s in self.pending.items() if s == slot]:
            del self.pending[ref]
        self.ray.kill(self.actors[slot], no_restart=True)
        self.generation[slot] += 1
        self.replacements += 1
        self._start(slot)
        self.run.writer.add_scalar("perf/actor_replacements", self.replacements, self.run.frames)
        print(f"actor {slot} died at {self.run.frames:,} frames ({type(err).__name__}: {_first_line(err)}); "
              f"replaced by a new actor (replacement {self.replacements})", flush=True)

    def maybe_broadcast(self) -> None:
        """New weights in the object store when ``ray_broadcast_updates`` updates were made since the last."""
        if self.run.updates - self.broadcast_at >= self.run.cfg.ray_broadcast_updates:
            self.version += 1
            self.weights = Broadcast(self.version, [self.ray.put(weights_of(self.run.model))])
            self.broadcast_at = self.run.updates

    def stop(self) -> None:
        """Kill every actor; chunks still in flight are dropped."""
        for actor in self.actors:
            if actor is not None:
                self.ray.kill(actor, no_restart=True)
        self.pending.clear()


def _announce(ray, cfg: TrainConfig) -> None:
    """Check that the cluster has room for an actor (:func:`check_room`); say what runs where."""
    resources = ray.cluster_resources()
    check_room(resources, cfg)
    nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
    print(f"Ray: {cfg.num_actors} actors ({cfg.ray_actor_num_cpus:g} CPU, {cfg.ray_actor_num_gpus:g} GPU "
          f"each) on {nodes} node(s) with {resources.get('CPU', 0):g} CPUs and "
          f"{resources.get('GPU', 0):g} GPUs; the learner in this process", flush=True)


def check_room(resources: dict, cfg: TrainConfig) -> None:
    """``ConfigError`` when the cluster (its total ``resources``) cannot hold even one actor;
    a printed note when it holds fewer than ``num_actors`` (the others wait for room, e.g. new nodes)."""
    need = {"CPU": cfg.ray_actor_num_cpus, "GPU": cfg.ray_actor_num_gpus}
    fits = [math.floor(resources.get(k, 0.0) / v + 1e-9) for k, v in need.items() if v > 0]
    room = min(fits) if fits else cfg.num_actors
    if room < 1:
        have = ", ".join(f"{resources.get(k, 0.0):g} {k}" for k in need)
        raise ConfigError(f"the Ray cluster ({have}) has no room for one actor of ray_actor_num_cpus "
                          f"{cfg.ray_actor_num_cpus:g} and ray_actor_num_gpus {cfg.ray_actor_num_gpus:g}; "
                          "expected settings that fit its nodes")
    if room < cfg.num_actors:
        print(f"the Ray cluster has room for {room} of the {cfg.num_actors} actors now; the others start "
              "when resources free up or nodes join", flush=True)


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else "no message"


def local_cpus(cfg: TrainConfig) -> int:
    """CPUs of the local Ray instance a run starts: the actors' (the learner keeps its own, outside Ray)."""
    return max(1, math.ceil(cfg.num_actors * cfg.ray_actor_num_cpus))


def run_ray(run) -> None:
    """``num_actors`` Ray actors feeding the learner of ``run`` (a :class:`~train.run.Run`) until it ends."""
    from doudizhu_arena.cluster import ClusterUnreachable, ray_session

    cfg = run.cfg
    try:
        with ray_session(cfg.ray_address, num_cpus=local_cpus(cfg)) as ray:
            fleet = Fleet(ray, run)
            try:
                _learn(run, fleet)
            finally:
                fleet.stop()
    except ClusterUnreachable as err:
        raise ConfigError(f"ray_address: {err}") from err


def _learn(run, fleet: Fleet) -> None:
    """The learner's loop: take a chunk when one is ready, train, broadcast, checkpoint, log, evaluate."""
    while not run.budget_spent():
        result = fleet.next_chunk(timeout=1.0)
        if result is not None:
            run.buffer.put(result["samples"])
            run.frames += result["frames"]
        run.train_on_buffer()
        fleet.maybe_broadcast()
        run.periodic()
