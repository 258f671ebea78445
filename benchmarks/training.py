"""Training throughput: our DMC loop (``train.run``) vs. DouZero's own DMC loop, in frames/s on CPU.

A *frame* is one decision made by an actor (a bid, a doubling choice or a card-play
move, passes included) -- the unit both ``train.run`` and DouZero count.

* **ours**: :func:`train.run.train` with ``configs/default.yaml`` (the real network
  sizes, 256 games per actor), evaluation off, learner on the CPU, stopped by
  ``max_minutes``; frames are read from the final checkpoint, and the steady-state
  rate from the TensorBoard scalars (``perf/updates`` carries the frame count as its
  step and the wall time of each log).
* **douzero**: ``douzero.dmc.train(flags)`` (package ``douzero==1.1.0``, its default
  hyper-parameters) with CPU actors and learner
  (``--actor_device_cpu --training_device cpu --num_actors N --disable_checkpoint``),
  run in a subprocess of this interpreter or else of the peers' one (``.venv-peers``, see
  ``benchmarks/requirements-peers.txt``) and killed (its whole process group) after
  the same wall time, with one OpenMP thread per process like ours (``--douzero-threads``).
  DouZero logs the frames its *learner* has consumed, in steps
  of ``unroll_length x batch_size`` = 3,200 per position, which is too coarse for a
  one-minute run; so a small driver also counts the decisions its actors make
  (``douzero.dmc.env_utils.Environment.step``, one call per decision), written every
  200 decisions by each actor process. Both figures are reported; the ratio uses the
  actor decisions, the same unit as ours.
  DouZero's training code imports GitPython (only to record the commit); when that
  is missing a stub module stands in for it.

* **ours-ray**: the same run with ``backend: ray`` (``--backend local ray`` runs both,
  interleaved in every repeat, each first in turn, on the same config and number of actors): Ray actors on a
  local Ray instance that the run starts (its start-up is in *overall*, not in *steady*).
  The *vs local* column is its steady rate over the local backend's; 1 minus it is Ray's
  overhead.

Figures: *overall* = frames / wall time of the whole run (start-up included);
*steady* = frames/s between the first and the last progress record after start-up.
Medians over ``--repeats`` runs.

``--rates`` measures instead the two rates a cluster's throughput is made of, each alone in
this process on one thread: the frames/s of one actor and the samples/s of the learner (on
``--device``), and prints a projection from them of frames/s on N machines (see
:func:`projection`).

Run (from the repository root, in the project's venv)::

    python -m benchmarks.training --json training.json                # ~4 minutes
    python -m benchmarks.training --seconds 60 --repeats 3 --actors 1 2
    python -m benchmarks.training --backend local ray --actors 2 --repeats 3 --skip-douzero
    python -m benchmarks.training --rates --cores 16 --machines 1 2 4 8 16
"""

from __future__ import annotations

import argparse
import csv
import glob
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

from benchmarks import write_json
from doudizhu_arena.options import check_count, check_outputs_and_agents, check_positive, command_errors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS_PYTHON = os.path.join(ROOT, ".venv-peers", "bin", "python")
DEFAULT_CONFIG = os.path.join(ROOT, "configs", "default.yaml")
COUNT_EVERY = 200
DOUZERO_T, DOUZERO_B = 100, 32  # its default --unroll_length and --batch_size

_GIT_STUB = '''\
"""Stand-in for GitPython, which douzero.dmc.file_writer imports only to record the commit."""


class InvalidGitRepositoryError(Exception):
    pass


class Repo:
    def __init__(self, *args, **kwargs):
        raise InvalidGitRepositoryError("git metadata not available (stub)")
'''

_DRIVER = textwrap.dedent(f'''\
    """Runs douzero.dmc.train(flags), counting actor decisions (also in the spawned actors)."""
    import os
    import sys
    import time

    from douzero.dmc import env_utils

    _count_dir = os.environ["DZ_COUNT_DIR"]
    _step = env_utils.Environment.step


    def _counting_step(self, action):
        out = _step(self, action)
        self._decisions = getattr(self, "_decisions", 0) + 1
        if self._decisions % {COUNT_EVERY} == 0:
            with open(os.path.join(_count_dir, f"count-{{os.getpid()}}.txt"), "a") as f:
                f.write(f"{{time.time()}} {{self._decisions}}\\n")
        return out


    env_utils.Environment.step = _counting_step

    if __name__ == "__main__":
        from douzero.dmc import parser, train

        with open(os.path.join(_count_dir, "start.txt"), "w") as f:
            f.write(str(time.time()))
        train(parser.parse_args(sys.argv[1:]))
''')


# -- ours -------------------------------------------------------------------------------


def run_ours(num_actors: int, seconds: float, config: str = DEFAULT_CONFIG, threads: int = 1,
             backend: str = "local") -> dict:
    """One run of :func:`train.run.train` for ``seconds`` of wall time, with the ``backend``'s actors."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from agents.checkpoint import checkpoint_path, read_checkpoint
    from train.config import load_config
    from train.run import train

    with tempfile.TemporaryDirectory(prefix="bench-dmc-") as out:
        cfg = load_config(config, {
            "out_dir": out, "run_name": "bench", "num_actors": num_actors, "max_minutes": seconds / 60.0,
            "total_frames": 0, "eval_deals": 0, "eval_minutes": 0, "checkpoint_minutes": 1e6,
            "log_seconds": 5.0, "device": "cpu", "threads": threads, "backend": backend,
        })
        start = time.monotonic()
        train(cfg)
        wall = time.monotonic() - start
        run_dir = os.path.join(out, cfg.run_name)
        data = read_checkpoint(checkpoint_path(run_dir))
        records = []
        for path in glob.glob(os.path.join(run_dir, "events.*")):
            acc = EventAccumulator(path, size_guidance={"scalars": 0})
            acc.Reload()
            if "perf/updates" in acc.Tags()["scalars"]:
                records += [(e.wall_time, e.step) for e in acc.Scalars("perf/updates")]
    return {
        "frames": int(data["frames"]), "updates": int(data["updates"]), "wall_s": wall,
        "overall_fps": data["frames"] / wall, "steady_fps": _steady(sorted(records)),
        "samples_per_s": data["updates"] * cfg.batch_size / wall,
        "trained_share": min(1.0, data["updates"] * cfg.batch_size / max(data["frames"], 1)),
    }


def _steady(records: list[tuple[float, int]]) -> float | None:
    """Frames/s between the first record with frames > 0 and the last one."""
    records = [r for r in records if r[1] > 0]
    if len(records) < 2 or records[-1][0] <= records[0][0]:
        return None
    return (records[-1][1] - records[0][1]) / (records[-1][0] - records[0][0])


# -- rates and the projection ------------------------------------------------------------


def actor_rate(seconds: float, config: str = DEFAULT_CONFIG, games_per_actor: int | None = None) -> dict:
    """Frames/s of one :class:`train.actor.Actor` alone in this process (one thread), untrained weights;
    ``games_per_actor`` games (default: the config's)."""
    import numpy as np
    import torch

    from agents.dmc import ScoreModel
    from doudizhu_env.rules import Rules
    from train.actor import Actor
    from train.config import load_config

    cfg = load_config(config, {} if games_per_actor is None else {"games_per_actor": games_per_actor})
    torch.set_num_threads(1)
    model = ScoreModel(Rules.preset(cfg.rules), cfg.model)
    actor = Actor.from_config(model, cfg, np.random.default_rng(0))
    actor.collect(cfg.chunk_size, cfg.epsilon)  # warm-up
    start, frames = time.perf_counter(), actor.frames
    while time.perf_counter() - start < seconds:
        actor.collect(cfg.chunk_size, cfg.epsilon)
    fps = (actor.frames - frames) / (time.perf_counter() - start)
    return {"actor_fps": fps, "actor_us_per_frame": 1e6 / fps, "games_per_actor": cfg.games_per_actor}


def learner_rate(seconds: float, config: str = DEFAULT_CONFIG, device: str = "cpu",
                 batch_size: int | None = None, threads: int = 1) -> dict:
    """Samples/s of the config's learner (DMC or PPO) alone (its config's ``threads``; batches of
    ``batch_size``, default the config's, from one actor's samples; PPO's of whole hands, as a run
    takes them), and the size of the weights a broadcast puts in Ray's object store."""
    import numpy as np
    import torch

    from doudizhu_env.rules import Rules
    from train.actor import Actor
    from train.buffer import SampleBuffer
    from train.config import load_config, resolve_device
    from train.learner import learner_class

    cfg = load_config(config, {"threads": threads} | ({"batch_size": batch_size} if batch_size else {}))
    kind = learner_class(cfg.learner)
    torch.set_num_threads(kind.torch_threads(cfg))
    device = resolve_device(device)
    model = kind.new_model(Rules.preset(cfg.rules), cfg.model)
    actor = Actor.from_config(model, cfg, np.random.default_rng(0))
    buffer = SampleBuffer(8 * cfg.batch_size)
    buffer.put(actor.collect(5 * cfg.batch_size, cfg.epsilon))
    learner = kind(model.to(device), cfg, device)
    taken = (learner.take(buffer, cfg.batch_size) for _ in range(4))
    batches = [batch for batch in taken if batch is not None]
    learner.update(batches[0])  # warm-up
    start, updates, samples = time.perf_counter(), 0, 0
    while time.perf_counter() - start < seconds:
        batch = batches[updates % len(batches)]
        learner.update(batch)
        updates, samples = updates + 1, samples + len(batch)
    elapsed = time.perf_counter() - start
    weight_bytes = sum(v.numel() * v.element_size() for v in model.state_dict().values())
    return {"learner_sps": samples / elapsed, "learner_us_per_frame": 1e6 * elapsed / samples,
            "updates_per_s": updates / elapsed, "weight_mb": weight_bytes / 2**20,
            "device": device, "batch_size": cfg.batch_size, "learner": cfg.learner}


def matmul_scaling(seconds: float, threads: int) -> float:
    """The machine's own ceiling for a learner's ``threads``: how many times one thread's work
    ``threads`` Python threads do in the same time, each running an independent chain of the
    learner's matrix products (300 rows through four 256-wide ReLU layers, one torch thread each),
    against the same chains run one after the other on one thread. No learner can beat it here:
    shared caches, memory bandwidth and the host's scheduling all count in it."""
    import threading

    import torch

    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    chains = [(torch.randn(300, 256, generator=generator),
               [torch.randn(256, 256, generator=generator) / 16 for _ in range(4)]) for _ in range(threads)]

    def chain(x: torch.Tensor, layers: list, count: int) -> None:
        for _ in range(count):
            h = x
            for w in layers:
                h = torch.relu(h @ w)

    start, count = time.perf_counter(), 0  # calibrate: products per chain in seconds / (2 threads)
    while time.perf_counter() - start < seconds / (2 * threads):
        chain(*chains[0], 10)
        count += 10
    start = time.perf_counter()
    for x, layers in chains:
        chain(x, layers, count)
    one = time.perf_counter() - start
    workers = [threading.Thread(target=chain, args=(x, layers, count)) for x, layers in chains]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return one / (time.perf_counter() - start)


def projection(actor_fps: float, learner_sps: float, cores: int, machines: list[int]) -> list[dict]:
    """Frames/s on N machines of ``cores`` cores each, from the measured rates, on paper.

    One actor per core, except the core of the learner on the first machine; actors are
    independent, so their capacity is ``actors x actor_fps``. The learner trains on every
    sample once and the actors wait for it (the bounded chunks in flight), so the run makes
    ``min(capacity, learner_sps)`` frames/s: past ``learner_sps / (cores x actor_fps)``
    machines the learner is saturated and more machines add nothing.
    """
    rows = []
    for n in machines:
        actors = n * cores - 1
        capacity = actors * actor_fps
        rows.append({"machines": n, "actors": actors, "actor_capacity_fps": capacity,
                     "frames_per_s": min(capacity, learner_sps),
                     "bound_by": "learner" if capacity > learner_sps else "actors"})
    return rows


def print_actor_sizes(rates: dict, sizes: list[int]) -> None:
    """One actor's frames/s for each of ``sizes`` games per actor (``rates``' ``actor_fps_games_N``)."""
    print(f"{'games per actor':>15} {'frames/s':>9} {'us per frame':>13}")
    for games in sizes:
        fps = rates[f"actor_fps_games_{games}"]
        print(f"{games:>15,} {fps:>9,.0f} {1e6 / fps:>13.0f}")


def print_rates(rates: dict, cores: int, machines: list[int]) -> list[dict]:
    """The measured rates and the projection table."""
    actor_fps, learner_sps = rates["actor_fps"], rates["learner_sps"]
    rows = projection(actor_fps, learner_sps, cores, machines)
    print(f"one actor: {actor_fps:,.0f} frames/s; the learner ({rates['device']}, batch "
          f"{rates['batch_size']}): {learner_sps:,.0f} samples/s = {rates['updates_per_s']:.1f} updates/s; "
          f"weights {rates['weight_mb']:.1f} MB per broadcast")
    print(f"CPU time per frame ({rates['learner']}): actor {1e6 / actor_fps:.0f} us, learner "
          f"{1e6 / learner_sps:.0f} us, total {1e6 / actor_fps + 1e6 / learner_sps:.0f} us")
    print(f"the learner saturates at {learner_sps / actor_fps:.1f} actors "
          f"= {learner_sps / (cores * actor_fps):.2f} machines of {cores} cores")
    print(f"{'machines':>8} {'actors':>7} {'actor capacity f/s':>19} {'frames/s':>10} {'bound by':>9}")
    for row in rows:
        print(f"{row['machines']:>8} {row['actors']:>7} {row['actor_capacity_fps']:>19,.0f} "
              f"{row['frames_per_s']:>10,.0f} {row['bound_by']:>9}")
    return rows


def machine_sizes(actor_fps: float, learner_sps: dict[int, float], core_counts: list[int]) -> list[dict]:
    """One machine of each size in ``core_counts``, on paper: the learner takes ``t`` cores (the
    measured thread counts of ``learner_sps``), one actor process runs on each other core, and the run
    makes ``min(actors x actor_fps, learner_sps[t])`` frames/s; the ``t`` that makes the most is the
    setting to pick (the fewer threads where two make as many)."""
    rows = []
    for cores in core_counts:
        options = []
        for threads, sps in sorted(learner_sps.items()):
            actors = cores - threads
            if actors >= 1:
                capacity = actors * actor_fps
                options.append({"cores": cores, "threads": threads, "actors": actors,
                                "frames_per_s": min(capacity, sps),
                                "bound_by": "learner" if capacity > sps else "actors"})
        if options:
            rows.append(max(options, key=lambda o: (round(o["frames_per_s"]), -o["threads"])))
    return rows


def print_machine_sizes(actor_fps: float, learner_sps: dict[int, float],
                        core_counts: list[int]) -> list[dict]:
    """The projection for one machine of each size, and the learner's thread scaling."""
    rows = machine_sizes(actor_fps, learner_sps, core_counts)
    base = learner_sps[min(learner_sps)]
    print("the learner by threads: " + ", ".join(f"{t}: {sps:,.0f} samples/s ({sps / base:.2f}x)"
                                                 for t, sps in sorted(learner_sps.items())))
    print(f"{'cores':>6} {'learner threads':>16} {'actors':>7} {'frames/s':>10} {'bound by':>9}")
    for row in rows:
        print(f"{row['cores']:>6} {row['threads']:>16} {row['actors']:>7} {row['frames_per_s']:>10,.0f} "
              f"{row['bound_by']:>9}")
    return rows


# -- douzero ------------------------------------------------------------------------


def douzero_python() -> str | None:
    """An interpreter that can import douzero's training code (this one, or the peers' venv)."""
    for python in (sys.executable, PEERS_PYTHON):
        if os.path.exists(python) and subprocess.run(
            [python, "-c", "import importlib.util, torch; assert importlib.util.find_spec('douzero.dmc')"],
            capture_output=True,
        ).returncode == 0:
            return python
    return None


def run_douzero(num_actors: int, seconds: float, python: str, threads: int = 1) -> dict:
    """One run of DouZero's DMC training loop for ``seconds``, then its process group is killed.

    ``threads``: OpenMP/MKL threads per process (``OMP_NUM_THREADS``), 1 like ours (``threads: 1``);
    0 leaves torch's default (all cores in every process: on 2 cores its actors then crawl at
    ~20 decisions/s, as the idle learner threads and the actors oversubscribe the CPU).
    """
    with tempfile.TemporaryDirectory(prefix="bench-douzero-") as work:
        counts = os.path.join(work, "counts")
        stub = os.path.join(work, "stub")
        os.makedirs(counts)
        os.makedirs(stub)
        with open(os.path.join(stub, "git.py"), "w") as f:
            f.write(_GIT_STUB)
        driver = os.path.join(work, "douzero_driver.py")
        with open(driver, "w") as f:
            f.write(_DRIVER)
        env = dict(os.environ, DZ_COUNT_DIR=counts, PYTHONPATH=stub, PYTHONUNBUFFERED="1")
        if threads:
            env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
        args = [python, driver, "--actor_device_cpu", "--training_device", "cpu",
                "--num_actors", str(num_actors), "--disable_checkpoint",
                "--savedir", os.path.join(work, "save"), "--xpid", "bench"]
        with open(os.path.join(work, "log.txt"), "w") as log:
            start = time.time()
            proc = subprocess.Popen(args, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            try:
                time.sleep(seconds)
                if proc.poll() is not None:
                    raise RuntimeError(f"douzero exited early (code {proc.returncode}):\n"
                                       + open(os.path.join(work, "log.txt")).read()[-3000:])
            finally:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)  # the learner and its spawned actors
                except ProcessLookupError:
                    pass
                proc.wait()
            wall = time.time() - start

        decisions, rate = 0, 0.0
        for path in glob.glob(os.path.join(counts, "count-*.txt")):
            lines = [tuple(map(float, line.split())) for line in open(path) if line.strip()]
            decisions += int(lines[-1][1])
            if len(lines) >= 2:
                rate += (lines[-1][1] - lines[0][1]) / (lines[-1][0] - lines[0][0])
        learner_frames = 0
        logs = os.path.join(work, "save", "bench")
        if os.path.exists(os.path.join(logs, "logs.csv")):  # a row per learner step; columns in fields.csv
            with open(os.path.join(logs, "fields.csv")) as f:
                fields = next(csv.reader(f))
            with open(os.path.join(logs, "logs.csv")) as f:
                lines = (line for line in f if not line.startswith("#"))
                rows = list(csv.DictReader(lines, fieldnames=fields))
            if rows:  # each row is logged before its batch is counted: add that last batch
                learner_frames = int(rows[-1]["frames"]) + DOUZERO_T * DOUZERO_B
    return {
        "frames": decisions, "learner_frames": learner_frames, "wall_s": wall,
        "overall_fps": decisions / wall, "steady_fps": rate or None,
        "learner_fps": learner_frames / wall,
    }


# -- driver --------------------------------------------------------------------------


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _fmt(value) -> str:
    return "-" if value is None else f"{value:,.0f}"


def build_parser() -> argparse.ArgumentParser:
    """The command-line options."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.training", description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="wall time of each run")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each row (medians are reported)")
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2], help="actor process counts")
    parser.add_argument("--config", default=DEFAULT_CONFIG, help="our training config")
    parser.add_argument("--backend", nargs="+", choices=("local", "ray"), default=["local"],
                        help="our backends, side by side in every repeat (ray: pip install -e '.[ray]')")
    parser.add_argument("--skip-douzero", action="store_true")
    parser.add_argument("--douzero-threads", type=int, default=1,
                        help="OMP_NUM_THREADS of DouZero's processes (0: torch's default)")
    parser.add_argument("--rates", action="store_true",
                        help="measure one actor's and the learner's rates (--seconds each) and project "
                             "frames/s on --machines machines of --cores cores, instead of training runs")
    parser.add_argument("--device", default="cpu", help="the learner's device for --rates (cpu, cuda)")
    parser.add_argument("--batch-size", type=int, help="the learner's batch size for --rates (default: "
                        "the config's)")
    parser.add_argument("--games-per-actor", type=int, nargs="+",
                        help="the actor's games (games_per_actor) measured by --rates (each an actor rate; "
                             "the projection uses the first; default: the config's)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1],
                        help="the learner's threads (the config's threads) measured by --rates (each a "
                             "learner rate; the projection picks the best for each machine size)")
    parser.add_argument("--core-counts", type=int, nargs="+", default=[2, 4, 8, 16, 32, 64],
                        help="machine sizes (cores) of the --rates projection for one machine")
    parser.add_argument("--cores", type=int, default=16, help="cores per machine in the --rates projection")
    parser.add_argument("--machines", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32],
                        help="machine counts of the --rates projection")
    parser.add_argument("--json", help="write the results to this file")
    return parser


def check_args(args) -> None:
    """Every option, the config and the output before the first run (one-line ``ValueError``s)."""
    from train.config import load_config

    check_positive(args.seconds, "--seconds")
    check_count(args.repeats, "--repeats")
    for actors in args.actors:
        check_count(actors, "--actors")
    check_count(args.douzero_threads, "--douzero-threads", 0)
    check_count(args.batch_size, "--batch-size")
    check_count(args.cores, "--cores")
    for value in args.threads:
        check_count(value, "--threads", 1, 1024)
    for value in args.games_per_actor or []:
        check_count(value, "--games-per-actor", 1, 65536)
    for value in args.core_counts:
        check_count(value, "--core-counts", 2, 4096)
    for machines in args.machines:
        check_count(machines, "--machines")
    load_config(args.config)  # a config that cannot run fails now, not after the runs before it
    check_outputs_and_agents({"--json": args.json}, inputs=[args.config])


def main(argv=None) -> dict:
    parser = build_parser()
    args = parser.parse_args(argv)
    with command_errors(parser):
        check_args(args)
    result = measure_rates(args) if args.rates else measure_runs(args)
    if args.json:
        write_json(args.json, result)
    return result


def measure_rates(args) -> dict:
    """``--rates``: medians of the actor's and the learner's rates over the repeats, and the projection."""
    runs = []
    for repeat in range(args.repeats):
        print(f"[{repeat + 1}/{args.repeats}] one actor, then the learner, {args.seconds:.0f} s each ...",
              flush=True)
        actors = [actor_rate(args.seconds, args.config, games) for games in args.games_per_actor or [None]]
        run = {**actors[0], **{f"actor_fps_games_{a['games_per_actor']}": a["actor_fps"] for a in actors}}
        for threads in args.threads:
            learner = learner_rate(args.seconds, args.config, args.device, args.batch_size, threads)
            run.update(learner if threads == args.threads[0] else {})
            run[f"learner_sps_threads_{threads}"] = learner["learner_sps"]
            if threads > 1:
                run[f"matmul_scaling_threads_{threads}"] = matmul_scaling(args.seconds, threads)
        runs.append(run)
    rates = {k: _median([r[k] for r in runs]) if isinstance(runs[0][k], float) else runs[0][k]
             for k in runs[0]}
    print(f"\nrates alone, one thread each (the learner: {args.threads[0]}), median of {args.repeats}; "
          f"load average now {os.getloadavg()[0]:.1f}")
    if args.games_per_actor and len(args.games_per_actor) > 1:
        print_actor_sizes(rates, args.games_per_actor)
    rows = print_rates(rates, args.cores, args.machines)
    by_threads = {t: rates[f"learner_sps_threads_{t}"] for t in args.threads}
    sizes = print_machine_sizes(rates["actor_fps"], by_threads, args.core_counts)
    for t in (t for t in args.threads if t > 1):
        print(f"this machine's ceiling for {t} threads ({t} independent chains of the learner's matrix "
              f"products against one thread): {rates[f'matmul_scaling_threads_{t}']:.2f}x")
    return {"seconds": args.seconds, "repeats": args.repeats, "config": os.path.relpath(args.config, ROOT),
            "load_average": os.getloadavg(), "rates": rates, "runs": runs, "cores": args.cores,
            "projection": rows, "machine_sizes": sizes}


def measure_runs(args) -> dict:
    """Training runs of each backend (and DouZero's), interleaved in every repeat; the table of medians."""
    python = None if args.skip_douzero else douzero_python()
    if python is None and not args.skip_douzero:
        print("douzero not importable here nor in .venv-peers: its rows are skipped", file=sys.stderr)
    runs: dict[str, list[dict]] = {}
    for repeat in range(args.repeats):
        for actors in args.actors:
            for backend in args.backend[::-1] if repeat % 2 else args.backend:  # each goes first in turn
                who = "ours" if backend == "local" else "ours-ray"
                print(f"[{repeat + 1}/{args.repeats}] {who}, {actors} actor(s), {args.seconds:.0f} s ...",
                      flush=True)
                result = run_ours(actors, args.seconds, args.config, backend=backend)
                runs.setdefault(f"{who}/{actors}", []).append(result)
            if python:
                print(f"[{repeat + 1}/{args.repeats}] douzero, {actors} actor(s), {args.seconds:.0f} s ...",
                      flush=True)
                result = run_douzero(actors, args.seconds, python, args.douzero_threads)
                runs.setdefault(f"douzero/{actors}", []).append(result)
    rows = {key: {field: _median([r.get(field) for r in results])
                  for field in results[0] if isinstance(results[0][field], (int, float, type(None)))}
            for key, results in runs.items()}
    print(f"\ntraining throughput, CPU ({os.cpu_count()} cores), {args.seconds:.0f} s runs, "
          f"median of {args.repeats}; load average now {os.getloadavg()[0]:.1f}")
    print_table(rows)
    return {"seconds": args.seconds, "repeats": args.repeats, "cpu_count": os.cpu_count(),
            "load_average": os.getloadavg(), "config": os.path.relpath(args.config, ROOT),
            "douzero_python": python, "douzero_threads": args.douzero_threads, "rows": rows, "runs": runs}


def _ratio(row: dict, peer: dict | None, field: str) -> float | None:
    """``row[field] / peer[field]``, or None when either is missing."""
    if not peer or not row.get(field) or not peer.get(field):
        return None
    return row[field] / peer[field]


def print_table(rows: dict) -> None:
    """One line per run kind and actor count; ratios to DouZero (ours) and to the local backend (ours-ray).

    The ratios are stored in the rows too (``ratio_steady``, ``ratio_overall``, ``vs_local_steady``).
    """
    print(f"{'run':<12} {'actors':>6} {'frames':>10} {'overall f/s':>12} {'steady f/s':>11} "
          f"{'learner f/s':>12} {'trained share':>14} {'ratio (steady)':>15} {'vs local':>9}")
    for key, row in rows.items():
        who, actors = key.split("/")
        learner = row.get("learner_fps") if who == "douzero" else row.get("samples_per_s")
        ratio = vs_local = ""
        if who == "ours" and _ratio(row, rows.get(f"douzero/{actors}"), "steady_fps"):
            row["ratio_steady"] = _ratio(row, rows[f"douzero/{actors}"], "steady_fps")
            row["ratio_overall"] = _ratio(row, rows[f"douzero/{actors}"], "overall_fps")
            ratio = f"{row['ratio_steady']:.1f}x"
        if who == "ours-ray" and _ratio(row, rows.get(f"ours/{actors}"), "steady_fps"):
            row["vs_local_steady"] = _ratio(row, rows[f"ours/{actors}"], "steady_fps")
            row["vs_local_overall"] = _ratio(row, rows[f"ours/{actors}"], "overall_fps")
            vs_local = f"{row['vs_local_steady']:.2f}x"
        share = f"{row['trained_share']:.1%}" if row.get("trained_share") is not None else "-"
        print(f"{who:<12} {actors:>6} {_fmt(row['frames']):>10} {_fmt(row['overall_fps']):>12} "
              f"{_fmt(row['steady_fps']):>11} {_fmt(learner):>12} {share:>14} {ratio:>15} {vs_local:>9}")
    print("frames: actor decisions; learner f/s: samples the learner trained on per second "
          "(DouZero: its logged frames); trained share: samples trained on / samples made; "
          "vs local: steady f/s of ours-ray over ours")


if __name__ == "__main__":
    main()
