"""A search agent's rollouts by role may name checkpoints by paths with '/' in them
(``search:rule,rollout=rule/random/dmc:/abs/ck.pt``); what cannot be read as one spec or three says so
in one line instead of calling the whole value an unknown agent."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

pytest.importorskip("torch")

from helpers import STANDARD, small_model  # noqa: E402

from agents.checkpoint import save_checkpoint  # noqa: E402
from agents.registry import make_agent, spec_files, split_rollout  # noqa: E402
from agents.search import SearchConfigError  # noqa: E402
from doudizhu_arena import evaluate  # noqa: E402


def hashes(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def checkpoint(tmp_path) -> Path:
    path = tmp_path / "runs" / "x" / "ck.pt"
    path.parent.mkdir(parents=True)
    save_checkpoint(str(path), small_model(STANDARD), frames=0, updates=0)
    return path


def test_a_rollout_by_role_may_name_an_absolute_checkpoint_path(checkpoint):
    spec = f"search:rule,rollout=rule/random/dmc:{checkpoint}"
    agent = make_agent(spec, STANDARD)
    assert [type(p).__name__ for p in agent.policies] == ["RuleAgent", "RandomAgent", "DMCAgent"]
    assert spec_files([spec]) == [str(checkpoint)]  # so no command may write over it


def test_a_command_refuses_to_write_over_a_rollouts_checkpoint(checkpoint, capsys):
    before = hashes(checkpoint.parent)
    with pytest.raises(SystemExit) as err:
        evaluate.main(["--seats", f"search:rule,rollout=rule/random/dmc:{checkpoint}", "rule", "rule",
                       "--games", "1", "--json", str(checkpoint)])
    line = capsys.readouterr().err.strip()
    assert err.value.code == 2 and "\n" not in line and str(checkpoint) in line
    assert hashes(checkpoint.parent) == before


def test_a_missing_checkpoint_in_a_rollout_is_named(tmp_path, capsys):
    missing = tmp_path / "no" / "ck.pt"
    with pytest.raises(SystemExit) as err:
        evaluate.main(["--seats", f"search:rule,rollout=rule/random/dmc:{missing}", "rule", "rule",
                       "--games", "1"])
    line = capsys.readouterr().err.strip()
    assert err.value.code == 2 and "\n" not in line and f"no checkpoint file at {str(missing)!r}" in line


@pytest.mark.parametrize("rollout, words", [
    ("rule/random", "found 2: rule | random"),
    ("rule/rule/rule/rule", "found 4"),
    ("rule/runs/a.pt/rule", "a path in the three-spec form needs its prefix, e.g. rule/rule/dmc:/abs/ck.pt"),
])
def test_a_rollout_that_is_neither_one_spec_nor_three_says_what_it_found(rollout, words):
    with pytest.raises(SearchConfigError, match=r"expected one agent spec, or three separated by '/' "
                                                r"\(landlord/landlord_down/landlord_up\); ") as err:
        make_agent(f"search:rule,rollout={rollout}", STANDARD)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_one_spec_with_a_path_stays_one_spec():
    assert split_rollout("dmc:runs/t2/c.pt") == ["dmc:runs/t2/c.pt"]
    assert split_rollout("douzero:ckpts/dir/rule/rule") == ["douzero:ckpts/dir", "rule", "rule"]
    assert split_rollout("a.pt/b.pt/c.pt") == ["a.pt", "b.pt", "c.pt"]
