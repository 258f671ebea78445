"""The judges' commands keep results and files safe, and no file hangs or exhausts the machine.

Each case is a command a user typed that lost data, hung, exhausted memory or accepted a forged
result: ``doudizhu_arena.tournament``, ``doudizhu_arena.sprt``, ``doudizhu_arena.evaluate``,
``train.run``, the agent loaders and the replay viewer now refuse it before any work, in one line
naming what was wrong and what was expected (exit status 2 on the command line), or carry on
without losing files.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import zipfile

import pytest

torch = pytest.importorskip("torch")

from helpers import ROOT, STANDARD, TINY, small_model  # noqa: E402

from agents.checkpoint import CheckpointError, load_model, save_checkpoint  # noqa: E402
from agents.registry import make_agent, split_rollout  # noqa: E402
from agents.search import SearchConfigError, parse_spec  # noqa: E402
from doudizhu_arena import sprt, tournament  # noqa: E402
from doudizhu_env import engine, records  # noqa: E402
from doudizhu_env.files import InputPathError, read_bounded, remove_inside  # noqa: E402
from doudizhu_env.rules import Rules  # noqa: E402
from doudizhu_table import replay  # noqa: E402


def exits(main, argv, capsys, code: int = 2) -> str:
    """The one line ``main(argv)`` ends with (it must exit with ``code``)."""
    with pytest.raises(SystemExit) as err:
        main(argv)
    assert err.value.code == code
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    return lines[0]


@contextlib.contextmanager
def no_hang(seconds: int = 20):
    """Fail (instead of hanging the test run) if the block waits on a FIFO."""
    def fail(signum, frame):
        raise AssertionError(f"still waiting after {seconds} s: a FIFO was opened")

    before = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


def tour(*args: str) -> list[str]:
    return ["--agents", "random", "rule", "--deals", "4", "--modes", "fixed_landlord", "--no-progress",
            "--bootstrap", "5", *args]


def sprt_args(*args: str) -> list[str]:
    return ["--candidate", "rule", "--baseline", "random", "--quiet", *args]


# -- 1. an output never replaces an input or another output ------------------------------------


def test_tournament_json_naming_a_checkpoint_is_refused(tmp_path, capsys):
    ckpt = tmp_path / "c.pt"
    ckpt.write_bytes(b"weights")
    line = exits(tournament.main, tour("--agents", "rule", f"dmc:{ckpt}", "--json", str(ckpt)), capsys)
    assert "--json: cannot write" in line and "it is an input of this command" in line
    assert ckpt.read_bytes() == b"weights"


def test_sprt_json_naming_the_candidate_is_refused(tmp_path, capsys):
    ckpt = tmp_path / "cand.pt"
    ckpt.write_bytes(b"weights")
    line = exits(sprt.main, ["--candidate", f"dmc:{ckpt}", "--baseline", "rule", "--json", str(ckpt)], capsys)
    assert "--json: cannot write" in line and "it is an input of this command" in line
    assert ckpt.read_bytes() == b"weights"


def test_two_outputs_of_one_file_are_refused(tmp_path, capsys):
    out = str(tmp_path / "t.json")
    line = exits(tournament.main, tour("--json", out, "--markdown", out, "--cache", str(tmp_path / "c")),
                 capsys)
    assert "--markdown: cannot write" in line and "it is also the file of --json" in line
    assert not os.path.exists(out) and not (tmp_path / "c").exists()


def test_evaluate_refuses_an_output_that_is_a_checkpoint_it_plays(tmp_path, capsys):
    from doudizhu_arena.evaluate import main

    ckpt = tmp_path / "c.pt"
    ckpt.write_bytes(b"weights")
    line = exits(main, ["--landlord", f"dmc:{ckpt}", "--farmers", "rule", "--record", str(ckpt)], capsys)
    assert "--record: cannot write" in line and "input" in line and ckpt.read_bytes() == b"weights"


# -- 2. the tournament's cache folder is checked before the first game ---------------------------


@pytest.mark.parametrize("make, words", [
    (lambda d: str(d / "file" / "cache"), "on its way is a regular file"),
    (lambda d: str(d / "dangling"), "dangling or looping link"),
    (lambda d: str(d / "loop"), "dangling or looping link"),
    (lambda d: "/proc/self/cache", "kernel file system"),
    (lambda d: "", "the path is empty"),
])
def test_unusable_cache_folders_are_one_line_before_any_game(tmp_path, capsys, make, words):
    (tmp_path / "file").write_text("x")
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    line = exits(tournament.main, tour("--cache", make(tmp_path)), capsys)
    assert line.startswith("python -m doudizhu_arena.tournament: error: --cache: cannot write in")
    assert words in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_cache_folder_is_refused(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert "is not writable" in exits(tournament.main, tour("--cache", str(locked / "c")), capsys)


def test_a_folder_where_a_cell_file_goes_is_refused_before_any_game(tmp_path, capsys, monkeypatch):
    cache = tournament.CellCache(str(tmp_path))
    os.mkdir(cache.path(cache.key("fixed_landlord", "random", "rule", 0, 4, 200)))
    monkeypatch.setattr(tournament, "play_cells", lambda *a, **k: pytest.fail("a game was played"))
    line = exits(tournament.main, tour("--cache", str(tmp_path)), capsys)
    assert "--cache: cannot write" in line and "it is a folder" in line


# -- 3. --overwrite never follows a link out of the run folder ------------------------------------


def _earlier_run(tmp_path):
    run = tmp_path / "runs" / "x"
    run.mkdir(parents=True)
    (run / "checkpoint.pt").write_bytes(b"earlier")
    mine = tmp_path / "my-checkpoints"
    mine.mkdir()
    (mine / "000000005000.pt").write_bytes(b"mine")
    return run, mine


def test_overwrite_refuses_a_linked_checkpoints_folder(tmp_path, capsys):
    from train.run import main

    run, mine = _earlier_run(tmp_path)
    os.symlink(mine, run / "checkpoints")
    line = exits(main, ["--config", TINY, "--out-dir", str(tmp_path / "runs"), "--run-name", "x",
                        "--overwrite", "--total-frames", "100"], capsys)
    assert "--overwrite:" in line and "is a link" in line and "my-checkpoints" in line
    assert (mine / "000000005000.pt").read_bytes() == b"mine"
    assert (run / "checkpoint.pt").read_bytes() == b"earlier"


def test_remove_inside_never_goes_through_links(tmp_path):
    run, mine = _earlier_run(tmp_path)
    os.symlink(mine, run / "checkpoints")
    os.symlink(mine / "000000005000.pt", run / "eval.json")
    paths = [run / "checkpoints" / "000000005000.pt", run / "eval.json", run / "checkpoint.pt"]
    assert remove_inside(run, paths) == [str(run / "checkpoint.pt")]
    assert (mine / "000000005000.pt").read_bytes() == b"mine" and os.path.islink(run / "eval.json")


def test_init_weights_among_the_files_overwrite_replaces_is_refused(tmp_path):
    from train.config import ConfigError, load_config
    from train.run import train

    run, _ = _earlier_run(tmp_path)
    cfg = load_config(TINY, {"out_dir": str(tmp_path / "runs"), "run_name": "x",
                             "init_weights": str(run / "checkpoint.pt")})
    with pytest.raises(ConfigError, match="init_weights: .* is a file this run writes"):
        train(cfg, overwrite=True)
    assert (run / "checkpoint.pt").read_bytes() == b"earlier"


# -- 4. Ctrl-C and a closed stdout ---------------------------------------------------------------


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def test_ctrl_c_in_a_tournament_is_one_line_saying_what_is_kept(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(tournament, "play_tournament", _interrupt)
    line = exits(tournament.main, tour("--cache", str(tmp_path / "c")), capsys, code=130)
    assert "interrupted by Ctrl-C: the finished cells are kept in" in line and "same command again" in line
    line = exits(tournament.main, tour("--no-cache"), capsys, code=130)
    assert "nothing kept (--no-cache)" in line


def test_ctrl_c_while_the_agents_load_is_one_line(capsys, monkeypatch):
    import agents.registry

    monkeypatch.setattr(agents.registry, "check_specs", _interrupt)
    for main, argv in ((tournament.main, tour("--no-cache")), (sprt.main, sprt_args())):
        assert "interrupted by Ctrl-C before the first game" in exits(main, argv, capsys, code=130)


def test_ctrl_c_in_an_sprt_is_one_line(capsys, monkeypatch):
    monkeypatch.setattr(sprt, "sequential_test", _interrupt)
    line = exits(sprt.main, sprt_args(), capsys, code=130)
    assert "interrupted by Ctrl-C: no decision, nothing written" in line and "run the same command" in line


class ClosedPipe(io.StringIO):
    """A stdout whose reader has gone (``| head -1``)."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize("which", ["tournament", "sprt"])
def test_a_closed_stdout_loses_no_json(tmp_path, monkeypatch, which):
    out = tmp_path / "r.json"
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    if which == "tournament":
        tournament.main(tour("--no-cache", "--json", str(out)))
    else:
        sprt.main(sprt_args("--fixed-landlord", "--h1", "0.5", "--chunk-size", "50", "--json", str(out)))
    assert json.loads(out.read_text())


def _wait_for_workers(pid: int, seconds: float = 90.0, poll: float = 0.2) -> None:
    """Until process ``pid`` has a child (its pool of game workers) or ``seconds`` pass, looking every
    ``poll`` seconds: a loaded machine can take longer than any fixed sleep to import and load the
    agents."""
    children = f"/proc/{pid}/task/{pid}/children"
    if not os.path.exists(children):  # no /proc: a fixed wait
        time.sleep(8)
        return
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(children) as f:
                if f.read().strip():
                    return
        except OSError:  # the process has ended: the assertions that follow say how
            return
        time.sleep(poll)


def _sigint_as_in_a_terminal() -> None:
    """In the child before it runs: SIGINT's default action, as a command started from a terminal has
    it (were the tests started as a background job, SIGINT would be ignored, and so in the command)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _long_tournament(tmp_path) -> subprocess.Popen:
    """The tournament command on two local game workers, long enough to be interrupted."""
    argv = ["--agents", "random", "rule", "--deals", "20000", "--chunk-size", "100", "--cache",
            str(tmp_path / "c"), "--no-progress", "--workers", "2"]
    return subprocess.Popen([sys.executable, "-m", "doudizhu_arena.tournament", *argv], cwd=ROOT,
                            env={**os.environ, "PYTHONWARNINGS": "ignore"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_as_in_a_terminal)


@pytest.mark.integration  # real processes and a real signal: make test-slow
def test_sigint_and_head_on_the_command_line(tmp_path):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = _long_tournament(tmp_path)
    _wait_for_workers(proc.pid)  # the games have started: a Ctrl-C before them says "nothing played"
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].endswith("run the same command again to continue from them")
    out = tmp_path / "s.json"
    command = (f"{sys.executable} -m doudizhu_arena.sprt --candidate rule --baseline random --fixed-landlord "
               f"--h1 0.5 --chunk-size 50 --json {out} | head -c 1")
    piped = subprocess.run(command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=120)
    assert "Traceback" not in piped.stderr and json.loads(out.read_text())["decision"] == "H1"


@pytest.mark.integration  # real processes and a real signal: make test-slow
@pytest.mark.parametrize("delay", [0.0, 0.02, 0.2])
def test_sigint_as_the_game_workers_start(tmp_path, delay):
    """Ctrl-C while the local pool is still starting: exit 130 with its one line, and no worker left
    behind. (Python's Pool interrupted in its constructor went on forking workers as the command
    exited; they held its output open, so the communicate() below timed out.)"""
    proc = _long_tournament(tmp_path)
    _wait_for_workers(proc.pid, poll=0.002)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].endswith("run the same command again to continue from them")


# -- 5. cache cells are checked as they are read ------------------------------------------------


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cells")
    tournament.play_tournament(["random", "rule"], 6, ["fixed_landlord"], seed=3, cache=str(folder),
                               bootstrap=0)
    return folder


def _set(data, name, value, at=0):
    data[name][at] = value


@pytest.mark.parametrize("edit, why", [
    (lambda d: _set(d, "score", float("nan")), "score holds a value that is not finite"),
    (lambda d: _set(d, "score", float("inf")), "not finite"),
    (lambda d: _set(d, "score", 1e308), "score holds a value that is not finite or beyond ±2**31 points"),
    (lambda d: _set(d, "score", 10**400), "int too large to convert to float"),
    (lambda d: _set(d, "score", None), "score holds a value that is not a number"),
    (lambda d: _set(d, "score", True), "not a number"),
    (lambda d: _set(d, "win", 7), "win holds a value that is not finite or outside [0, 1]"),
    (lambda d: _set(d, "win", -1), "outside [0, 1]"),
    (lambda d: _set(d, "win", 0.5), "win holds a share that 1 game(s) per deal cannot give"),
    (lambda d: d["score"].append(1.0), "score is not a list of 6 values, one per deal"),
    (lambda d: d["key"].update(seed=4), "it claims another cell's key"),
])
def test_a_forged_cell_is_played_again_and_named(cache_dir, tmp_path, capsys, edit, why):
    folder = tmp_path / "cells"
    folder.mkdir()
    names = sorted(os.listdir(cache_dir))
    for name in names:
        (folder / name).write_text((cache_dir / name).read_text())
    data = json.loads((folder / names[0]).read_text())
    edit(data)
    (folder / names[0]).write_text(json.dumps(data))
    again = tournament.play_tournament(["random", "rule"], 6, ["fixed_landlord"], seed=3, cache=str(folder),
                                       bootstrap=0)
    assert (again["played"], again["cached"]) == (1, 3)
    err = capsys.readouterr().err
    assert f"tournament cache: {folder / names[0]}: " in err and why in err
    assert "playing the cell again" in err
    clean = tournament.play_tournament(["random", "rule"], 6, ["fixed_landlord"], seed=3,
                                       cache=str(cache_dir), bootstrap=0)
    assert again["modes"] == clean["modes"]


# -- 6. the SPRT's error rates and hypotheses ------------------------------------------------------


@pytest.mark.parametrize("args, words", [
    (["--alpha", "0.6", "--beta", "0.6"], "--alpha + --beta must be below 1"),
    (["--alpha", "0.5", "--beta", "0.5"], "--alpha + --beta must be below 1"),
    (["--h0", "0.2", "--h1", "0.1"], "--h1 must be greater than h0"),
])
def test_sprt_bounds_that_cross_are_refused(args, words, capsys):
    assert words in exits(sprt.main, sprt_args(*args), capsys)


@pytest.mark.parametrize("kwargs, words", [
    ({"alpha": 0.6, "beta": 0.6}, "alpha + beta must be below 1"),
    ({"h0": "x"}, "h0 must be a finite number of points, got 'x'"),
    ({"h1": True}, "h1 must be a finite number"),
    ({"alpha": "0.1"}, "alpha must be a probability"),
])
def test_sprt_config_from_python_names_the_argument(kwargs, words):
    with pytest.raises(ValueError, match=words.replace("+", r"\+")):
        sprt.SPRTConfig(**kwargs)
    with pytest.raises(ValueError, match=words.replace("+", r"\+")):
        sprt.sequential_test("rule", "random", **kwargs)


@pytest.mark.parametrize("kwargs, words", [
    ({"workers": 0}, "workers must be an integer of at least 1, got 0"),
    ({"workers": 1.5}, "workers must be an integer"),
    ({"seed": -1}, "seed must be an integer in 0..2**63-1, got -1"),
])
def test_sequential_test_checks_its_arguments(kwargs, words):
    with pytest.raises(ValueError, match=words.replace("*", r"\*").replace(".", r"\.")):
        sprt.sequential_test("rule", "random", **kwargs)


# -- 7. search specs -------------------------------------------------------------------------------


@pytest.mark.parametrize("spec, key", [("search:rule,worlds=4,worlds=8", "worlds"),
                                       ("search:rule,rollout=rule,rollout=random", "rollout")])
def test_a_search_option_given_twice_is_refused(spec, key):
    with pytest.raises(SearchConfigError, match=f"search option '{key}' is given twice"):
        parse_spec(spec)


def test_the_time_limit_holds_when_one_round_would_exceed_it():
    agent = make_agent("search:rule,worlds=4096,samples=4096,time=0.05", STANDARD)
    state = engine.reset(3, 1, STANDARD)
    while state.phase[0] != engine.PLAY:
        state = engine.step(state, make_agent("rule").act(state))
    start = time.perf_counter()
    agent.act(state)
    assert agent.searched == 1 and agent.worlds_rolled < 4096
    assert time.perf_counter() - start < 1.0  # 1.8 s before: a first round of 1,024 worlds


def test_rollout_can_name_a_checkpoint_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.makedirs("runs/t1")
    save_checkpoint("runs/t1/checkpoint.pt", small_model(STANDARD), frames=0, updates=0)
    assert split_rollout("dmc:runs/t1/checkpoint.pt") == ["dmc:runs/t1/checkpoint.pt"]
    assert split_rollout("rule/dmc:runs/t1/checkpoint.pt/random") == ["rule", "dmc:runs/t1/checkpoint.pt",
                                                                       "random"]
    assert split_rollout("rule/dmc:a.pt/random") == ["rule", "dmc:a.pt", "random"]
    agent = make_agent("search:rule,rollout=dmc:runs/t1/checkpoint.pt", STANDARD)
    assert len({id(p) for p in agent.policies}) == 1 and type(agent.policies[0]).__name__ == "DMCAgent"
    with pytest.raises(ValueError, match="no checkpoint file at 'runs/t2/checkpoint.pt'"):
        make_agent("search:rule,rollout=dmc:runs/t2/checkpoint.pt", STANDARD)


# -- 8. seeds and bootstrap replicates ----------------------------------------------------------------


@pytest.mark.parametrize("main, argv, words", [
    (tournament.main, tour("--seed", "-1"), "--seed must be an integer in 0..2**63-1, got -1"),
    (sprt.main, sprt_args("--seed", "-1"), "--seed must be an integer in 0..2**63-1, got -1"),
    (tournament.main, tour("--bootstrap", "1000000000"),
     "--bootstrap must be in 0..100,000, got 1,000,000,000"),
])
def test_seed_and_bootstrap_out_of_range(tmp_path, capsys, main, argv, words):
    assert words in exits(main, argv + (["--cache", str(tmp_path / "c")] if main is tournament.main else []),
                          capsys)


# -- 9. FIFOs and other files that are not regular ----------------------------------------------------


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "landlord.ckpt"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("spec, words", [
    ("sb3:{fifo}", "SB3 zip: cannot read"),
    ("sb3-pickle:{fifo}", "SB3 zip: cannot read"),
    ("douzero:{fifo}", "DouZero landlord checkpoint: cannot read"),
    ("douzero:{folder}", "DouZero landlord checkpoint: cannot read"),
    ("{fifo}", "DouZero landlord checkpoint: cannot read"),
    ("dmc:{fifo}", "cannot read the checkpoint"),
])
def test_agent_files_that_are_fifos_are_refused_at_once(tmp_path, fifo, capsys, spec, words):
    pytest.importorskip("sb3_contrib")
    spec = spec.format(fifo=fifo, folder=tmp_path)
    with no_hang():
        line = exits(tournament.main, tour("--agents", "rule", spec, "--cache", str(tmp_path / "c")), capsys)
    assert words in line and "it is a FIFO (named pipe); expected a" in line


def test_records_still_come_from_a_pipe(tmp_path, capsys):
    state = engine.reset(0, 2, STANDARD)
    while not state.done.all():
        state = engine.step(state, make_agent("rule").act(state))
    path = tmp_path / "games.jsonl"
    os.mkfifo(path)
    text = "".join(json.dumps(r) + "\n" for r in records.records_from_state(state))
    writer = threading.Thread(target=lambda: path.write_text(text))
    writer.start()
    with no_hang():
        assert replay.main([str(path), "--list"]) == 0
    writer.join()
    assert capsys.readouterr().out.count("game ") == 2


# -- 10. sizes bounded before reading or allocating -------------------------------------------------


def test_dev_zero_is_refused_as_an_agent_file_and_as_records(capsys):
    pytest.importorskip("sb3_contrib")
    line = exits(tournament.main, tour("--agents", "rule", "sb3:/dev/zero", "--no-cache"), capsys)
    assert "SB3 zip: cannot read '/dev/zero': it is a character device; expected a regular file" in line
    assert replay.main(["/dev/zero"]) == 1
    assert "records file: cannot read '/dev/zero': it is a character device" in capsys.readouterr().err


def test_an_endless_line_of_records_is_bounded(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text("x" * (records.MAX_LINE_BYTES + 10))
    with pytest.raises(records.RecordError, match="line 1: longer than 1,048,576 characters"):
        records.load_records(path)


def _sb3_zip(path, data: dict, weights: bytes = b"") -> str:
    from doudizhu_env.spaces import observation_space

    n = observation_space("standard")["action_mask"].shape[0]
    settings = {"observation_space": {":type:": "gymnasium.spaces.dict.Dict"}, "action_space": {"n": n},
                **data}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("data", json.dumps(settings))
        z.writestr("policy.pth", weights)
    return str(path)


def test_an_sb3_zip_that_inflates_beyond_the_bound_is_refused(tmp_path, monkeypatch):
    pytest.importorskip("sb3_contrib")
    from agents import sb3_adapter

    monkeypatch.setattr(sb3_adapter, "MAX_MEMBER_BYTES", {"data": 10_000, "policy.pth": 100_000})
    path = _sb3_zip(tmp_path / "bomb.zip", {}, bytes(1_000_000))
    assert os.path.getsize(path) < 5_000
    with pytest.raises(ValueError, match="'policy.pth' inflates to 1,000,000 bytes; expected at most 100,"):
        sb3_adapter.load_policy(path)
    with pytest.raises(InputPathError, match="holds more than 10 bytes"):
        read_bounded(io.BytesIO(bytes(1000)), 10, "x")  # a member whose header lies is cut all the same


@pytest.mark.parametrize("arch", [[10**9], [-5], [64] * 100, {"pi": [64], "vf": [2**40]}, "big"])
def test_an_sb3_net_arch_of_absurd_sizes_is_refused(tmp_path, arch):
    pytest.importorskip("sb3_contrib")
    from agents.sb3_adapter import load_policy

    path = _sb3_zip(tmp_path / "arch.zip", {"policy_kwargs": {"net_arch": arch}})
    with pytest.raises(ValueError, match="net_arch is .*; expected at most 16 layer widths in 1..4,096"):
        load_policy(path)


def _edited_checkpoint(tmp_path, **config):
    path = tmp_path / "edited.pt"
    save_checkpoint(str(path), small_model(STANDARD), frames=0, updates=0)
    data = torch.load(path, weights_only=True)
    data["model_config"].update(config)
    del data["digest"]
    torch.save(data, path)
    return str(path)


def test_a_checkpoint_asking_for_100000_head_layers_is_refused_at_once(tmp_path):
    path = _edited_checkpoint(tmp_path, head_layers=100_000, head_hidden=1)
    start = time.perf_counter()
    with pytest.raises(CheckpointError, match=r"model.head_layers must be an integer in 1..32, got 100000"):
        load_model(path)
    assert time.perf_counter() - start < 5


def test_weights_are_checked_before_the_model_is_built(tmp_path):
    path = _edited_checkpoint(tmp_path, head_layers=20)
    with pytest.raises(CheckpointError) as err:
        load_model(path)
    assert "weights do not fit the model: it lacks weights" in str(err.value) and len(str(err.value)) < 600


def test_douzero_prefix_is_not_handed_to_the_dmc_loader(tmp_path):
    path = tmp_path / "X.pt"
    save_checkpoint(str(path), small_model(STANDARD), frames=0, updates=0)
    with pytest.raises(FileNotFoundError, match=f"no DouZero checkpoints .* at '{path}'"):
        make_agent(f"douzero:{path}")


# -- 11. replays and configs -----------------------------------------------------------------------


def _finished_record(rules) -> dict:
    state = engine.reset(0, 1, rules)
    while not state.done[0]:
        state = engine.step(state, make_agent("rule").act(state))
    return records.records_from_state(state)[0]


def test_replay_refuses_more_redeals_than_the_rules_allow(tmp_path, capsys):
    rec = _finished_record(STANDARD)
    rec["redeals"] = STANDARD.redeal_limit + 1
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    assert replay.main([str(path)]) == 1
    assert "'redeals' must be an int 0..100 (the rules' redeal_limit), got 101" in capsys.readouterr().err
    fixed = _finished_record(Rules.preset("standard", bidding=False))
    fixed["redeals"] = 1
    with pytest.raises(records.RecordError, match=r"0..0 \(rules without bidding never redeal\)"):
        records.check_record(fixed)


@pytest.mark.parametrize("overrides, words", [
    ({"opponents": ["nobody"], "opponent_share": 0.0}, "opponents: agent 'nobody': unknown agent"),
    ({"warm_start_agent": "nobody", "warm_start_frames": 0}, "warm_start_agent: agent 'nobody'"),
    ({"eval_opponents": ["nobody"], "eval_deals": 0}, "eval_opponents: agent 'nobody'"),
])
def test_every_spec_a_config_names_is_checked_even_unused(tmp_path, overrides, words):
    from train.config import ConfigError, load_config
    from train.run import train

    cfg = load_config(TINY, {"out_dir": str(tmp_path), **overrides})
    with pytest.raises(ConfigError, match=words):
        train(cfg)
    assert not os.listdir(tmp_path)



def test_a_fifo_as_config_or_deals_file_is_refused(tmp_path, fifo, capsys):
    from doudizhu_arena.evaluate import main
    from train.config import ConfigError, load_config

    with no_hang(), pytest.raises(ConfigError, match="cannot read the config file .*: it is a FIFO"):
        load_config(str(fifo))
    with no_hang():
        line = exits(main, ["--landlord", "rule", "--farmers", "random", "--deals", str(fifo)], capsys)
    assert "deals file: cannot read" in line and "it is a FIFO (named pipe)" in line
