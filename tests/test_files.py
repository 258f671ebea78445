"""Safe with files: outputs checked before the work, atomic writes, appends on a fresh line, no silent
overwrite of a run or a checkpoint (``doudizhu_env.files`` and the commands that write files)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from doudizhu_env import engine, records
from doudizhu_env.files import OutputPathError, append_text, atomic_write, check_output, output_problem


@pytest.fixture
def some_file(tmp_path):
    path = tmp_path / "existing.txt"
    path.write_text("keep me\n")
    return path


@pytest.mark.parametrize("make, problem", [
    (lambda d: "", "the path is empty"),
    (lambda d: str(d), "it is a folder"),
    (lambda d: "/dev/null", "it exists and is not a regular file"),
    (lambda d: str(d / "missing" / "x.json"), "does not exist"),
    (lambda d: str(d / "existing.txt" / "x.json"), "does not exist"),  # under a regular file
    (lambda d: "/proc/x.pt", "kernel file system"),
    (lambda d: "a\0b", "NUL"),
])
def test_unwritable_outputs_are_named(tmp_path, some_file, make, problem):
    path = make(tmp_path)
    assert problem in output_problem(path)
    with pytest.raises(OutputPathError, match="out: cannot write .*expected a file path"):
        check_output(path, "out")


def test_inputs_and_existing_files(tmp_path, some_file):
    assert output_problem(some_file) is None
    assert output_problem(some_file, overwrite=False) == "it exists (this command does not overwrite files)"
    assert output_problem(str(tmp_path / "." / "existing.txt"), inputs=[some_file]) == \
        "it is an input of this command"
    check_output(None)  # an option not given


def test_atomic_write_leaves_the_old_file_on_error(tmp_path, some_file):
    class Boom(str):
        def encode(self, *a):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        atomic_write(some_file, Boom("x"))
    assert some_file.read_text() == "keep me\n"
    assert os.listdir(tmp_path) == ["existing.txt"]  # no temporary file left
    atomic_write(some_file, "new\n")
    assert some_file.read_text() == "new\n"


def test_append_starts_on_a_fresh_line(tmp_path):
    path = tmp_path / "log.jsonl"
    append_text(path, "a\n")
    path.write_text(path.read_text() + '{"torn":')  # a write cut off mid-line
    append_text(path, "b\n")
    assert path.read_text().splitlines() == ["a", '{"torn":', "b"]


def _recs(n):
    state = engine.reset(np.random.default_rng(0), n)
    rng = np.random.default_rng(1)
    while not state.done.all():
        state = engine.step(state, engine.sample_legal(state, rng))
    return records.records_from_state(state, players=["a", "b", "c"], meta={"chunk": 0})


def test_records_with_numpy_metadata_and_failures_leave_the_file(tmp_path):
    path = tmp_path / "games.jsonl"
    assert records.save_records(_recs(12), path) == 12
    recs = _recs(3)
    recs[1]["meta"]["seed"] = np.int64(7)  # numpy numbers are written as numbers
    assert records.save_records(recs, path) == 3
    assert json.loads(path.read_text().splitlines()[1])["meta"]["seed"] == 7
    before = path.read_text()
    bad = _recs(3)
    bad[2]["meta"]["oops"] = object()
    with pytest.raises(TypeError, match="not JSON"):
        records.save_records(bad, path)
    with pytest.raises(TypeError, match="not JSON"):
        records.save_records(bad, path, append=True)
    assert path.read_text() == before  # nothing written, nothing lost


def test_record_appends_after_a_torn_line(tmp_path):
    path = tmp_path / "games.jsonl"
    records.save_records(_recs(2), path)
    path.write_text(path.read_text() + '{"format": "doudiz')
    records.save_records(_recs(1), path, append=True)
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[-1])["format"] == records.FORMAT


# -- the commands -----------------------------------------------------------------------------


def test_evaluate_checks_outputs_before_playing(tmp_path, capsys):
    from doudizhu_arena.evaluate import main

    for option, path in (("--json", str(tmp_path)), ("--record", "/proc/x.jsonl"),
                         ("--save-deals", str(tmp_path / "no" / "d.json"))):
        with pytest.raises(SystemExit) as err:
            main(["--landlord", "random", "--farmers", "random", "--games", "5", option, path])
        assert err.value.code == 2
        out = capsys.readouterr()
        assert f"{option}: cannot write" in out.err and out.err.count("\n") == 1
        assert "line-up" not in out.out  # no game was played


def test_evaluate_and_play_both_append_records(tmp_path):
    from doudizhu_arena.evaluate import main

    path = tmp_path / "games.jsonl"
    for _ in range(2):
        main(["--landlord", "random", "--farmers", "random", "--games", "4", "--record", str(path),
              "--no-progress"])
    assert len(path.read_text().splitlines()) == 2 * 4 * 3  # 4 deals, 3 seatings, twice


def test_play_refuses_a_record_it_cannot_write_at_start(capsys):
    from doudizhu_table import terminal

    argv = ["--opponents", "rule", "rule", "--seed", "1", "--record", "/nonexistent/dir/x.jsonl"]
    assert terminal.main(argv) == 2
    err = capsys.readouterr().err
    assert "--record: cannot write '/nonexistent/dir/x.jsonl'" in err and err.count("\n") == 1


@pytest.fixture
def checkpoint(tmp_path):
    pytest.importorskip("torch")
    from helpers import small_model

    from agents.checkpoint import save_checkpoint

    path = tmp_path / "ck.pt"
    save_checkpoint(str(path), small_model(), frames=5, updates=1)
    return path


@pytest.mark.parametrize("out, message", [
    ("{ck}", "it is an input of this command"),
    ("{dir}", "it is a folder"),
    ("/dev/null", "it exists and is not a regular file"),
    ("{existing}", r"it exists \(this command does not overwrite files\).*\(--force replaces it\)"),
    ("", "the path is empty"),
    ("/proc/x.pt", "kernel file system"),
    ("{existing}/x.pt", "does not exist"),
])
def test_export_refuses_outputs_that_would_destroy_something(tmp_path, checkpoint, some_file, capsys,
                                                             out, message):
    from train.export import main

    before = checkpoint.read_bytes()
    with pytest.raises(SystemExit) as err:
        main([str(checkpoint), out.format(ck=checkpoint, dir=tmp_path, existing=some_file)])
    assert err.value.code == 2
    line = capsys.readouterr().err
    assert line.count("\n") == 1 and "out: cannot write" in line
    assert __import__("re").search(message, line), line
    assert checkpoint.read_bytes() == before and some_file.read_text() == "keep me\n"
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def test_export_force_replaces_a_file(tmp_path, checkpoint, some_file):
    from agents.checkpoint import read_checkpoint
    from train.export import main

    main([str(checkpoint), str(some_file), "--force"])
    assert read_checkpoint(str(some_file))["frames"] == 5


def _tiny(tmp_path, **over):
    pytest.importorskip("torch")
    from helpers import TINY

    from train.config import load_config

    return load_config(TINY, {"out_dir": str(tmp_path), "run_name": "r", "total_frames": 300,
                              "eval_deals": 0, **over})


def test_a_second_run_with_the_same_name_is_refused(tmp_path):
    from agents.checkpoint import read_checkpoint
    from train.config import ConfigError
    from train.run import train

    train(_tiny(tmp_path))
    path = str(tmp_path / "r" / "checkpoint.pt")
    first = read_checkpoint(path)["frames"]
    with pytest.raises(ConfigError, match="holds the checkpoint of an earlier run.*--resume.*--overwrite"):
        train(_tiny(tmp_path))
    assert read_checkpoint(path)["frames"] == first
    train(_tiny(tmp_path, total_frames=first + 300), resume=True)
    assert read_checkpoint(path)["frames"] > first
    train(_tiny(tmp_path), overwrite=True)
    assert read_checkpoint(path)["frames"] < first + 300


def test_overwrite_replaces_all_of_the_earlier_runs_outputs_and_nothing_else(tmp_path):
    """--overwrite starts the run again: the earlier run's event files and kept checkpoints go (TensorBoard
    would draw both runs' curves as one), a file of the user's in the folder stays; a bad init_weights
    file stops the run before anything is removed."""
    from agents.checkpoint import CheckpointError
    from train.run import train
    from train.run_folder import run_outputs

    kept = {"keep_checkpoints": True, "checkpoint_minutes": 0, "eval_deals": 2}
    train(_tiny(tmp_path, total_frames=600, **kept))
    run_dir = tmp_path / "r"
    mine = run_dir / "notes.txt"
    mine.write_text("mine")
    first = run_outputs(str(run_dir))
    assert {os.path.basename(p) for p in first} >= {"checkpoint.pt", "eval.json"}
    assert any("tfevents" in p for p in first) and any("checkpoints" in p for p in first)
    with pytest.raises(CheckpointError):
        train(_tiny(tmp_path, init_weights=str(mine), **kept), overwrite=True)
    assert run_outputs(str(run_dir)) == first
    train(_tiny(tmp_path, total_frames=300, **kept), overwrite=True)
    second = run_outputs(str(run_dir))
    assert not set(first) & {p for p in second if "tfevents" in p or "checkpoints" in p}
    assert sum("tfevents" in p for p in second) == sum("tfevents" in p for p in first)  # this run's only
    assert mine.read_text() == "mine"


def test_run_folder_problems_before_any_work(tmp_path, some_file, capsys):
    from train.config import ConfigError
    from train.run import main, train

    with pytest.raises(ConfigError, match="existing.txt. is a file"):
        train(_tiny(some_file))
    with pytest.raises(ConfigError, match="kernel file system"):
        train(_tiny("/proc/runs"))
    with pytest.raises(ConfigError, match="run_name must be a plain folder name"):
        _tiny(tmp_path, run_name="a\0b")
    with pytest.raises(SystemExit) as err:
        main(["--config", "configs/tiny.yaml", "--out-dir", str(tmp_path), "--resume", "--overwrite"])
    assert err.value.code == 2 and "exclusive" in capsys.readouterr().err


# -- inputs: one check for every command -----------------------------------------------------------


def test_inputs_that_are_not_regular_files_are_named(tmp_path, some_file):
    from doudizhu_env.files import InputPathError, check_input, input_problem

    os.mkfifo(tmp_path / "pipe")
    assert input_problem(tmp_path / "pipe") == "it is a FIFO (named pipe)"
    assert input_problem(tmp_path / "pipe", streams=True) is None  # records may come from a pipe
    assert input_problem("/dev/zero", streams=True) == "it is a character device"
    assert input_problem(tmp_path) == "it is a folder"
    assert input_problem(tmp_path / "nope") == "no such file"
    assert input_problem(some_file, max_bytes=3) == "it holds 8 bytes, more than the 3 allowed"
    assert check_input(some_file, "x") == str(some_file)
    with pytest.raises(InputPathError, match=r"^--deals: cannot read '.*pipe': it is a FIFO \(named pipe\); "
                                             "expected a regular file$"):
        check_input(tmp_path / "pipe", "--deals")


def test_outputs_are_checked_together(tmp_path, some_file):
    from doudizhu_env.files import check_folder, check_outputs

    check_outputs({"--json": tmp_path / "a.json", "--markdown": tmp_path / "a.md", "--heatmap": None})
    with pytest.raises(OutputPathError, match="--markdown: .*it is also the file of --json"):
        check_outputs({"--json": tmp_path / "a.json", "--markdown": tmp_path / "." / "a.json"})
    with pytest.raises(OutputPathError, match="--json: .*it is an input of this command"):
        check_outputs({"--json": some_file}, inputs=[some_file])
    check_folder(tmp_path / "new" / "deeper")
    with pytest.raises(OutputPathError, match="--cache: cannot write in .*existing.txt' on its way is a"):
        check_folder(some_file / "cells", "--cache")
    assert not (tmp_path / "new").exists()  # checking makes nothing
