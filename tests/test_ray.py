"""The Ray backend: training with Ray actors (checkpoints, logs, resume, a killed actor), the arena on Ray.

The Ray tests share one local Ray instance (3 CPUs, a 200 MB object store, no dashboard) that the
module fixture starts and shuts down; they are skipped where Ray is not installed. The tests of what
happens without Ray run everywhere. The whole file takes about a minute on two cores.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

pytest.importorskip("torch")
pytest.importorskip("yaml")
pytest.importorskip("tensorboard")

from agents.checkpoint import read_checkpoint  # noqa: E402
from doudizhu_arena.arena import run_arena  # noqa: E402
from doudizhu_env.rules import Rules  # noqa: E402
from train import ray_backend  # noqa: E402
from train.config import ConfigError, load_config  # noqa: E402
from train.run import train  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TINY = str(ROOT / "configs" / "tiny.yaml")
INSTALL = 'pip install -e ".[ray]"'


def ray_tiny(out_dir, **overrides):
    """The tiny config on 2 Ray actors, writing under ``out_dir``, evaluation off unless overridden."""
    values = {"out_dir": str(out_dir), "eval_deals": 0, "backend": "ray", "num_actors": 2, **overrides}
    return load_config(TINY, values)


def scalars(run_dir) -> dict[str, list[tuple[int, float]]]:
    """``{tag: [(step, value), ...]}`` of the TensorBoard event files of ``run_dir``."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out: dict[str, list[tuple[int, float]]] = {}
    for path in sorted(glob.glob(os.path.join(run_dir, "events.*"))):
        acc = EventAccumulator(path, size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            out.setdefault(tag, []).extend((e.step, e.value) for e in acc.Scalars(tag))
    return out


@pytest.fixture(scope="module")
def ray_instance():
    ray = pytest.importorskip("ray")
    ray.init(address="local", num_cpus=3, include_dashboard=False, object_store_memory=200 * 2**20)
    yield ray
    ray.shutdown()


# -- training ------------------------------------------------------------------------


def test_ray_run_writes_checkpoints_scalars_and_evaluations_and_resumes(ray_instance, tmp_path):
    cfg = ray_tiny(tmp_path, run_name="ray", total_frames=6000, checkpoint_minutes=0.01,
                   keep_checkpoints=True, eval_deals=3, eval_minutes=0.05, log_seconds=0.5)
    train(cfg)
    run_dir = tmp_path / "ray"
    first = read_checkpoint(str(run_dir / "checkpoint.pt"))
    assert first["frames"] >= 6000 and first["updates"] > 0
    assert first["train_config"]["backend"] == "ray"
    assert len(glob.glob(str(run_dir / "checkpoints" / "*.pt"))) >= 2
    tags = scalars(run_dir)
    assert {"loss/all", "perf/frames_per_s", "perf/updates", "perf/trained_share"} <= set(tags)
    assert {"eval/random/bidding/wp", "eval/random/fixed_landlord/adp"} <= set(tags)
    assert json.loads((run_dir / "eval.json").read_text())["frames"] >= 6000

    train(ray_tiny(tmp_path, run_name="ray", total_frames=first["frames"] + 3000), resume=True)
    again = read_checkpoint(str(run_dir / "checkpoint.pt"))
    assert again["frames"] >= first["frames"] + 3000 and again["updates"] > first["updates"]
    steps = [step for step, _ in scalars(run_dir)["perf/updates"]]
    assert max(steps) >= first["frames"] + 3000


def test_a_ppo_run_on_ray_trains_its_policy_and_critic(ray_instance, tmp_path):
    """learner: ppo on Ray actors: the same chunks of whole hands reach the PPO learner."""
    cfg = ray_tiny(tmp_path, run_name="ppo", learner="ppo", games_per_actor=8, batch_size=256,
                   minibatch_size=128, total_frames=2000)
    train(cfg)
    data = read_checkpoint(str(tmp_path / "ppo" / "checkpoint.pt"))
    assert data["learner"] == "ppo" and data["frames"] >= 2000 and data["updates"] > 0 and data["critic"]
    assert {"loss/policy", "ppo/entropy"} <= set(scalars(tmp_path / "ppo"))


class _KeptFleet(ray_backend.Fleet):
    """The Fleet of a run, kept where the test can reach it."""

    made: list = []

    def __init__(self, ray, run):
        super().__init__(ray, run)
        _KeptFleet.made.append(self)


def _kill_first_actor_at(frames: int, ray, log: dict) -> None:
    """Wait until the run has ``frames`` frames, then SIGKILL the process of its actor 0."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (_KeptFleet.made and _KeptFleet.made[0].run.frames >= frames):
        time.sleep(0.05)
    fleet = _KeptFleet.made[0]
    log["pid"] = ray.get(fleet.actors[0].pid.remote())
    log["frames"] = fleet.run.frames
    os.kill(log["pid"], signal.SIGKILL)
    print(f"test: killed the process {log['pid']} of actor 0 at {log['frames']:,} frames", flush=True)


def _spent_once_replaced(budget_spent, deadline: float):
    """``Run.budget_spent``, but not before the new actor 0 delivered a chunk (or ``deadline`` passed):
    on a slow machine the surviving actor alone could otherwise finish the run first."""

    def wrapped(run) -> bool:
        fleet = _KeptFleet.made[0] if _KeptFleet.made else None
        waiting = fleet is not None and not (fleet.generation[0] and fleet.delivered[0])
        return budget_spent(run) and not (waiting and time.monotonic() < deadline)

    return wrapped


def test_killing_an_actor_process_does_not_stop_training(ray_instance, tmp_path, monkeypatch, capsys,
                                                         request):
    from train import run

    monkeypatch.setattr(ray_backend, "Fleet", _KeptFleet)
    monkeypatch.setattr(run.Run, "budget_spent",
                        _spent_once_replaced(run.Run.budget_spent, time.monotonic() + 90))
    _KeptFleet.made.clear()
    log: dict = {}
    killer = threading.Thread(target=_kill_first_actor_at, args=(3000, ray_instance, log), daemon=True)
    killer.start()
    cfg = ray_tiny(tmp_path, run_name="fault", total_frames=24_000, log_seconds=1.0,
                   model={"hidden": 16, "lstm_hidden": 8, "action_hidden": 8, "head_hidden": 16})
    train(cfg)
    killer.join(timeout=10)
    out = capsys.readouterr().out
    if request.config.getoption("capture") == "no":  # `-s`: show the log (quoted in docs/distributed.md)
        with capsys.disabled():
            print("\n" + out)
    else:
        print(out)  # kept by pytest, shown if the test fails
    fleet = _KeptFleet.made[0]
    assert fleet.replacements == 1 and fleet.generation == [1, 0]
    assert "actor 0 died at" in out and "replaced by a new actor (replacement 1)" in out
    assert "the new actor 0 delivered its first chunk" in out
    assert fleet.delivered[0] > 0, "the new actor 0 delivered no chunk"
    data = read_checkpoint(str(tmp_path / "fault" / "checkpoint.pt"))
    assert data["frames"] >= 24_000
    tags = scalars(tmp_path / "fault")
    assert [v for _, v in tags["perf/actor_replacements"]] == [1.0]
    after = [step for step, _ in tags["perf/updates"] if step > log["frames"]]
    assert len(after) >= 2 and after == sorted(after)  # frames kept rising after the kill


# -- the arena ---------------------------------------------------------------------


@pytest.mark.parametrize("bidding", [True, False])
def test_arena_on_ray_equals_the_local_pool(ray_instance, bidding):
    from doudizhu_arena.ray_arena import ray_pool

    rules = Rules.preset("standard", bidding=bidding)
    lineup = ["rule", "random", "random"]
    local = run_arena(lineup, 24, rules, seed=7, chunk_size=6, workers=2)
    on_ray = run_arena(lineup, 24, rules, seed=7, chunk_size=6, pool=ray_pool())
    assert on_ray == local
    assert on_ray != run_arena(lineup, 24, rules, seed=8, chunk_size=6, pool=ray_pool(max_in_flight=1))


def test_evaluate_command_line_on_ray_gives_the_local_report(ray_instance, tmp_path):
    from doudizhu_arena.evaluate import main

    args = ["--landlord", "rule", "--farmers", "random", "--games", "12", "--chunk-size", "4",
            "--no-progress"]
    reports = {}
    for backend in ("local", "ray"):
        main(args + ["--backend", backend, "--json", str(tmp_path / f"{backend}.json")])
        reports[backend] = json.loads((tmp_path / f"{backend}.json").read_text())
        assert reports[backend].pop("timing")["backend"] == backend
    assert reports["ray"] == reports["local"]


def test_tournament_and_sprt_on_ray_give_the_local_results(ray_instance, tmp_path):
    from doudizhu_arena.ray_arena import ray_pool
    from doudizhu_arena.sprt import sequential_test
    from doudizhu_arena.tournament import main as tournament

    args = ["--agents", "random", "rule", "--deals", "12", "--chunk-size", "4", "--no-cache", "--no-progress",
            "--bootstrap", "30"]
    local = tournament(args)
    on_ray = tournament(args + ["--backend", "ray"])
    assert on_ray["modes"] == local["modes"] and on_ray["played"] == 8
    tests = [sequential_test("random", "rule", h1=0.2, chunk_size=5, max_deals=30, pool=pool)
             for pool in (None, ray_pool())]
    assert [(t.decision, t.deals, t.history) for t in tests[1:]] == [(tests[0].decision, tests[0].deals,
                                                                      tests[0].history)]


# -- without Ray, and bad settings --------------------------------------------------------


def _without_ray(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter where ``import ray`` fails."""
    prelude = "import sys; sys.modules['ray'] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("command", [
    "from train.run import main; main(['--config', 'configs/tiny.yaml', '--backend', 'ray', '--num-actors', "
    "'2', '--out-dir', {out!r}])",
    "from doudizhu_arena.evaluate import main; "
    "main(['--seats', 'random', 'random', 'random', '--games', '3', "
    "'--backend', 'ray'])",
    "from doudizhu_arena.tournament import main; main(['--agents', 'random', 'rule', '--no-cache', "
    "'--backend', 'ray'])",
    "from doudizhu_arena.sprt import main; "
    "main(['--candidate', 'rule', '--baseline', 'random', '--backend', 'ray'])",
])
def test_asking_for_ray_without_it_says_how_to_install_it(command, tmp_path):
    run = _without_ray(command.format(out=str(tmp_path)))
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and INSTALL in lines[0] and "Traceback" not in run.stderr
    assert not os.listdir(tmp_path)  # nothing written before the check


@pytest.mark.parametrize("command", [
    ["train.run", "--config", "configs/tiny.yaml", "--backend", "ray", "--num-actors", "2",
     "--ray-address", "127.0.0.1:1", "--out-dir", "{out}"],
    ["doudizhu_arena.evaluate", "--seats", "random", "random", "random", "--games", "3", "--backend", "ray",
     "--ray-address", "127.0.0.1:1"],
])
def test_an_unreachable_cluster_is_one_line_and_exit_2(command, tmp_path):
    pytest.importorskip("ray")
    args = [sys.executable, "-m"] + [a.format(out=str(tmp_path)) for a in command]
    run = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "nothing answers at '127.0.0.1:1'" in lines[0], run.stderr


@pytest.mark.parametrize("address", [":6379", "host:", "host:port", "10.0.0.1:99999"])
def test_an_address_that_is_not_host_port_is_one_line(address):
    pytest.importorskip("ray")
    args = [sys.executable, "-m", "doudizhu_arena.evaluate", "--seats", "random", "random", "random",
            "--games", "3",
            "--backend", "ray", "--ray-address", address]
    run = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not a Ray address; expected 'auto' or HOST:PORT" in lines[0], run.stderr


def test_nothing_imports_ray_unless_asked():
    code = ("import sys\nimport train.run, doudizhu_arena.evaluate, train.ray_backend, doudizhu_arena.arena\n"
            "import doudizhu_arena.cluster, doudizhu_arena.ray_arena\n"
            "import doudizhu_arena.tournament, doudizhu_arena.sprt\n"
            "import doudizhu_arena.evaluation, benchmarks.training\n"
            "from train.config import load_config\nload_config('configs/tiny.yaml', {'backend': 'ray', "
            "'num_actors': 2})\nassert 'ray' not in sys.modules, 'ray was imported'\n")
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("overrides, message", [
    ({"backend": "spark"}, "backend must be one of ('local', 'ray')"),
    ({"backend": "ray", "num_actors": 0}, "backend: ray needs num_actors >= 1"),
    ({"backend": "ray", "num_actors": 2, "ray_actor_num_cpus": -1}, "ray_actor_num_cpus must be >= 0"),
    ({"ray_actor_num_gpus": -0.5}, "ray_actor_num_gpus must be >= 0"),
    ({"ray_chunks_in_flight": 0}, "ray_chunks_in_flight must be >= 1"),
    ({"ray_broadcast_updates": 0}, "ray_broadcast_updates must be >= 1"),
])
def test_bad_ray_settings(overrides, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(TINY, overrides)


@pytest.mark.parametrize("hand_head", [False, True])
def test_a_model_on_a_device_plays_as_the_model(hand_head):
    import dataclasses

    import numpy as np
    import torch

    from agents.dmc import ModelConfig, ScoreModel
    from train.actor import Actor

    torch.manual_seed(0)
    model = ScoreModel(Rules.preset("standard"), ModelConfig(hidden=16, lstm_hidden=8, action_hidden=8,
                                                           head_hidden=16, hand_head=hand_head))
    plain = Actor(model, 8, "adp", np.random.default_rng(3)).collect(200, 0.1)
    moved = Actor(ray_backend.OnDevice(model, "cpu"), 8, "adp", np.random.default_rng(3)).collect(200, 0.1)
    for field in dataclasses.fields(plain):  # the same samples, field by field (None where not recorded)
        mine, theirs = getattr(plain, field.name), getattr(moved, field.name)
        assert (mine is None) == (theirs is None) and (mine is None or np.array_equal(mine, theirs))
    assert (moved.hidden_hands is not None) == hand_head
    cfg = load_config(TINY, {"backend": "ray", "num_actors": 1, "ray_actor_num_gpus": 0.5})
    assert ray_backend.actor_device(cfg) == "cuda" and ray_backend.actor_device(load_config(TINY)) == "cpu"


@pytest.mark.parametrize("resources, overrides, fails, note", [
    ({"CPU": 4.0}, {"num_actors": 4}, False, False),
    ({"CPU": 2.0}, {"num_actors": 4}, False, True),
    ({"CPU": 8.0}, {"num_actors": 2, "ray_actor_num_gpus": 1}, True, False),
    ({"CPU": 8.0, "GPU": 1.0}, {"num_actors": 4, "ray_actor_num_gpus": 0.25}, False, False),
    ({"CPU": 8.0, "GPU": 1.0}, {"num_actors": 4, "ray_actor_num_gpus": 0.5}, False, True),
    ({"CPU": 0.5}, {"num_actors": 1}, True, False),
    ({}, {"num_actors": 3, "ray_actor_num_cpus": 0}, False, False),
])
def test_check_room_of_the_cluster(resources, overrides, fails, note, capsys):
    cfg = load_config(TINY, {"backend": "ray", **overrides})
    if fails:
        with pytest.raises(ConfigError, match="has no room for one actor"):
            ray_backend.check_room(resources, cfg)
    else:
        ray_backend.check_room(resources, cfg)
    assert ("has room for" in capsys.readouterr().out) == note
