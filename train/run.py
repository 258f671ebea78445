"""Self-play training of the whole game (bidding, doubling and play) by DMC or PPO, logged to TensorBoard.

Run::

    python -m train.run --config configs/default.yaml --max-minutes 5
    python -m train.run --config configs/ppo.yaml --max-minutes 5          # learner: ppo
    python -m train.run --config configs/tiny.yaml --run-name test --total-frames 5000
    python -m train.run --config configs/default.yaml --resume        # continue runs/<run_name>

Every field of :class:`train.config.TrainConfig` can be overridden as
``--field-name VALUE``. Outputs go to ``<out_dir>/<run_name>/``:
``checkpoint.pt`` (latest, atomic), TensorBoard event files, and
``eval.json`` (the last evaluation).

How it works, top to bottom:

1. One :class:`~agents.dmc.DMCModel` (five networks) lives in
   shared memory.
2. ``num_actors`` actor processes (:func:`train.actor.actor_process`) each
   step ``games_per_actor`` games on the batched engine, choosing for all of
   them with one forward pass per step (epsilon-greedy), and send chunks of
   (observation, action, network, Monte-Carlo target) samples through a
   bounded queue. With ``num_actors: 0`` one actor runs in this process,
   alternating with the learner, and the whole run is deterministic.
   With ``backend: ray`` the actors are Ray actors on a Ray cluster instead
   (:mod:`train.ray_backend`), and everything else is the same.
3. The learner (this process) takes fixed-size batches from a bounded
   buffer, regresses Q(s, a) on the targets with Adam, and updates the shared
   weights in place. With ``learner: ppo`` the same networks are a policy
   and the learner is :class:`train.ppo.PPOLearner` (batches of whole hands,
   a critic that sees the hidden hands, the clipped objective); the rest of
   the run is the same.
4. Every ``checkpoint_minutes`` a checkpoint; every ``eval_minutes`` an
   evaluation through the arena against the baselines; at the end both,
   and the evaluation table is printed.

Stopping early: Ctrl-C (SIGINT) or SIGTERM ends the run at the next step,
saves its checkpoint (``--resume`` continues it) and skips the final
evaluation; a second Ctrl-C quits at once, without a checkpoint.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import glob
import json
import math
import os
import re
import signal
import sys
import threading
import time
from typing import Any

import numpy as np
import torch
import torch.multiprocessing as mp

from agents.checkpoint import CheckpointError, learner_of, load_model, read_checkpoint, save_checkpoint
from agents.dmc import DMCModel
from agents.policy import policy_agent
from doudizhu_env.checks import is_int, short
from doudizhu_env.files import atomic_write, output_problem, remove_inside
from doudizhu_env.rules import Rules

from .actor import PAST, Actor, actor_process, epsilon_at
from .buffer import SampleBuffer
from .config import ConfigError, TrainConfig, load_config, one_line, override_parser, resolve_device
from .learner import Learner
from .ppo import PPOLearner


class Run:
    """The state of one training run: model, learner, counters, clocks, writer."""

    def __init__(self, cfg: TrainConfig, resume: bool):
        self.cfg = cfg
        self.dir = os.path.join(cfg.out_dir, cfg.run_name)
        self.ckpt_path = os.path.join(self.dir, "checkpoint.pt")
        self.rules = Rules.preset(cfg.rules)
        torch.manual_seed(cfg.seed)
        self.model = DMCModel(self.rules, cfg.model)
        self.model.learner = cfg.learner
        self.frames, self.updates, self.resumed_from, self.resumed_updates = 0, 0, 0, 0
        self.minutes_before = 0.0  # training minutes of the run this one resumes (0 when it starts fresh)
        self.stop_signal: str | None = None  # the signal's name once the user asked the run to stop
        device = resolve_device(cfg.device)
        self.train_model = self.model if device == "cpu" else copy.deepcopy(self.model).to(device)
        self.learner = make_learner(cfg, self.train_model, device)
        self.trained = 0  # samples the learner took since this run started
        self.last_entropy = float("nan")  # PPO's policy entropy at the last progress line
        if resume:
            self._resume()
        elif cfg.init_weights:
            self._init_from(cfg.init_weights)
        self.model.share_memory()
        self.buffer = SampleBuffer(cfg.buffer_size)
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(self.dir)
        self.start = time.monotonic()
        self.last = {"log": self.start, "ckpt": self.start, "eval": self.start, "frames": self.frames}
        self.stats: dict[str, list[float]] = {}

    def _resume(self):
        if not os.path.isfile(self.ckpt_path):
            raise CheckpointError(f"--resume: no checkpoint at {self.ckpt_path!r}; expected the "
                                  "checkpoint.pt of an earlier run with this out_dir and run_name")
        data = read_checkpoint(self.ckpt_path)
        if learner_of(data) != self.cfg.learner:
            raise CheckpointError(f"--resume: {self.ckpt_path!r} was written by the {learner_of(data)} "
                                  f"learner; expected learner: {learner_of(data)} to continue it")
        model = load_model(self.ckpt_path, self.rules, self.cfg.model)
        frames, updates, rng = _resume_state(self.ckpt_path, data)
        try:
            self.learner.optimizer.load_state_dict(data["optimizer"])
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError) as err:
            raise CheckpointError(f"{self.ckpt_path!r}: its optimizer state does not fit this model's "
                                  f"optimizer ({short(str(err), 120)})") from None
        self.model.load_state_dict(model.state_dict())
        self.train_model.load_state_dict(model.state_dict())
        self.frames = self.resumed_from = frames
        self.updates = self.resumed_updates = self.learner.updates = updates
        self.minutes_before = _saved_minutes(data)
        torch.set_rng_state(rng)
        if isinstance(self.learner, PPOLearner):
            resume_critic(self.learner, self.ckpt_path, data)

    def _init_from(self, spec: str):
        """Start from the weights of ``spec`` (a file or ``pretrained``), counting on from its frames."""
        from agents.registry import PRETRAINED

        path = PRETRAINED if spec == "pretrained" else spec
        try:
            model = load_model(path, self.rules, self.cfg.model)
            frames, updates = _counts(path, read_checkpoint(path), missing=0)
        except CheckpointError as err:
            raise CheckpointError(f"init_weights: {err}") from None
        self.frames, self.updates = frames, updates
        self.resumed_from, self.resumed_updates = self.frames, self.updates
        self.learner.updates = self.updates
        self.model.load_state_dict(model.state_dict())
        self.train_model.load_state_dict(model.state_dict())

    # -- bookkeeping -------------------------------------------------------

    def elapsed_minutes(self) -> float:
        """Minutes since this process started training (what ``max_minutes`` limits)."""
        return (time.monotonic() - self.start) / 60.0

    def trained_minutes(self) -> float:
        """Minutes of training of the whole run, across ``--resume``: what checkpoints record."""
        return self.minutes_before + self.elapsed_minutes()

    def budget_spent(self) -> bool:
        return self.out_of_time(0)

    def out_of_time(self, more_frames: int) -> bool:
        """Whether the budget is spent once ``more_frames`` (not yet counted) are added."""
        cfg = self.cfg
        out_of_frames = cfg.total_frames and self.frames + more_frames >= cfg.total_frames
        out_of_time = cfg.max_minutes and self.elapsed_minutes() >= cfg.max_minutes
        return bool(out_of_frames or out_of_time or self.stop_signal)

    def budget_share(self) -> float:
        """Share of this run's budget spent: of ``total_frames`` (the frames made since this run
        started, of those it set out to make) or of ``max_minutes``, the larger; 0 with neither."""
        cfg, shares = self.cfg, [0.0]
        if cfg.total_frames:
            shares.append((self.frames - self.resumed_from) / max(cfg.total_frames - self.resumed_from, 1))
        if cfg.max_minutes:
            shares.append(self.elapsed_minutes() / cfg.max_minutes)
        return min(max(shares), 1.0)

    def learning_rate(self) -> float:
        """``learning_rate`` falling linearly to ``learning_rate x learning_rate_end_factor`` over the
        budget (:meth:`budget_share`)."""
        cfg = self.cfg  # a factor of 1 gives learning_rate exactly
        return cfg.learning_rate * (1.0 - (1.0 - cfg.learning_rate_end_factor) * self.budget_share())

    def epsilon(self) -> float:
        cfg = self.cfg
        return epsilon_at(self.frames, cfg.epsilon, cfg.epsilon_final, cfg.epsilon_decay_frames)

    def warming(self) -> bool:
        """Whether the actors still play warm-start games (``warm_start_frames``)."""
        return self.frames < self.cfg.warm_start_frames

    def train_on_buffer(self) -> None:
        """Learner updates while the buffer holds a full batch (PPO: of whole hands)."""
        take = self.buffer.take_whole if self.cfg.learner == "ppo" else self.buffer.take
        while (batch := take(self.cfg.batch_size)) is not None:
            self.trained += len(batch["target"])
            self.learner.learning_rate = self.learning_rate()
            for key, value in self.learner.update(batch).items():
                self.stats.setdefault(key, []).append(value)
            self.updates = self.learner.updates
            if self.train_model is not self.model:
                self.model.load_state_dict(self.train_model.state_dict())

    def maybe_log(self, force: bool = False) -> None:
        """TensorBoard scalars and one progress line, every ``log_seconds``."""
        now = time.monotonic()
        if not force and now - self.last["log"] < self.cfg.log_seconds:
            return
        step = self.frames
        means = {key: float(np.mean(values)) for key, values in self.stats.items()}
        for key, value in means.items():
            self.writer.add_scalar(key, value, step)
        fps = (self.frames - self.last["frames"]) / max(now - self.last["log"], 1e-9)
        share = self.trained_share()
        self.writer.add_scalar("perf/frames_per_s", fps, step)
        self.writer.add_scalar("perf/epsilon", self.epsilon(), step)
        self.writer.add_scalar("perf/learning_rate", self.learner.learning_rate, step)
        self.writer.add_scalar("perf/updates", self.updates, step)
        self.writer.add_scalar("perf/trained_share", share, step)
        self.writer.flush()
        self.last_entropy = means.get("ppo/entropy", float("nan"))
        self.stats.clear()
        self.last.update(log=now, frames=self.frames)
        print(self.progress_line(fps, means.get("loss/all", float("nan")), share), flush=True)

    def trained_share(self) -> float:
        """Share of the samples made since the start that the learner trained on."""
        made = self.frames - self.resumed_from
        return min(1.0, self.trained / made) if made else 0.0

    def progress_line(self, fps: float, loss: float, share: float) -> str:
        cfg, minutes = self.cfg, self.elapsed_minutes()
        parts = [f"[{minutes:5.1f} min]", f"frames {self.frames:,}"]
        if cfg.total_frames:
            parts[-1] += f"/{cfg.total_frames:,}"
        explore = f"eps {self.epsilon():.3f}"
        if cfg.learner == "ppo":
            explore = f"entropy {self.last_entropy:.3f}" + (" (cloning)" if self.warming() else "")
        parts += [f"{fps:,.0f} frames/s", f"updates {self.updates:,}", f"loss {loss:.4f}", explore,
                  f"trained on {share:.1%} of samples"]
        if cfg.max_minutes:
            parts.append(f"{max(cfg.max_minutes - minutes, 0.0):.1f} min left")
        return "  ".join(parts)

    def checkpoint(self) -> None:
        learner: dict[str, Any] = {"learner": self.cfg.learner}
        rng = {"torch": torch.get_rng_state()}
        if isinstance(self.learner, PPOLearner):  # the critic, for --resume only: no agent reads it
            learner["critic"] = self.learner.critic.state_dict()
            rng["shuffle"] = self.learner.generator.get_state()
        save_checkpoint(
            self.ckpt_path, self.train_model, self.learner.optimizer,
            frames=int(self.frames), updates=int(self.updates), train_config=self.cfg.to_dict(),
            rng=rng, minutes=self.trained_minutes(), **learner,
        )
        if self.cfg.keep_checkpoints:
            kept = os.path.join(self.dir, "checkpoints")
            os.makedirs(kept, exist_ok=True)
            save_checkpoint(os.path.join(kept, f"{int(self.frames):012d}.pt"), self.train_model,
                            frames=int(self.frames), updates=int(self.updates), learner=self.cfg.learner,
                            train_config=self.cfg.to_dict(), minutes=self.trained_minutes())
        self.last["ckpt"] = time.monotonic()

    def evaluate(self) -> dict:
        """WP / ADP against each baseline through the arena; logged and written to eval.json."""
        from doudizhu_arena.evaluation import evaluate_against

        agent = policy_agent(self.model, self.cfg.learner)
        report = evaluate_against(agent, self.rules, self.cfg.eval_opponents, self.cfg.eval_deals,
                                  seed=self.cfg.seed)
        for name, figures in report.items():
            for key, value in figures.items():
                if key != "table":
                    self.writer.add_scalar(f"eval/{name}/{key}", value, self.frames)
        atomic_write(os.path.join(self.dir, "eval.json"),
                     json.dumps({"frames": self.frames, "results": report}, indent=2))
        self.last["eval"] = time.monotonic()
        print(f"evaluation at {self.frames:,} frames: " + "; ".join(
            f"{name} WP {fig['wp']:.3f} ADP {fig['adp']:+.3f}" for name, fig in report.items()), flush=True)
        return report

    def periodic(self) -> None:
        now = time.monotonic()
        if now - self.last["ckpt"] >= self.cfg.checkpoint_minutes * 60:
            self.checkpoint()
        due = self.cfg.eval_minutes and now - self.last["eval"] >= self.cfg.eval_minutes * 60
        if due and self.cfg.eval_deals:  # eval_deals 0: no evaluation, periodic or final
            self.evaluate()
        self.maybe_log()


def make_learner(cfg: TrainConfig, model: DMCModel, device: str):
    """The learner ``cfg.learner`` names, training ``model`` on ``device``."""
    if cfg.learner == "ppo":
        return PPOLearner(model, cfg, device)
    return Learner(model, cfg.learning_rate, cfg.max_grad_norm, device, cfg.hand_loss_weight)


def resume_critic(learner: PPOLearner, path: str, data: dict) -> None:
    """The critic's weights and the shuffles' generator of a PPO checkpoint, into ``learner``
    (CheckpointError when the file has none that fit)."""
    try:
        learner.critic.load_state_dict(data["critic"])
        learner.generator.set_state(data["rng"]["shuffle"])
    except (KeyError, TypeError, ValueError, RuntimeError) as err:
        raise CheckpointError(f"{path!r}: no critic of this model to resume a ppo run from "
                              f"({short(str(err), 120)})") from None


def _saved_minutes(data: dict) -> float:
    """The training minutes a checkpoint records (0 for checkpoints from before they were recorded)."""
    minutes = data.get("minutes", 0.0)
    ok = isinstance(minutes, (int, float)) and math.isfinite(minutes) and minutes >= 0
    return float(minutes) if ok else 0.0


def _resume_state(path: str, data: dict) -> tuple[int, int, torch.Tensor]:
    """Frames, updates and torch RNG state of a checkpoint to resume from, checked (CheckpointError)."""
    if not isinstance(data.get("optimizer"), dict) or not data["optimizer"]:
        raise CheckpointError(f"{path!r} holds no optimizer state to resume from (a checkpoint of train.run "
                              "has one; an exported file does not)")
    frames, updates = _counts(path, data)
    rng = data.get("rng", {}).get("torch") if isinstance(data.get("rng"), dict) else None
    expected = torch.get_rng_state()
    if not isinstance(rng, torch.Tensor) or rng.dtype != expected.dtype or rng.shape != expected.shape:
        raise CheckpointError(f"{path!r}: its rng state is {short(rng)}; expected torch's RNG state "
                              f"(a {expected.dtype} tensor of {expected.numel()} entries)")
    return frames, updates, rng


def _counts(path: str, data: dict, missing=None) -> tuple[int, int]:
    """The frames and updates of a checkpoint, checked (CheckpointError); ``missing`` stands for an
    absent entry (None: absent is an error too)."""
    counts = []
    for key in ("frames", "updates"):
        value = data.get(key, missing)
        if not is_int(value) or value < 0:
            raise CheckpointError(f"{path!r}: its {key!r} is {short(value)}; expected a count (an integer "
                                  ">= 0)")
        counts.append(int(value))
    return counts[0], counts[1]


# -- the ways of running actors (the Ray one: train.ray_backend.run_ray) ------


def run_inline(run: Run) -> None:
    """One actor in this process, alternating with the learner: deterministic for a seed."""
    actor = Actor.from_config(run.model, run.cfg, np.random.default_rng([run.cfg.seed, 0, run.resumed_from]))
    while not run.budget_spent():
        before = actor.frames

        def spent(before=before) -> bool:  # the frames of this chunk so far count against the budget
            return run.out_of_time(actor.frames - before)

        run.buffer.put(actor.collect(run.cfg.chunk_size, run.epsilon(), run.warming(), stop=spent))
        run.frames += actor.frames - before
        run.train_on_buffer()
        run.periodic()


def run_processes(run: Run) -> None:
    """``num_actors`` actor processes feeding the learner through a bounded queue."""
    ctx = mp.get_context("spawn")
    samples, stop = ctx.Queue(maxsize=run.cfg.queue_size), ctx.Event()
    frames = ctx.Value("q", run.frames)
    seeds = [[run.cfg.seed, i + 1, run.resumed_from] for i in range(run.cfg.num_actors)]
    procs = [ctx.Process(target=actor_process, daemon=True,
                         args=(run.model, run.cfg, s, samples, frames, stop)) for s in seeds]
    for p in procs:
        p.start()
    try:
        while not run.budget_spent():
            try:
                run.buffer.put(samples.get(timeout=1.0))
            except Exception:  # queue.Empty; also re-check the actors
                if not any(p.is_alive() for p in procs):
                    raise RuntimeError("all actor processes died") from None
            run.frames = frames.value
            run.train_on_buffer()
            run.periodic()
    finally:
        stop.set()
        while any(p.is_alive() for p in procs):
            _drain(samples)
            for p in procs:
                p.join(timeout=0.2)


def _drain(q) -> None:
    try:
        while True:
            q.get_nowait()
    except Exception:
        return


def actors_of(cfg: TrainConfig):
    """The function that runs a run's actors until it is done: inline, local processes, or Ray actors.

    ``backend: ray`` without Ray installed raises ``ConfigError`` saying how to install it.
    """
    if cfg.backend == "ray":
        from .ray_backend import check_ray, run_ray

        check_ray()
        return run_ray
    return run_inline if cfg.num_actors == 0 else run_processes


def named_specs(cfg: TrainConfig) -> dict[str, list[str]]:
    """Every agent spec a config names, per field, whether the run uses it or not (an opponent of
    share 0 or an unused warm-start agent is still a mistake to say now)."""
    return {"eval_opponents": list(cfg.eval_opponents), "opponents": [s for s in cfg.opponents if s != PAST],
            "warm_start_agent": [cfg.warm_start_agent] if cfg.warm_start_agent else []}


def check_opponents(cfg: TrainConfig) -> None:
    """Build each agent the config names once (the evaluation's baselines, the actors' opponents and
    the warm-start agent, used or not), so that a bad spec fails now rather than in an actor or after
    the training."""
    from agents.registry import check_specs

    rules = Rules.preset(cfg.rules)
    for key, specs in named_specs(cfg).items():
        try:
            check_specs(specs, rules)
        except ValueError as err:
            raise ConfigError(f"{key}: {err}") from err


def check_run_dir(cfg: TrainConfig, resume: bool, overwrite: bool) -> None:
    """Refuse, before any work, a run folder that cannot be made or written, and an earlier run's
    checkpoint that this run would replace (unless ``resume`` continues it or ``overwrite`` starts
    it again). Nothing is created here."""
    run_dir = os.path.join(cfg.out_dir, cfg.run_name)
    existing = os.path.abspath(run_dir)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    problem = None
    if not os.path.isdir(existing):
        problem = f"{existing!r} is a file"
    elif os.path.realpath(existing).startswith(("/proc", "/sys")):
        problem = f"{existing!r} is on a kernel file system"
    elif not os.access(existing, os.W_OK | os.X_OK):
        problem = f"{existing!r} is not writable"
    elif os.path.isdir(run_dir):
        problem = output_problem(os.path.join(run_dir, "checkpoint.pt"))
    if problem:
        raise ConfigError(f"the run folder {run_dir!r} cannot be written: {problem}; expected out_dir to be "
                          "a writable folder (or a path where one can be made)")
    if not resume and not overwrite and os.path.exists(os.path.join(run_dir, "checkpoint.pt")):
        raise ConfigError(f"{run_dir!r} already holds the checkpoint of an earlier run with this out_dir and "
                          "run_name; expected a new --run-name, --resume to continue that run, or "
                          "--overwrite to start it again (replacing its checkpoint)")
    if overwrite:
        check_no_links(run_dir)
    check_inputs_outside(cfg, run_dir, resume)


def check_no_links(run_dir: str) -> None:
    """``--overwrite`` removes and rewrites the run's own files: refuse a run folder whose outputs
    (or its ``checkpoints`` folder) are links, which would lead it to files outside the folder."""
    names = ["checkpoint.pt", "eval.json", "checkpoints"]
    events = glob.glob(os.path.join(glob.escape(run_dir), "events.out.tfevents.*"))
    names += [os.path.basename(p) for p in events]
    links = [n for n in names if os.path.islink(os.path.join(run_dir, n))]
    if links:
        raise ConfigError(f"--overwrite: {os.path.join(run_dir, links[0])!r} is a link (to "
                          f"{os.path.realpath(os.path.join(run_dir, links[0]))!r}); --overwrite removes and "
                          "rewrites only the run folder's own files: expected no link there (remove it, or "
                          "choose a new --run-name)")


def check_inputs_outside(cfg: TrainConfig, run_dir: str, resume: bool) -> None:
    """No file the run reads (``init_weights``, a checkpoint an agent spec names) may be one the run
    writes or ``--overwrite`` removes: its checkpoints and ``eval.json`` (``--resume`` reads its own
    checkpoint.pt on purpose)."""
    from agents.registry import spec_files

    inputs = {"init_weights": [cfg.init_weights] if cfg.init_weights and not resume else []}
    inputs.update({key: spec_files(specs) for key, specs in named_specs(cfg).items()})
    written = [os.path.join(run_dir, n) for n in ("checkpoint.pt", "eval.json")] + run_outputs(run_dir)
    for key, paths in inputs.items():
        for path in paths:
            if any(os.path.exists(path) and os.path.exists(w) and os.path.samefile(path, w) for w in written):
                raise ConfigError(f"{key}: {path!r} is a file this run writes (or --overwrite removes); "
                                  "expected a file outside the run folder (copy it first), or --resume")


@contextlib.contextmanager
def stop_on_signals(run: Run):
    """While training: SIGINT (Ctrl-C) or SIGTERM asks ``run`` to stop at its next step (the loops
    see :meth:`Run.budget_spent`), so the checkpoint is saved between two updates; a second SIGINT
    raises ``KeyboardInterrupt`` at once. The previous handlers come back afterwards. Outside the
    main thread (where Python cannot set handlers) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    before = {sig: signal.getsignal(sig) for sig in signals}

    def handle(signum, frame):
        if run.stop_signal and signum == signal.SIGINT:
            raise KeyboardInterrupt
        run.stop_signal = signal.Signals(signum).name
        print(f"\n{run.stop_signal}: stopping after this step and saving the checkpoint "
              "(Ctrl-C again quits at once, without it)", flush=True)

    for sig in signals:
        signal.signal(sig, handle)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def run_outputs(run_dir: str) -> list[str]:
    """The files an earlier run left in ``run_dir`` (its checkpoint, kept checkpoints, TensorBoard
    event files, ``eval.json``); anything else in the folder is not the run's."""
    kept = os.path.join(run_dir, "checkpoints")
    names = [os.path.join(run_dir, n) for n in ("checkpoint.pt", "eval.json")]
    names += glob.glob(os.path.join(glob.escape(run_dir), "events.out.tfevents.*"))
    names += [p for p in glob.glob(os.path.join(glob.escape(kept), "*.pt"))
              if re.fullmatch(r"\d{12}\.pt", os.path.basename(p))]
    return sorted(p for p in names if os.path.isfile(p))


def train(cfg: TrainConfig, resume: bool = False, overwrite: bool = False) -> dict:
    """Run training to the end of its budget; returns the final evaluation.

    An earlier run's checkpoint in ``out_dir/run_name`` is continued with ``resume`` or replaced
    with ``overwrite`` (which removes all of that run's outputs, :func:`run_outputs`, once this
    run is set up); otherwise the run is refused before it starts (:func:`check_run_dir`).
    A run stopped by a signal (:func:`stop_on_signals`) saves its checkpoint and returns ``{}``.
    """
    check_run_dir(cfg, resume, overwrite)
    check_opponents(cfg)
    actors = actors_of(cfg)
    earlier = run_outputs(os.path.join(cfg.out_dir, cfg.run_name)) if overwrite and not resume else []
    torch.set_num_threads(cfg.threads)
    run = Run(cfg, resume)  # a bad init_weights file fails here, with the earlier run's files untouched
    remove_inside(run.dir, earlier)  # started again: the earlier run's curves and checkpoints would mix
    run.writer.add_text("config", "```\n" + json.dumps(cfg.to_dict(), indent=2) + "\n```", 0)
    with stop_on_signals(run):  # to the saved checkpoint: a signal just after the last step still gets one
        actors(run)
        run.maybe_log(force=True)
        run.checkpoint()
    if run.stop_signal:
        print(f"stopped by {run.stop_signal} at {run.frames:,} frames: checkpoint saved, final evaluation "
              "skipped (--resume continues the run)", flush=True)
    report = run.evaluate() if cfg.eval_deals and not run.stop_signal else {}
    final = {f"hparam/{k}/{f}": figs[f] for k, figs in report.items() for f in ("wp", "adp")}
    run.writer.add_hparams(_hparams(cfg), {"hparam/frames": float(run.frames), **final}, run_name=".")
    run.writer.close()
    print(f"trained {run.frames:,} frames ({run.updates:,} updates, "
          f"{run.trained_share():.1%} of the samples) in {run.elapsed_minutes():.1f} min", flush=True)
    return report


def _hparams(cfg: TrainConfig) -> dict:
    flat = {k: v for k, v in cfg.to_dict().items() if isinstance(v, (int, float, str, bool))}
    flat.update({f"model.{k}": v for k, v in cfg.model.to_dict().items()})
    return flat


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``--config``, ``--resume`` and one option per config field (with its docs)."""
    parser = argparse.ArgumentParser(prog="python -m train.run", parents=[override_parser()],
                                     description=__doc__.split("How it works")[0].strip(),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--resume", action="store_true",
                        help="continue the run out_dir/run_name from its checkpoint.pt (weights, optimizer, "
                             "frame count); the options must give the same model and rules")
    parser.add_argument("--overwrite", action="store_true",
                        help="start the run out_dir/run_name again, replacing the outputs of an earlier "
                             "run with that name: its checkpoints, event files and eval.json (without it, "
                             "or --resume, such a run is refused)")
    return parser


def parse_command_line(argv=None, parser: argparse.ArgumentParser | None = None,
                       ) -> tuple[TrainConfig, bool, bool]:
    """The run's checked config (``--config FILE`` with ``--any-field VALUE`` overrides), ``--resume``
    and ``--overwrite``; a bad value is a :class:`~train.config.ConfigError`, an unknown option
    argparse's exit."""
    parser = parser or build_parser()
    args = vars(parser.parse_args(sys.argv[1:] if argv is None else argv))
    resume, overwrite, path = args.pop("resume"), args.pop("overwrite"), args.pop("config")
    if resume and overwrite:
        raise ConfigError("--resume and --overwrite are exclusive: continue the run, or start it again")
    return load_config(path, {k: v for k, v in args.items() if v is not None}), resume, overwrite


def main(argv=None) -> None:
    parser = build_parser()
    try:
        cfg, resume, overwrite = parse_command_line(argv, parser)
        report = train(cfg, resume=resume, overwrite=overwrite)
    except (ConfigError, CheckpointError) as err:  # a bad option or file: one line, no traceback
        parser.exit(2, f"{parser.prog}: error: {one_line(err)}\n")
    except KeyboardInterrupt:  # a second Ctrl-C while training, or one outside it (setup, final evaluation)
        parser.exit(130, f"{parser.prog}: interrupted by Ctrl-C (--resume continues the run from its "
                         "last saved checkpoint, if it saved one)\n")
    if report:
        from doudizhu_arena.evaluation import format_table

        print(format_table(report))
    run_dir = os.path.join(cfg.out_dir, cfg.run_name)
    print(f"checkpoint: {os.path.join(run_dir, 'checkpoint.pt')}\n"
          f"TensorBoard logs: {run_dir} (tensorboard --logdir {cfg.out_dir})")


if __name__ == "__main__":
    main()
