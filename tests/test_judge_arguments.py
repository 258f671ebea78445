"""The judges' Python functions and commands refuse bad arguments before any game, in one line
naming the argument: ``landlord_and_farmers``, ``paired_with_reference``, ``evaluate --paired``,
the SPRT's hypotheses (a researcher's call, or the command a user types: exit status 2, nothing on
disk changed)."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest

from doudizhu_arena import evaluate, sprt
from doudizhu_arena.evaluation import paired_with_reference
from doudizhu_arena.sprt import SPRTConfig, run_sprt
from doudizhu_arena.tournament import landlord_and_farmers
from doudizhu_env.rules import Rules

STANDARD = Rules.preset("standard")


def hashes(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def exits_with_one_line(main, argv, capsys) -> str:
    with pytest.raises(SystemExit) as err:
        main(argv)
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    return lines[0]


BAD_COMMON = [
    ({"num_deals": 1}, ValueError, r"num_deals must be between 2 and [\d,]+ \(a 95% interval over deals "
                                   r"needs two deals or more\), got 1"),
    ({"num_deals": True}, TypeError, r"num_deals must be an integer between 2 and [\d,]+ .*got True"),
    ({"num_deals": 4.0}, TypeError, r"num_deals must be an integer"),
    ({"workers": 0}, ValueError, r"workers must be at least 1, got 0"),
    ({"chunk_size": -2}, ValueError, r"chunk_size must be at least 1, got -2"),
    ({"chunk_size": None}, TypeError, r"chunk_size must be an integer at least 1, got None"),
    ({"seed": -1}, ValueError, r"seed must be an integer in 0\.\.2\*\*63-1, got -1"),
]


@pytest.mark.parametrize("kwargs, error, message", BAD_COMMON)
def test_landlord_and_farmers_refuses_bad_arguments_before_any_game(kwargs, error, message):
    args = {"num_deals": 4, "seed": 0, "workers": 1, "chunk_size": 2} | kwargs
    with pytest.raises(error, match=message) as err:
        landlord_and_farmers("rule", "random", args.pop("num_deals"), **args)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("kwargs, error, message", BAD_COMMON + [
    ({"rules": None}, TypeError, r"rules must be a doudizhu_env.rules.Rules \(Rules.preset\('standard'\)\), "
                                 r"got None"),
    ({"rules": "standard"}, TypeError, r"rules must be a doudizhu_env.rules.Rules"),
    ({"agent": None}, TypeError, r"agent must be an agent spec, a non-empty string such as 'rule', got None"),
    ({"reference": ""}, TypeError, r"reference must be an agent spec"),
])
def test_paired_with_reference_refuses_bad_arguments_before_any_game(kwargs, error, message):
    args = {"agent": "random", "reference": "rule", "rules": STANDARD, "num_deals": 4, "seed": 0,
            "workers": 1, "chunk_size": 2} | kwargs
    with pytest.raises(error, match=message) as err:
        paired_with_reference(**args)
    assert "\n" not in str(err.value)


def test_evaluate_paired_of_one_game_is_refused_before_any_game(tmp_path, capsys):
    out = tmp_path / "p.json"
    out.write_text("{}")
    before = hashes(tmp_path)
    line = exits_with_one_line(evaluate.main, ["--landlord", "random", "--farmers", "rule", "--games", "1",
                                               "--paired", "--no-progress", "--json", str(out)], capsys)
    assert "--paired needs --games 2 or more (its 95% intervals are over deals), got 1" in line
    assert hashes(tmp_path) == before


@pytest.mark.parametrize("argv, words", [
    (["--h0=-1e308", "--h1", "1e308"],
     "--h0 must be a mean of points per deal within ±2,147,483,648 (no game scores more), got -1e+308"),
    (["--h0", "0", "--h1", "1e10"], "--h1 must be a mean of points per deal within ±2,147,483,648"),
    (["--h1", "inf"], "--h1 must be a finite number of points, got inf"),
])
def test_sprt_refuses_hypotheses_whose_ratio_would_overflow(tmp_path, capsys, argv, words):
    out = tmp_path / "s.json"
    out.write_text("{}")
    before = hashes(tmp_path)
    line = exits_with_one_line(sprt.main, ["--candidate", "rule", "--baseline", "random", "--json", str(out),
                                           *argv], capsys)
    assert words in line
    assert hashes(tmp_path) == before


def test_the_sprt_from_python_refuses_overflowing_hypotheses_and_values():
    with pytest.raises(ValueError, match=r"h0 must be a mean of points per deal within"):
        SPRTConfig(h0=-1e308, h1=1e308)
    with pytest.raises(ValueError, match=r"per-deal values must be finite points, got \[1\.0, inf\]"):
        run_sprt([[1.0, math.inf]], SPRTConfig())
    widest = SPRTConfig(h0=-(2.0**31), h1=2.0**31)  # the widest hypotheses give a finite ratio
    result = run_sprt([[0.0, 0.0], [1e3, -1e3]], widest)
    assert all(math.isfinite(llr) for _, llr in result.history)
