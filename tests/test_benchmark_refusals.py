"""The benchmark commands refuse what the judges refuse, before any work, in one line (exit 2).

Each case is the command a user types (``python -m benchmarks.X ...``, called as its ``main``):
agent specs, seeds, workers, deal counts and other sizes, outputs that would replace an input; no
part runs before every part's agents are checked, nothing is printed but the one line, and files
on disk are unchanged (hashed before and after). The JSON the commands write is strict JSON.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("yaml")

from helpers import small_model  # noqa: E402

from agents.checkpoint import save_checkpoint  # noqa: E402

BIG = str(10**12)
ROOT = Path(__file__).resolve().parent.parent


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(module: str, argv: list[str], capsys, monkeypatch=None) -> str:
    """Run ``python -m benchmarks.<module> argv`` (its ``main``): it must exit 2 with one line on
    stderr naming the command and nothing on stdout; that line."""
    main = importlib.import_module(f"benchmarks.{module}").main
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"python -m benchmarks.{module}: error: "), lines[0]
    return lines[0]


@pytest.fixture
def checkpoint(tmp_path) -> Path:
    path = tmp_path / "A.pt"
    save_checkpoint(str(path), small_model(seed=3), frames=0, updates=0)
    return path


@pytest.fixture
def no_part_runs(monkeypatch):
    """benchmarks.pretrained's parts fail the test if any of them starts."""
    import benchmarks.pretrained as pretrained

    for name in ("run_one_seat", "run_douzero", "run_paired"):
        monkeypatch.setattr(pretrained, name, lambda args, name=name: pytest.fail(f"{name} ran"))


UNKNOWN = "agent 'nosuch': unknown agent 'nosuch'; expected one of"


@pytest.mark.parametrize("argv, message", [
    (["--agent", "nosuch"], UNKNOWN),
    (["--agent", "rule", "--reference", "nosuch", "--parts", "paired"], UNKNOWN),
    (["--agent", "rule", "--douzero-opponents", "random", "nosuch", "--parts", "douzero"], UNKNOWN),
    (["--agent", "rule", "--opponents", "random", "nosuch", "--parts", "one_seat"], UNKNOWN),
    # the first part would be fine: the second's bad opponent is refused before it runs
    (["--agent", "rule", "--parts", "paired", "douzero", "--douzero-opponents", "nosuch", "--deals", "2"],
     UNKNOWN),
    (["--agent", "rule", "--douzero-opponents", "rule", "--parts", "douzero"],
     "--douzero-opponents: 'rule' is the --agent itself"),
    (["--seed", "-1"], "--seed must be an integer in 0..2**63-1, got -1"),
    (["--seed", str(2**64)], f"--seed must be an integer in 0..2**63-1, got {2**64}"),
    (["--workers", "0"], "--workers must be at least 1, got 0"),
    (["--deals", "1"], "--deals must be at least 2, got 1"),
    (["--deals", BIG], "--deals must be at most 1,000,000 (every deal is made before the first game"),
    (["--deals", BIG, "--parts", "douzero"], "--deals must be at most 1,000,000"),
])
def test_model_card_benchmark_refuses_before_any_part(argv, message, capsys, no_part_runs, tmp_path):
    before = _digests(tmp_path)
    line = refused("pretrained", [*argv, "--json", str(tmp_path / "card.json")], capsys)
    assert message in line
    assert _digests(tmp_path) == before  # no report written


def test_model_card_benchmark_never_writes_its_report_over_the_agents_checkpoint(checkpoint, capsys,
                                                                                 no_part_runs):
    before = _digests(checkpoint.parent)
    line = refused("pretrained", ["--parts", "paired", "--deals", "2", "--agent", f"dmc:{checkpoint}",
                                  "--json", str(checkpoint)], capsys)
    assert line.endswith(f"--json: cannot write {str(checkpoint)!r}: it is an input of this command; "
                         "expected another file (an output never replaces an input)")
    assert _digests(checkpoint.parent) == before


@pytest.mark.parametrize("module, argv, message", [
    ("arena", ["--dmc", "nosuch"], UNKNOWN),
    ("arena", ["--games", "1"], "--games must be at least 2, got 1"),
    ("arena", ["--games", BIG], "--games must be at most 1,000,000"),
    ("arena", ["--throughput-deals", "0"], "--throughput-deals must be at least 1, got 0"),
    ("arena", ["--workers", "0"], "--workers must be at least 1, got 0"),
    ("arena", ["--seed", "-1"], "--seed must be an integer in 0..2**63-1"),
    ("bidding", ["--agent", "rule", "--opponent", "nosuch"], UNKNOWN),
    ("bidding", ["--agent", "nosuch"], UNKNOWN),
    ("bidding", ["--rules", "nosuch"], "unknown rules preset 'nosuch'"),
    ("bidding", ["--deals", BIG], "--deals must be at most 100,000 (the deals are played at once"),
    ("bidding", ["--seed", str(2**64)], "--seed must be an integer in 0..2**63-1"),
    ("bidding", ["--agent", "rule", "--deals", "3"], "--agent must be a DMC agent"),
    ("hand_head", ["--agent", "nosuch"], UNKNOWN),
    ("hand_head", ["--agent", "rule", "--games", "0"], "--games must be at least 1, got 0"),
    ("hand_head", ["--agent", "rule", "--steps", BIG], "--steps must be at most 100,000"),
    ("hand_head", ["--agent", "rule", "--epsilon", "nan"], "--epsilon must be a probability in 0..1"),
    ("hand_head", ["--agent", "rule", "--seed", "-1"], "--seed must be an integer in 0..2**63-1"),
    ("learning", ["--opponents", "rule", "nosuch"], UNKNOWN),
    ("learning", ["--minutes", "10", "nan"], "--minutes must be a finite number above 0, got nan"),
    ("learning", ["--deals", "0"], "--deals must be at least 2, got 0"),
    ("learning", ["--workers", "0"], "--workers must be at least 1, got 0"),
    ("learning", ["--seed", "-1"], "--seed must be an integer in 0..2**63-1"),
    ("ablation", ["--minutes", "-1"], "--minutes must be a finite number above 0, got -1.0"),
    ("ablation", ["--deals", BIG], "--deals must be at most 1,000,000"),
    ("ablation", ["--eval-workers", "0"], "--eval-workers must be at least 1, got 0"),
    ("ablation", ["--actors", "-1"], "--actors must be at least 0, got -1"),
    ("ablation", ["--seed", str(2**63 - 1)], "--seed must be at most"),
    ("search", ["--base", "nosuch"], "unknown agent 'nosuch'"),
    ("search", ["--opponent", "nosuch"], UNKNOWN),
    ("search", ["--rollout", "nosuch"], "nosuch"),
    ("search", ["--budgets", "0x8x64"], "worlds"),
    ("search", ["--deals", BIG], "--deals must be at most 1,000,000"),
    ("search", ["--workers", "0"], "--workers must be at least 1, got 0"),
    ("search", ["--seed", "-1"], "--seed must be an integer in 0..2**63-1"),
    ("search", ["--rules", "nosuch"], "unknown rules preset 'nosuch'"),
    ("engine", ["--seconds", "nan"], "--seconds must be a finite number above 0, got nan"),
    ("engine", ["--repeats", "0"], "--repeats must be at least 1, got 0"),
    ("engine", ["--batch", "64", BIG], "--batch must be at most 1,000,000"),
    ("env", ["--seconds", "0"], "--seconds must be a finite number above 0, got 0.0"),
    ("env", ["--batch", "0"], "--batch must be at least 1, got 0"),
    ("env", ["--mask-batches", "1024,x"], "--mask-batches must be comma-separated whole numbers"),
    ("rule_agent", ["--games", BIG], "--games must be at most 20,000"),
    ("rule_agent", ["--batch", "0"], "--batch must be at least 1, got 0"),
    ("rule_agent", ["--seed", "-1"], "--seed must be an integer in 0..2**63-1"),
    ("training", ["--seconds", "inf"], "--seconds must be a finite number above 0, got inf"),
    ("training", ["--actors", "1", "0"], "--actors must be at least 1, got 0"),
    ("training", ["--config", "nosuch.yaml"], "nosuch.yaml"),
    ("web_load", ["--clients", "0"], "--clients must be at least 1, got 0"),
    ("web_load", ["--clients", "1000"], "--clients must be at most 26 (they all come from one address"),
    ("web_load", ["--opponents", "rule", "nosuch", "--source", str(ROOT)], UNKNOWN),
    ("web_load", ["--source", "."], "--source '.' is not a checkout of this project"),
])
def test_benchmark_commands_refuse_bad_options_before_any_work(module, argv, message, capsys, tmp_path,
                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)  # whatever a command would write by default lands here
    extra = ["--out-dir", str(tmp_path)] if module == "ablation" else []
    line = refused(module, [*argv, *extra], capsys)
    assert message in line, line
    assert _digests(tmp_path) == {}


def _search_json(path: Path) -> None:
    path.write_text(json.dumps({"base": "rule", "rollout": None, "opponent": "rule", "deals": 2,
                                "bidding": False, "seed": 0, "rows": []}))


@pytest.mark.parametrize("module, argv", [
    ("arena", ["--dmc", "dmc:{ckpt}", "--out", "{ckpt}"]),
    ("bidding", ["--agent", "dmc:{ckpt}", "--json", "{ckpt}"]),
    ("hand_head", ["--agent", "dmc:{ckpt}", "--json", "{ckpt}"]),
    ("learning", ["--opponents", "dmc:{ckpt}", "--json", "{ckpt}"]),
    ("learning", ["--run", "{dir}", "--json", "{dir}/checkpoints/k.pt"]),
    ("learning", ["--run", "{dir}", "--plot", "{dir}/events.csv"]),
    ("search", ["--base", "dmc:{ckpt}", "--json", "{ckpt}"]),
    ("search", ["--merge", "{dir}/a.json", "{dir}/b.json", "--json", "{dir}/b.json"]),
    ("search", ["--merge", "{dir}/a.json", "--plot", "{dir}/a.json"]),
    ("training", ["--config", "{dir}/c.yaml", "--json", "{dir}/c.yaml"]),
    ("web_load", ["--opponents", "dmc:{ckpt}", "--json", "{ckpt}", "--source", str(ROOT)]),
])
def test_benchmark_outputs_never_replace_an_input(module, argv, checkpoint, capsys, tmp_path):
    (tmp_path / "checkpoints").mkdir()
    save_checkpoint(str(tmp_path / "checkpoints" / "k.pt"), small_model(seed=3), frames=0, updates=0)
    (tmp_path / "events.csv").write_text("frames,minutes\n")
    _search_json(tmp_path / "a.json")
    _search_json(tmp_path / "b.json")
    Path(tmp_path / "c.yaml").write_text("total_frames: 1000\n")
    before = _digests(tmp_path)
    argv = [a.format(ckpt=checkpoint, dir=tmp_path) for a in argv]
    line = refused(module, argv, capsys)
    assert "it is an input of this command; expected another file" in line, line
    assert _digests(tmp_path) == before


def test_ablation_never_writes_its_rows_where_a_variants_training_replaces_them(tmp_path, capsys):
    line = refused("ablation", ["--variants", "default", "--out-dir", str(tmp_path), "--json",
                                str(tmp_path / "ablation-default" / "rows.json")], capsys)
    assert "--json: cannot write" in line and "inside a variant's run folder" in line
    assert _digests(tmp_path) == {}


def test_learning_with_train_never_writes_its_rows_into_the_run_it_trains(tmp_path, capsys):
    line = refused("learning", ["--train", "--run", str(tmp_path / "run"), "--json",
                                str(tmp_path / "run" / "rows.json")], capsys)
    assert "inside the --run folder that --train writes" in line
    assert _digests(tmp_path) == {}


def test_search_merge_refuses_a_file_that_is_not_its_json(tmp_path, capsys):
    (tmp_path / "other.json").write_text("[1, 2]")
    line = refused("search", ["--merge", str(tmp_path / "other.json"), "--json", str(tmp_path / "m.json")],
                   capsys)
    assert "--merge" in line and "is not a --json file of benchmarks.search" in line
    assert not (tmp_path / "m.json").exists()


# -- the peers' command runs alone in the peers' interpreter: its own checks, the same lines ------


@pytest.mark.parametrize("argv, message", [
    (["--seconds", "0"], "--seconds must be a finite number above 0"),
    (["--repeats", "0"], "--repeats must be at least 1, got 0"),
    (["--games", "0"], "--games must be at least 1, got 0"),
    (["--seed", "-1"], "--seed must be an integer in 0..4294967293"),
    (["--json", "{dir}"], "--json: cannot write"),
    (["--json", "{dir}/missing/out.json"], "--json: cannot write"),
    (["--python", "{dir}/py", "--json", "{dir}/py"], "it is --python, an input of this command"),
])
def test_peer_benchmark_refuses_bad_options_before_any_run(argv, message, tmp_path):
    (tmp_path / "py").write_text("#!/bin/sh\n")
    before = _digests(tmp_path)
    argv = [a.format(dir=tmp_path) for a in argv]
    run = subprocess.run([sys.executable, "-m", "benchmarks.peers", *argv], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m benchmarks.peers: error: "), run.stderr
    assert message in lines[0]
    assert _digests(tmp_path) == before


# -- strict JSON ---------------------------------------------------------------------------------


def _strict(text: str):
    def refuse(name):
        raise AssertionError(f"{name} in the JSON")
    return json.loads(text, parse_constant=refuse)


def test_benchmark_json_holds_no_nan_or_infinity(tmp_path):
    """An undefined figure (a rate over no time, a mean over no games) is written as null."""
    import numpy as np

    from benchmarks import write_json

    path = tmp_path / "figures.json"
    write_json(str(path), {"rate": math.inf, "mean": float("nan"), "ci": np.float64("nan"),
                           "rows": [(1.5, -math.inf)], "ok": 0.25, "n": 3})
    assert _strict(path.read_text()) == {"rate": None, "mean": None, "ci": None, "rows": [[1.5, None]],
                                         "ok": 0.25, "n": 3}
    assert sorted(os.listdir(tmp_path)) == ["figures.json"]  # written atomically: no temporary left


def test_model_card_benchmark_writes_strict_json(tmp_path, capsys):
    from benchmarks.pretrained import main

    out = tmp_path / "card.json"
    main(["--agent", "rule", "--opponents", "random", "--parts", "one_seat", "paired", "--reference",
          "random", "--deals", "2", "--workers", "1", "--json", str(out)])
    table = capsys.readouterr().out
    assert _strict(out.read_text())["paired"]["reference"] == "random"
    markdown = [line for line in table.splitlines() if line.startswith("|")]
    assert markdown and not any("nan" in line for line in markdown)  # no interval over one deal: words
    assert "(one deal: no interval)" in table
