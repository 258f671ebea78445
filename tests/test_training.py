"""DMC training: end-to-end runs of the tiny config, resume, determinism, checkpoints, and the pieces.

The end-to-end runs use ``configs/tiny.yaml`` (a few thousand frames, small networks) with
``out_dir`` in ``tmp_path``; the whole file runs in well under a minute on two cores.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("yaml")
pytest.importorskip("tensorboard")

from helpers import ROOT, STANDARD, TINY, dmc_learner, scalars, small_config, small_model  # noqa: E402

from agents.checkpoint import CheckpointError, load_model, read_checkpoint, save_checkpoint  # noqa: E402
from agents.dmc import NETWORKS, DMCAgent, ModelConfig, network_of, segment_argmax  # noqa: E402
from doudizhu_env import engine  # noqa: E402
from doudizhu_env.actions import BID0, PASS  # noqa: E402
from doudizhu_env.engine import MAX_HISTORY  # noqa: E402
from doudizhu_env.observation import OBS_SIZE, observe  # noqa: E402
from doudizhu_env.rules import Rules  # noqa: E402
from train.actor import Actor, epsilon_at  # noqa: E402
from train.buffer import EpisodeRecorder, SampleBuffer, objective_targets  # noqa: E402
from train.config import TrainConfig, load_config  # noqa: E402
from train.run import train  # noqa: E402
from train.samples import Samples, pack_obs, unpack_obs  # noqa: E402

SMALL = small_config()

LOSS_TAGS = {f"loss/{name}" for name in NETWORKS} | {"loss/all"}
RETURN_TAGS = {f"return/{name}" for name in NETWORKS}
PERF_TAGS = {"perf/frames_per_s", "perf/epsilon", "perf/updates", "perf/learning_rate"}


def tiny(out_dir, **overrides) -> TrainConfig:
    """The tiny config writing under ``out_dir``, evaluation off unless overridden."""
    values = {"out_dir": str(out_dir), "eval_deals": 0, **overrides}
    return load_config(TINY, {k: v for k, v in values.items()})


def same_state(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# -- end to end ----------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """One tiny run with a final evaluation, shared by the tests that only read its outputs."""
    out = tmp_path_factory.mktemp("runs")
    cfg = tiny(out, eval_deals=4)
    report = train(cfg)
    return cfg, os.path.join(str(out), cfg.run_name), report


def test_tiny_run_writes_a_loadable_checkpoint(tiny_run):
    cfg, run_dir, _ = tiny_run
    data = read_checkpoint(os.path.join(run_dir, "checkpoint.pt"))
    assert cfg.total_frames <= data["frames"] < cfg.total_frames + 2 * cfg.chunk_size
    # samples exist once their hand is over, so updates lag frames by the hands in progress
    assert 0 < data["updates"] * cfg.batch_size <= data["frames"]
    assert data["optimizer"] is not None and data["train_config"] == cfg.to_dict()
    model = load_model(os.path.join(run_dir, "checkpoint.pt"), STANDARD, cfg.model)
    assert model.cfg == cfg.model
    assert not [p for p in os.listdir(run_dir) if p.startswith(".ckpt-")]  # no temporary file left


def test_tiny_run_logs_the_expected_scalars(tiny_run):
    cfg, run_dir, report = tiny_run
    logged = scalars(run_dir)
    # the final evaluation: one entry per baseline (and evaluation mode), logged as eval/<entry>/<figure>
    assert report and all(key.split("/")[0] == "random" for key in report)
    eval_tags = {f"eval/{key}/{figure}" for key in report for figure in ("wp", "adp")}
    assert LOSS_TAGS | RETURN_TAGS | PERF_TAGS | eval_tags <= set(logged)
    frames = read_checkpoint(os.path.join(run_dir, "checkpoint.pt"))["frames"]
    for tag in LOSS_TAGS | PERF_TAGS:
        steps = [s for s, _ in logged[tag]]
        assert steps == sorted(steps) and 0 < steps[-1] <= frames, tag
        assert all(np.isfinite(v) for _, v in logged[tag]), tag
    for tag in eval_tags:
        assert logged[tag][-1][0] == frames, tag
    for key, figures in report.items():
        assert 0.0 <= figures["wp"] <= 1.0
        assert logged[f"eval/{key}/wp"][-1][1] == pytest.approx(figures["wp"])
    assert logged["perf/epsilon"][0][1] == pytest.approx(cfg.epsilon, rel=1e-3)
    assert all(v == pytest.approx(cfg.learning_rate) for _, v in logged["perf/learning_rate"])  # factor 1
    assert os.path.isfile(os.path.join(run_dir, "eval.json"))


def test_resume_continues_from_the_saved_frame_count(tiny_run, tmp_path):
    import shutil

    cfg, run_dir, _ = tiny_run
    shutil.copytree(run_dir, tmp_path / cfg.run_name)
    saved = read_checkpoint(os.path.join(run_dir, "checkpoint.pt"))
    before = set(glob.glob(str(tmp_path / cfg.run_name / "events.*")))

    more = tiny(tmp_path, total_frames=saved["frames"] + 1500, learning_rate=1e-4)
    train(more, resume=True)
    data = read_checkpoint(str(tmp_path / cfg.run_name / "checkpoint.pt"))
    assert more.total_frames <= data["frames"] < more.total_frames + 2 * cfg.chunk_size
    # the configured rate, not the one the resumed optimizer state was saved with
    assert saved["optimizer"]["param_groups"][0]["lr"] == pytest.approx(cfg.learning_rate)
    assert data["optimizer"]["param_groups"][0]["lr"] == pytest.approx(1e-4)
    assert data["updates"] > saved["updates"]
    # the training clock goes on across --resume: checkpoints (and curves over minutes) count both parts
    assert saved["minutes"] > 0 and data["minutes"] > saved["minutes"]

    new_files = set(glob.glob(str(tmp_path / cfg.run_name / "events.*"))) - before
    logged = scalars(None, new_files)
    steps = [s for s, _ in logged["loss/all"]]
    assert steps and saved["frames"] < steps[0] and steps[-1] <= data["frames"]
    assert logged["perf/updates"][0][1] > saved["updates"]


def test_resume_without_a_checkpoint_fails(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint"):
        train(tiny(tmp_path), resume=True)


def test_resume_with_another_model_config_fails(tiny_run, tmp_path):
    import shutil

    cfg, run_dir, _ = tiny_run
    shutil.copytree(run_dir, tmp_path / cfg.run_name)
    with pytest.raises(CheckpointError, match="config"):
        train(load_config(TINY, {"out_dir": str(tmp_path), "eval_deals": 0, "model.hidden": 24}), resume=True)


def test_init_weights_starts_from_an_exported_model_and_counts_on(tiny_run, tmp_path):
    from agents.checkpoint import export_weights

    cfg, run_dir, _ = tiny_run
    saved = read_checkpoint(os.path.join(run_dir, "checkpoint.pt"))
    weights = str(tmp_path / "w.pt")
    export_weights(os.path.join(run_dir, "checkpoint.pt"), weights)
    start = load_model(weights).state_dict()
    # a frame budget already spent: the run's checkpoint is the model it started from
    train(tiny(tmp_path, run_name="same", init_weights=weights, total_frames=saved["frames"]))
    same = read_checkpoint(str(tmp_path / "same" / "checkpoint.pt"))
    assert same_state(same["model"], start)
    assert (same["frames"], same["updates"]) == (saved["frames"], saved["updates"])
    # more frames: training goes on from there, the optimizer fresh (its step counts: this run's only)
    train(tiny(tmp_path, run_name="more", init_weights=weights, total_frames=saved["frames"] + 1500))
    more = read_checkpoint(str(tmp_path / "more" / "checkpoint.pt"))
    assert more["frames"] >= saved["frames"] + 1500 and more["updates"] > saved["updates"]
    assert not same_state(more["model"], start)
    steps = {int(s["step"]) for s in more["optimizer"]["state"].values()}
    assert steps and all(1 <= step <= more["updates"] - saved["updates"] for step in steps)


def test_init_weights_of_another_model_config_is_refused(tiny_run, tmp_path):
    cfg, run_dir, _ = tiny_run
    bigger = tiny(tmp_path, init_weights=os.path.join(run_dir, "checkpoint.pt"), **{"model.hidden": 24})
    with pytest.raises(CheckpointError, match="init_weights: .* holds a model of config"):
        train(bigger)
    assert not (tmp_path / cfg.run_name).exists()


def test_inline_runs_are_deterministic(tmp_path):
    cfg_a = tiny(tmp_path / "a", total_frames=1500, seed=7)
    cfg_b = tiny(tmp_path / "b", total_frames=1500, seed=7)
    train(cfg_a)
    train(cfg_b)
    a = read_checkpoint(str(tmp_path / "a" / cfg_a.run_name / "checkpoint.pt"))
    b = read_checkpoint(str(tmp_path / "b" / cfg_b.run_name / "checkpoint.pt"))
    assert (a["frames"], a["updates"]) == (b["frames"], b["updates"]) and a["updates"] > 0
    assert same_state(a["model"], b["model"])
    assert same_state(a["optimizer"]["state"][0], b["optimizer"]["state"][0])
    la = scalars(str(tmp_path / "a" / cfg_a.run_name))
    lb = scalars(str(tmp_path / "b" / cfg_b.run_name))
    for tag in LOSS_TAGS | RETURN_TAGS:
        assert la[tag] == lb[tag], tag

    cfg_c = tiny(tmp_path / "c", total_frames=1500, seed=8)
    train(cfg_c)
    c = read_checkpoint(str(tmp_path / "c" / cfg_c.run_name / "checkpoint.pt"))
    assert not same_state(a["model"], c["model"])


def test_learning_rate_falls_linearly_over_the_frame_budget(tmp_path):
    """lr x (1 - (1 - end_factor) x frames made / total_frames), set before every update."""
    cfg = tiny(tmp_path, learning_rate_end_factor=0.1, total_frames=4000, max_minutes=0)
    train(cfg)
    run_dir = str(tmp_path / cfg.run_name)

    def expected(frames: int) -> float:
        return cfg.learning_rate * (1 - 0.9 * min(1.0, frames / cfg.total_frames))

    logged = scalars(run_dir)["perf/learning_rate"]
    assert len(logged) > 3
    for frames, lr in logged:  # the lr of the last update, made at most a chunk of frames before the log
        assert expected(frames) - 1e-9 <= lr <= expected(frames - 2 * cfg.chunk_size) + 1e-9, (frames, lr)
    assert [lr for _, lr in logged] == sorted((lr for _, lr in logged), reverse=True)
    data = read_checkpoint(os.path.join(run_dir, "checkpoint.pt"))
    final = data["optimizer"]["param_groups"][0]["lr"]
    assert cfg.learning_rate * 0.1 <= final <= expected(cfg.total_frames - 2 * cfg.chunk_size)


def test_actor_process_run_trains_end_to_end(tmp_path):
    cfg = tiny(tmp_path, num_actors=1, total_frames=2000, max_minutes=1.0)
    train(cfg)
    data = read_checkpoint(str(tmp_path / cfg.run_name / "checkpoint.pt"))
    assert data["frames"] >= cfg.total_frames and data["updates"] > 0
    logged = scalars(str(tmp_path / cfg.run_name))
    assert "loss/all" in logged and all(np.isfinite(v) for _, v in logged["loss/all"])


def _spawned_children(pid: int) -> list[int]:
    """The multiprocessing children of process ``pid`` (Linux /proc)."""
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        kids = [int(k) for k in f.read().split()]
    out = []
    for kid in kids:
        try:
            with open(f"/proc/{kid}/cmdline", "rb") as f:
                if b"spawn_main" in f.read():
                    out.append(kid)
        except FileNotFoundError:
            pass
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"  # a zombie has exited
    except FileNotFoundError:
        return False


@pytest.mark.integration
@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc to find the actors")
def test_actor_processes_exit_when_the_learner_is_killed(tmp_path):
    """A learner killed outright (SIGKILL: no cleanup, no stop event) must not leave its actors running."""
    cmd = [sys.executable, "-m", "train.run", "--config", "configs/tiny.yaml", "--out-dir", str(tmp_path),
           "--run-name", "killed", "--num-actors", "2", "--max-minutes", "5", "--log-seconds", "0.5",
           "--eval-minutes", "0", "--total-frames", "100000000"]  # still running when its actors are found
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for line in proc.stdout:  # the actors are up once frames are being counted
            if "frames/s" in line:
                break
        actors = _spawned_children(proc.pid)
        assert len(actors) == 2
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 30
    while any(_alive(a) for a in actors) and time.monotonic() < deadline:
        time.sleep(0.2)
    survivors = [a for a in actors if _alive(a)]
    for a in survivors:  # do not leave them running when the test fails
        os.kill(a, signal.SIGKILL)
    assert not survivors, "actor processes outlived their learner"


def test_a_signal_after_the_last_step_still_saves_the_checkpoint(tmp_path, monkeypatch):
    """Regression (a CI failure): the run had made its frames when Ctrl-C came, during the final
    checkpoint, where the default handler raised ``KeyboardInterrupt``. The handler now covers the
    checkpoint: the run saves it, skips the final evaluation and returns ``{}``."""
    import train.run as run

    saved = run.Run.checkpoint

    def checkpoint_hit_by_ctrl_c(run):
        os.kill(os.getpid(), signal.SIGINT)  # handled at once: Python runs handlers in the main thread
        saved(run)

    monkeypatch.setattr(run.Run, "checkpoint", checkpoint_hit_by_ctrl_c)
    before = signal.getsignal(signal.SIGINT)
    report = run.train(tiny(tmp_path, total_frames=300, eval_deals=10))
    assert report == {}
    assert signal.getsignal(signal.SIGINT) is before
    data = read_checkpoint(os.path.join(str(tmp_path), "tiny", "checkpoint.pt"))
    assert data["frames"] >= 300


def test_ctrl_c_outside_training_is_one_line_exit_130(monkeypatch, capsys):
    """A Ctrl-C the run cannot turn into a clean stop (a second one, or one during setup or the
    final evaluation) ends the command with one line and exit status 130, not a traceback."""
    import train.run as run

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(run, "train", interrupted)
    with pytest.raises(SystemExit) as info:
        run.main(["--config", "configs/tiny.yaml"])
    assert info.value.code == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "interrupted by Ctrl-C" in err and "--resume" in err


@pytest.mark.integration
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_a_signal_stops_the_run_with_its_checkpoint_saved(tmp_path, how):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) or SIGTERM to the learner:
    the run stops at its next step, saves a loadable checkpoint, skips the final evaluation, says so
    and exits 0, with no traceback from the learner or its actors."""
    cmd = [sys.executable, "-m", "train.run", "--config", "configs/tiny.yaml", "--out-dir", str(tmp_path),
           "--run-name", "stopped", "--num-actors", "2", "--max-minutes", "5", "--log-seconds", "0.5",
           "--eval-minutes", "0", "--checkpoint-minutes", "60", "--total-frames", "100000000"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        lines = []
        for line in proc.stdout:  # until the learner has made an update
            lines.append(line)
            if "frames/s" in line and " updates 0 " not in line:
                break
        if how == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    out = "".join(lines) + rest
    assert proc.returncode == 0, out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out
    name = "SIGINT" if how == "ctrl-c" else "SIGTERM"
    assert f"stopped by {name} at " in out and "final evaluation skipped" in out
    assert "evaluation at" not in out
    path = tmp_path / "stopped" / "checkpoint.pt"
    assert out.strip().splitlines()[-2] == f"checkpoint: {path}"
    data = read_checkpoint(str(path))
    assert data["frames"] > 0 and data["updates"] > 0
    load_model(str(path))


@pytest.mark.integration
def test_command_line_run_shows_progress_and_says_where_its_outputs_are(tmp_path):
    cmd = [sys.executable, "-m", "train.run", "--config", "configs/tiny.yaml", "--out-dir", str(tmp_path),
           "--run-name", "cli", "--total-frames", "3000", "--log-seconds", "0", "--eval-deals", "3",
           "--keep-checkpoints", "true", "--checkpoint-minutes", "0"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=True).stdout
    progress = [line for line in out.splitlines() if "frames/s" in line]
    assert progress and all("loss" in line and "eps" in line and "trained on" in line for line in progress)
    assert "evaluation at" in out
    # the table shows the trained agent only, and how it bid
    assert "against random/bidding (agent = dmc)" in out and "\nrandom " not in out
    assert "dmc: landlord in" in out and "its bids: pass" in out
    lines = out.strip().splitlines()
    assert lines[-2] == f"checkpoint: {tmp_path / 'cli' / 'checkpoint.pt'}"
    assert lines[-1].startswith(f"TensorBoard logs: {tmp_path / 'cli'}")
    kept = os.listdir(tmp_path / "cli" / "checkpoints")
    assert kept and all(read_checkpoint(str(tmp_path / "cli" / "checkpoints" / k))["optimizer"] is None
                        for k in kept)


# -- checkpoints -----------------------------------------------------------------


def test_checkpoint_round_trip(tmp_path):
    path = str(tmp_path / "ck" / "model.pt")
    model = small_model()
    opt = torch.optim.Adam(model.parameters())
    save_checkpoint(path, model, opt, frames=12, updates=3, train_config={"a": 1},
                    rng={"torch": torch.get_rng_state()})
    data = read_checkpoint(path)
    assert (data["frames"], data["updates"]) == (12, 3)
    loaded = load_model(path, STANDARD, SMALL)
    assert same_state(loaded.state_dict(), model.state_dict())
    assert load_model(path).cfg == SMALL  # no expectation: the stored config


def test_kill_during_checkpoint_write_leaves_the_previous_one(tmp_path):
    path = tmp_path / "checkpoint.pt"
    marker = tmp_path / "writing"
    save_checkpoint(str(path), small_model(), frames=1)
    script = textwrap.dedent(f"""
        import io, time, torch
        from agents.dmc import ScoreModel, ModelConfig
        from doudizhu_env.rules import Rules
        from agents.checkpoint import save_checkpoint

        real_save = torch.save

        def slow_save(obj, f):  # write half the bytes, then hang as if the disk were slow
            buf = io.BytesIO()
            real_save(obj, buf)
            f.write(buf.getvalue()[: len(buf.getvalue()) // 2])
            f.flush()
            open({str(marker)!r}, "w").close()
            time.sleep(120)

        torch.save = slow_save
        model = ScoreModel(Rules.preset("standard"), ModelConfig(**{SMALL.to_dict()!r}))
        save_checkpoint({str(path)!r}, model, frames=2)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, "the writer exited before writing"
            assert time.monotonic() < deadline, "the writer never started writing"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    partial = [p for p in os.listdir(tmp_path) if p.startswith(".ckpt-")]
    assert len(partial) == 1  # the half-written temporary file, never renamed
    with pytest.raises(CheckpointError):
        read_checkpoint(str(tmp_path / partial[0]))
    data = torch.load(str(path), map_location="cpu", weights_only=True)
    assert data["frames"] == 1
    assert read_checkpoint(str(path))["frames"] == 1
    load_model(str(path), STANDARD, SMALL)


def test_checkpoint_of_another_model_config_or_rules(tmp_path):
    path = str(tmp_path / "c.pt")
    save_checkpoint(path, small_model(), frames=0)
    with pytest.raises(CheckpointError, match="config"):
        load_model(path, STANDARD, ModelConfig(hidden=17, lstm_hidden=8, action_hidden=8, head_hidden=16))
    with pytest.raises(CheckpointError, match="rules"):
        load_model(path, Rules.preset("douzero"), SMALL)


def test_checkpoint_whose_weights_do_not_fit(tmp_path):
    path = str(tmp_path / "c.pt")
    save_checkpoint(path, small_model(), frames=0)
    data = torch.load(path, weights_only=True)
    data["model_config"]["hidden"] = 24  # claims another size than its weights have
    torch.save(data, path)
    with pytest.raises(CheckpointError, match="do not fit"):
        load_model(path)


@pytest.mark.parametrize("kind", ["garbage", "empty", "truncated", "foreign", "version", "missing", "pickle"])
def test_bad_checkpoint_files(tmp_path, kind):
    path = tmp_path / "bad.pt"
    if kind == "garbage":
        path.write_bytes(b"this is not a checkpoint\x00\x01" * 50)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "truncated":
        save_checkpoint(str(path), small_model(), frames=0)
        path.write_bytes(path.read_bytes()[:1000])
    elif kind == "foreign":
        torch.save({"state_dict": {"w": torch.zeros(2)}}, str(path))
    elif kind == "version":
        save_checkpoint(str(path), small_model(), frames=0)
        data = torch.load(str(path), weights_only=True)
        data["version"] = 99
        torch.save(data, str(path))
    elif kind == "pickle":  # needs arbitrary unpickling: refused by weights_only=True
        torch.save({"format": "doudizhu-dmc", "f": subprocess.Popen}, str(path))
    with pytest.raises(CheckpointError):
        load_model(str(path))


# -- learner ------------------------------------------------------------------------


def test_learner_loss_falls_on_a_fixed_batch():
    model = small_model(seed=1)
    actor = Actor(model, 32, "wp", np.random.default_rng(0))
    batch = actor.collect(512, epsilon=0.1)
    batch = batch.rows(0, 512)
    assert set(np.unique(batch.network)) >= {0, 2, 3, 4}
    learner = dmc_learner(model, learning_rate=3e-3, max_grad_norm=10.0)
    losses = [learner.update(batch)["loss/all"] for _ in range(60)]
    assert learner.updates == 60
    assert losses[-1] < 0.5 * losses[0], (losses[0], losses[-1])
    assert np.mean(losses[-10:]) < np.mean(losses[:10])


def test_learner_stats():
    model = small_model()
    batch = Actor(model, 16, "adp", np.random.default_rng(1)).collect(256, epsilon=0.0)
    network = batch.network.astype(np.int64)
    with torch.no_grad():  # Q before the update: the losses reported are those of this batch
        q = model.score(torch.from_numpy(unpack_obs(batch.obs)), network, batch.action.astype(np.int64),
                        np.arange(len(network))).numpy()
    squared = (q - batch.target) ** 2
    stats = dmc_learner(model, learning_rate=1e-3).update(batch)
    assert stats["loss/all"] == pytest.approx(float(squared.mean()), rel=1e-4)
    for index in np.unique(network):
        name = NETWORKS[index]
        rows = network == index
        assert stats[f"return/{name}"] == pytest.approx(float(batch.target[rows].mean()), rel=1e-5)
        assert stats[f"loss/{name}"] == pytest.approx(float(squared[rows].mean()), rel=1e-4)


# -- actor ----------------------------------------------------------------------------


def test_actor_deals_a_share_of_its_games_without_bidding():
    model = small_model()
    actor = Actor(model, 40, "logadp", np.random.default_rng(2), fixed_landlord_share=0.25)
    sizes = {t.state.rules.bidding: t.state.num_games for t in actor.groups}
    assert sizes == {True: 30, False: 10}
    fixed = next(t for t in actor.groups if not t.state.rules.bidding)
    assert (fixed.state.landlord >= 0).all()
    assert fixed.state.rules == dataclasses.replace(model.rules, bidding=False)  # as the evaluation's
    batch = actor.collect(2000, epsilon=0.1)
    assert actor.frames >= 2000 and len(batch.target) >= 2000
    only = Actor(model, 8, "adp", np.random.default_rng(2), fixed_landlord_share=1.0)
    assert [t.state.rules.bidding for t in only.groups] == [False]


def test_bids_of_a_redealt_hand_are_worth_zero():
    """All three pass: those three decisions become samples with target 0 at once."""
    model = small_model()
    actor = Actor(model, 1, "adp", np.random.default_rng(0))
    table = actor.groups[0]
    pass_all = DMCAgent(model)
    pass_all.decide = lambda state: (np.full(state.num_games, BID0), observe(state), network_of(state))
    out = []
    for _ in range(3):
        out += table.step(pass_all)[0]
    assert len(out) == 1 and len(out[0].target) == 3
    assert (out[0].target == 0).all() and (out[0].network == 0).all()
    assert (out[0].action == BID0).all()
    assert int(table.state.redeals[0]) == 1 and table.state.phase[0] == engine.BIDDING


# -- episode recorder and buffers ---------------------------------------------------


@pytest.mark.parametrize("objective", ["adp", "wp", "logadp"])
def test_recorder_targets_are_the_final_points_of_the_deciding_seat(objective):
    games, rng = 8, np.random.default_rng(3)
    state = engine.reset(rng, games, STANDARD)
    rec = EpisodeRecorder(games, objective)
    pending: dict[int, list[tuple[int, int, int, np.ndarray]]] = {g: [] for g in range(games)}
    next_id, hands = 0, 0
    for _ in range(400):
        obs, network = observe(state), network_of(state)
        ids = np.arange(next_id, next_id + games)  # labels in the action field identify the decisions
        next_id += games
        rec.record(np.arange(games), state.to_act, network, ids, obs)
        for g in range(games):
            decision = (int(ids[g]), int(state.to_act[g]), int(network[g]), pack_obs(obs[g : g + 1])[0])
            pending[g].append(decision)
        state = engine.step(state, engine.sample_legal(state, rng), auto_reset=True)
        ended = np.flatnonzero(state.ended)
        if not len(ended):
            continue
        out = rec.finish(ended, state.rewards[ended])
        expected = {}
        for g in ended:
            for i, seat, index, bits in pending.pop(g):
                target = objective_targets(state.rewards[g, seat : seat + 1], objective)[0]
                expected[i] = (target, index, bits)
            pending[g] = []
        assert sorted(out.action.tolist()) == sorted(expected)
        for row, i in enumerate(out.action):
            target, index, bits = expected[int(i)]
            assert out.target[row] == pytest.approx(target)
            assert out.network[row] == index
            assert np.array_equal(out.obs[row], bits)
        hands += len(ended)
        # the rows of ended hands are freed; those of hands in progress are kept
        assert int((rec.game >= 0).sum()) == sum(len(v) for v in pending.values())
    assert hands >= games
    if objective == "wp":
        assert set(np.unique(objective_targets(np.array([-6.0, 0.0, 4.0]), "wp"))) <= {-1.0, 0.0, 1.0}


def test_recorder_frees_rows_and_wraps_around():
    rec = EpisodeRecorder(1)
    obs = np.zeros((1, OBS_SIZE), dtype=np.float32)
    for hand in range(5):  # 5 * 100 decisions > capacity: rows are reused once freed
        for _ in range(100):
            rec.record(np.array([0]), np.array([hand % 3]), np.array([2]), np.array([7]), obs)
        out = rec.finish(np.array([0]), np.array([[2.0, -1.0, -1.0]]))
        assert len(out.target) == 100 and (rec.game < 0).all()
    assert len(rec.finish(np.array([0]), np.array([[1.0, 1.0, 1.0]])).target) == 0


def test_recorder_finish_of_games_without_rows():
    rec = EpisodeRecorder(4, "wp")
    obs = np.zeros((1, OBS_SIZE), dtype=np.float32)
    rec.record(np.array([0]), np.array([1]), np.array([0]), np.array([9]), obs)
    out = rec.finish(np.array([0, 3]), np.array([[-2.0, 4.0, -2.0], [1.0, 1.0, -2.0]]))
    assert out.action.tolist() == [9] and out.target.tolist() == [1.0]
    assert len(rec.finish(np.array([2]), np.zeros((1, 3))).target) == 0


def test_recorder_overrun_raises():
    rec = EpisodeRecorder(1)
    assert rec.capacity == 2 * MAX_HISTORY
    obs = np.zeros((1, OBS_SIZE), dtype=np.float32)
    for _ in range(rec.capacity):
        rec.record(np.array([0]), np.array([0]), np.array([0]), np.array([1]), obs)
    with pytest.raises(RuntimeError, match="overrun"):
        rec.record(np.array([0]), np.array([0]), np.array([0]), np.array([1]), obs)


def test_objective_targets():
    points = np.array([-12, -1, 0, 1, 3], dtype=np.int32)
    assert objective_targets(points, "adp").tolist() == [-12, -1, 0, 1, 3]
    assert objective_targets(points, "wp").tolist() == [-1, -1, 0, 1, 1]
    assert objective_targets(points, "logadp") == pytest.approx([-np.log2(13), -1, 0, 1, 2])
    with pytest.raises(ValueError):
        objective_targets(points, "elo")


def test_pack_obs_round_trip():
    obs = (np.random.default_rng(0).random((5, OBS_SIZE)) < 0.3).astype(np.float32)
    assert np.array_equal(unpack_obs(pack_obs(obs)), obs)


def test_sample_buffer_fifo_and_bound():
    def chunk(start, n):
        return Samples(obs=np.zeros((n, 2), np.uint8), action=np.arange(start, start + n),
                       network=np.zeros(n, np.int8), target=np.zeros(n, np.float32))

    buf = SampleBuffer(max_size=10)
    assert buf.take(1) is None
    buf.put(chunk(0, 4))
    buf.put(chunk(4, 4))
    assert buf.take(3).action.tolist() == [0, 1, 2]
    assert buf.take(3).action.tolist() == [3, 4, 5]
    assert buf.take(3) is None and buf.size == 2
    for i in range(5):
        buf.put(chunk(8 + 4 * i, 4))
    assert buf.size <= 10 + 4 and buf.dropped > 0
    got = buf.take(buf.size).action
    assert got.tolist() == list(range(got[0], 28))


def test_epsilon_schedule():
    assert epsilon_at(0, 0.1, 0.01, 100) == pytest.approx(0.1)
    assert epsilon_at(50, 0.1, 0.01, 100) == pytest.approx(0.055)
    assert epsilon_at(1000, 0.1, 0.01, 100) == pytest.approx(0.01)
    assert epsilon_at(5, 0.1, 0.01, 0) == 0.01


# -- the model and the agent ---------------------------------------------------------


def test_segment_argmax_matches_a_loop():
    rng = np.random.default_rng(0)
    for _ in range(200):
        lengths = rng.integers(1, 8, size=rng.integers(1, 20))
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        values = rng.integers(-3, 3, size=offsets[-1]).astype(np.float32)  # many ties
        expected = [offsets[i] + int(np.argmax(values[offsets[i] : offsets[i + 1]]))
                    for i in range(len(lengths))]
        assert segment_argmax(values, offsets).tolist() == expected


@pytest.mark.parametrize("epsilon", [0.0, 0.3])
def test_dmc_agent_plays_only_legal_actions(epsilon):
    model = small_model()
    agent = DMCAgent(model, epsilon=epsilon, rng=np.random.default_rng(5))
    games = 32
    state = engine.reset(11, games, STANDARD)
    seen = set()
    for _ in range(250):
        actions, obs, network = agent.decide(state)
        assert actions.shape == (games,) and actions.dtype == np.int64
        assert obs.shape == (games, OBS_SIZE) and obs.dtype == np.float32
        assert network.shape == (games,) and np.array_equal(network, network_of(state))
        assert ((network >= 0) & (network < len(NETWORKS))).all()
        seen.update(network.tolist())
        state = engine.step(state, actions, check=True, auto_reset=True)  # raises on an illegal action
    if epsilon:  # an untrained greedy model may pass every bid (redeal after redeal): only with exploration
        assert seen == set(range(len(NETWORKS)))


def test_dmc_agent_on_finished_games():
    agent = DMCAgent(small_model())
    state = engine.reset(2, 6, STANDARD)
    rng = np.random.default_rng(0)
    while not state.done.any():
        state = engine.step(state, engine.sample_legal(state, rng))
    actions, obs, network = agent.decide(state)
    assert (actions[state.done] == PASS).all() and (network[state.done] == -1).all()
    assert (network[~state.done] >= 0).all()
    assert engine.is_legal(state, actions)[~state.done].all()
    while not state.done.all():
        state = engine.step(state, engine.sample_legal(state, rng))
    actions, _, network = agent.decide(state)
    assert (actions == PASS).all() and (network == -1).all()


def test_dmc_agent_is_greedy_on_q_values():
    model = small_model()
    agent = DMCAgent(model)
    state = engine.reset(4, 8, STANDARD)
    for _ in range(20):
        state = engine.step(state, engine.sample_legal(state, np.random.default_rng(1)), auto_reset=True)
    actions, obs, network = agent.decide(state)
    ids, offsets = engine.legal_actions(state)
    seg = np.repeat(np.arange(8), np.diff(offsets))
    with torch.no_grad():
        q = model.score(torch.from_numpy(obs), network, ids, seg).numpy()
    for g in range(8):
        best = ids[offsets[g] + int(np.argmax(q[offsets[g] : offsets[g + 1]]))]
        assert actions[g] == best
    assert np.array_equal(agent.act(state), actions)


def test_no_periodic_evaluation_without_deals(tmp_path, monkeypatch):
    """``eval_deals: 0`` means no evaluation, also when ``eval_minutes`` comes round."""
    import train.run as run

    clock = iter(range(0, 10**9, 600))
    monkeypatch.setattr(run.time, "monotonic", lambda: float(next(clock)))
    cfg = tiny(tmp_path, total_frames=600, eval_minutes=1.0, eval_deals=0, max_minutes=0.0,
               checkpoint_minutes=1e6, log_seconds=1e9)
    run.train(cfg)  # every clock reading 10 minutes after the last: each step's evaluation is due
    assert not os.path.exists(os.path.join(str(tmp_path), cfg.run_name, "eval.json"))
