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

1. One :class:`~agents.dmc.ScoreModel` (five networks) lives in
   shared memory.
2. ``num_actors`` actor processes (:func:`train.actor.actor_process`) each
   step ``games_per_actor`` games on the batched engine, choosing for all of
   them with one forward pass per step (epsilon-greedy), and send chunks of
   (observation, action, network, Monte-Carlo target) samples through a
   bounded queue. With ``num_actors: 0`` one actor runs in this process,
   alternating with the learner, and the whole run is deterministic.
   With ``backend: ray`` the actors are Ray actors on a Ray cluster instead
   (:mod:`train.ray_backend`), and everything else is the same.
3. The learner (this process; :class:`train.learner.Learner`, the one
   ``learner`` names) takes batches from a bounded buffer, trains the shared
   weights in place and says what to log and checkpoint: DMC
   (:mod:`train.dmc`) regresses Q(s, a) on the targets; PPO
   (:mod:`train.ppo`) takes whole hands and trains the networks as a policy
   beside a critic that sees the hidden hands. The rest of the run is the
   same for every learner.
4. Every ``checkpoint_minutes`` a checkpoint; every ``eval_minutes`` an
   evaluation through the arena against the baselines; at the end both,
   and the evaluation table is printed.

Stopping early: Ctrl-C (SIGINT) or SIGTERM ends the run at the next step,
saves its checkpoint (``--resume`` continues it) and skips the final
evaluation; a second Ctrl-C quits at once, without a checkpoint. A loss
that is no longer a number (the weights diverged) ends the run in one line,
keeping the last checkpoint saved before it. The run's folder, its checks
and ``--overwrite``: :mod:`train.run_folder`.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import math
import os
import signal
import sys
import threading
import time

import numpy as np
import torch
import torch.multiprocessing as mp

from agents.checkpoint import (
    CHECKPOINT_NAME,
    CheckpointError,
    checkpoint_path,
    counts_of,
    learner_of,
    load_model,
    minutes_of,
    read_checkpoint,
    save_checkpoint,
    torch_rng_of,
)
from agents.dmc import ModelOutputError
from agents.policy import policy_agent
from doudizhu_env.files import atomic_write
from doudizhu_env.rules import Rules

from .actor import PAST, Actor, actor_process, epsilon_at
from .buffer import SampleBuffer
from .config import ConfigError, TrainConfig, load_config, one_line, override_parser, resolve_device
from .learner import learner_class
from .run_folder import EVAL_NAME, KEPT_FOLDER, EarlierRun, check_inputs_outside, check_run_dir, run_outputs


class Run:
    """The state of one training run: model, learner, counters, clocks, writer."""

    def __init__(self, cfg: TrainConfig, resume: bool):
        self.cfg = cfg
        self.dir = os.path.join(cfg.out_dir, cfg.run_name)
        self.ckpt_path = checkpoint_path(self.dir)
        self.rules = Rules.preset(cfg.rules)
        torch.manual_seed(cfg.seed)
        kind = learner_class(cfg.learner)
        self.model = kind.new_model(self.rules, cfg.model)
        self.frames, self.updates, self.resumed_from, self.resumed_updates = 0, 0, 0, 0
        self.minutes_before = 0.0  # training minutes of the run this one resumes (0 when it starts fresh)
        self.stop_signal: str | None = None  # the signal's name once the user asked the run to stop
        device = resolve_device(cfg.device)
        self.train_model = self.model if device == "cpu" else copy.deepcopy(self.model).to(device)
        self.learner = kind(self.train_model, cfg, device)
        self.trained = 0  # samples the learner took since this run started
        self.after_save = lambda: None  # called after each checkpoint is written (train: --overwrite)
        self.saved_frames: int | None = None  # the frames of the run's checkpoint on disk, once it has one
        if resume:
            self._resume()
            self.saved_frames = self.frames
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
                                  f"{CHECKPOINT_NAME} of an earlier run with this out_dir and run_name")
        data = read_checkpoint(self.ckpt_path)
        if learner_of(data) != self.cfg.learner:
            raise CheckpointError(f"--resume: {self.ckpt_path!r} was written by the {learner_of(data)} "
                                  f"learner; expected learner: {learner_of(data)} to continue it")
        model = load_model(self.ckpt_path, self.rules, self.cfg.model)
        frames, updates = counts_of(data, self.ckpt_path)
        rng = torch_rng_of(data, self.ckpt_path)
        self.learner.resume(data, self.ckpt_path)
        self.model.load_state_dict(model.state_dict())
        self.train_model.load_state_dict(model.state_dict())
        self.frames = self.resumed_from = frames
        self.updates = self.resumed_updates = self.learner.updates = updates
        self.minutes_before = minutes_of(data)
        torch.set_rng_state(rng)

    def _init_from(self, spec: str):
        """Start from the weights of ``spec`` (a file or ``pretrained``), counting on from its frames."""
        from agents.registry import PRETRAINED

        path = PRETRAINED if spec == "pretrained" else spec
        try:
            model = load_model(path, self.rules, self.cfg.model)
            frames, updates = counts_of(read_checkpoint(path), path, missing=0)
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
        while (batch := self.learner.take(self.buffer, self.cfg.batch_size)) is not None:
            self.trained += len(batch)
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
        self.stats.clear()
        self.last.update(log=now, frames=self.frames)
        print(self.progress_line(fps, means, share), flush=True)

    def trained_share(self) -> float:
        """Share of the samples made since the start that the learner trained on."""
        made = self.frames - self.resumed_from
        return min(1.0, self.trained / made) if made else 0.0

    def progress_line(self, fps: float, means: dict[str, float], share: float) -> str:
        cfg, minutes = self.cfg, self.elapsed_minutes()
        parts = [f"[{minutes:5.1f} min]", f"frames {self.frames:,}"]
        if cfg.total_frames:
            parts[-1] += f"/{cfg.total_frames:,}"
        explore = self.learner.exploration(means, self.epsilon(), self.warming())
        loss = means.get("loss/all", float("nan"))
        parts += [f"{fps:,.0f} frames/s", f"updates {self.updates:,}", f"loss {loss:.4f}", explore,
                  f"trained on {share:.1%} of samples"]
        if cfg.max_minutes:
            parts.append(f"{max(cfg.max_minutes - minutes, 0.0):.1f} min left")
        return "  ".join(parts)

    def checkpoint(self) -> None:
        """The run's checkpoint (the weights, the learner's optimizer and own state, counters, RNG
        states, minutes); with ``keep_checkpoints`` a weights-only copy in ``checkpoints/``."""
        state = self.learner.checkpoint_state()
        rng = {"torch": torch.get_rng_state(), **state.pop("rng", {})}
        info = {"frames": int(self.frames), "updates": int(self.updates), "learner": self.learner.name,
                "train_config": self.cfg.to_dict(), "minutes": self.trained_minutes()}
        save_checkpoint(self.ckpt_path, self.train_model, self.learner.optimizer, rng=rng, **info, **state)
        if self.cfg.keep_checkpoints:
            kept = os.path.join(self.dir, KEPT_FOLDER, f"{int(self.frames):012d}.pt")
            save_checkpoint(kept, self.train_model, **info)
        self.last["ckpt"] = time.monotonic()
        self.saved_frames = int(self.frames)
        self.after_save()

    def evaluate(self) -> dict:
        """WP / ADP against each baseline through the arena; logged and written to eval.json."""
        from doudizhu_arena.arena import report_json
        from doudizhu_arena.evaluation import evaluate_against

        agent = policy_agent(self.model)
        report = evaluate_against(agent, self.rules, self.cfg.eval_opponents, self.cfg.eval_deals,
                                  seed=self.cfg.seed)
        for name, figures in report.items():
            for key, value in figures.items():
                if key != "table":
                    self.writer.add_scalar(f"eval/{name}/{key}", value, self.frames)
        # a role of one game has no interval: its flat figures carry no count, so undefined is null here
        results = {name: {key: None if isinstance(value, float) and not math.isfinite(value) else value
                          for key, value in figures.items()} for name, figures in report.items()}
        atomic_write(os.path.join(self.dir, EVAL_NAME),
                     report_json({"frames": self.frames, "results": results}, indent=2))
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


def check_inputs(cfg: TrainConfig, resume: bool) -> None:
    """No file the run reads (``init_weights``, a checkpoint an agent spec names) may be one it writes
    (``--resume`` reads its own checkpoint on purpose)."""
    from agents.registry import spec_files

    inputs = {"init_weights": [cfg.init_weights] if cfg.init_weights and not resume else []}
    inputs.update({key: spec_files(specs) for key, specs in named_specs(cfg).items()})
    check_inputs_outside(os.path.join(cfg.out_dir, cfg.run_name), inputs)


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


def train(cfg: TrainConfig, resume: bool = False, overwrite: bool = False) -> dict:
    """Run training to the end of its budget; returns the final evaluation.

    An earlier run's checkpoint in ``out_dir/run_name`` is continued with ``resume`` or replaced
    with ``overwrite`` (its outputs are moved aside, and deleted once this run saves its first
    checkpoint: :class:`train.run_folder.EarlierRun`); otherwise the run is refused before it
    starts (:func:`train.run_folder.check_run_dir`). A run stopped by a signal
    (:func:`stop_on_signals`) saves its checkpoint and returns ``{}``.
    """
    run_dir = os.path.join(cfg.out_dir, cfg.run_name)
    check_run_dir(run_dir, resume, overwrite)
    check_inputs(cfg, resume)
    check_opponents(cfg)
    actors = actors_of(cfg)
    torch.set_num_threads(learner_class(cfg.learner).torch_threads(cfg))
    cores = os.cpu_count() or 1
    if cfg.threads > cores:  # allowed (a config shared between machines), but said
        print(f"threads: {cfg.threads} is more than this machine's {cores} cores: the learner's threads will "
              "share them (and the actors')", flush=True)
    earlier = EarlierRun(run_dir, run_outputs(run_dir) if overwrite and not resume else [])
    earlier.move_aside()  # started again: the earlier run's curves and checkpoints would mix
    run: Run | None = None
    try:
        run = Run(cfg, resume)
        run.after_save = earlier.discard
        run.writer.add_text("config", "```\n" + json.dumps(cfg.to_dict(), indent=2) + "\n```", 0)
        with stop_on_signals(run):  # to the saved checkpoint: a signal after the last step still gets one
            actors(run)
            run.maybe_log(force=True)
            run.checkpoint()
    except BaseException as err:
        err.kept = what_was_kept(run_dir, earlier.restore(), run)  # type: ignore[attr-defined]
        raise
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


def what_was_kept(run_dir: str, restored: list[str], run: Run | None) -> str:
    """What a run that failed left on disk, in a few words (the command line's error says it)."""
    if restored:
        return f"the earlier run's outputs are back in {run_dir!r} (this run saved no checkpoint)"
    if run is not None and run.saved_frames is not None:
        return f"the last good checkpoint is kept: {run.ckpt_path} ({run.saved_frames:,} frames)"
    return "no checkpoint of this run was saved" if run is not None else ""


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
                        help=f"continue the run out_dir/run_name from its {CHECKPOINT_NAME} (weights, "
                             "optimizer, frame count); the options must give the same model and rules")
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
    except (ConfigError, CheckpointError, ModelOutputError) as err:  # a bad option or file, or weights that
        kept = getattr(err, "kept", "")  # diverged: one line, no traceback, and what is on disk
        parser.exit(2, f"{parser.prog}: error: {one_line(err)}" + (f"; {kept}" if kept else "") + "\n")
    except KeyboardInterrupt as err:  # a second Ctrl-C while training, or one outside it (setup, evaluation)
        kept = getattr(err, "kept", "the run had not started")
        parser.exit(130, f"{parser.prog}: interrupted by Ctrl-C: {kept} (--resume continues a run from its "
                         "last checkpoint)\n")
    if report:
        from doudizhu_arena.evaluation import format_table

        print(format_table(report))
    run_dir = os.path.join(cfg.out_dir, cfg.run_name)
    print(f"checkpoint: {checkpoint_path(run_dir)}\n"
          f"TensorBoard logs: {run_dir} (tensorboard --logdir {cfg.out_dir})")


if __name__ == "__main__":
    main()
