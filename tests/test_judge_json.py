"""The judges' JSON files stay strict JSON: a figure without a value (the mean of no games in a role,
the interval of one deal, the range of no bootstrap replicates) is ``null`` beside its count, never
``NaN``; the terminal says "no games in this role" or "no interval", never ``nan``; and any other
non-finite number fails loudly (``doudizhu_arena.arena.report_json``) instead of being written."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from doudizhu_arena import evaluate, sprt, tournament
from doudizhu_arena.arena import format_estimate, mean_ci, report_json


def strict(path: Path):
    """The file's JSON, read as strict readers read it: ``NaN``/``Infinity`` are errors."""
    text = path.read_text()

    def refuse(constant):
        raise AssertionError(f"{path.name} holds {constant}, which strict JSON readers refuse")

    return json.loads(text, parse_constant=refuse)


def test_evaluate_paired_with_a_role_of_no_games_writes_null_and_says_so(tmp_path, capsys):
    """Seed 9, 2 deals: the agent and the reference were never landlords in the same seat."""
    out = tmp_path / "p.json"
    evaluate.main(["--landlord", "random", "--farmers", "rule", "--games", "2", "--seed", "9", "--paired",
                   "--no-progress", "--json", str(out)])
    text = capsys.readouterr().out
    landlord = strict(out)["paired"]["landlord"]
    assert landlord == {"mean": None, "ci": None, "low": None, "high": None, "n": 0, "pairs": 0}
    assert "  landlord      no games in this role   (0 games)" in text
    assert "nan" not in text.lower()


def test_evaluate_of_one_deal_writes_intervals_as_null(tmp_path, capsys):
    out = tmp_path / "e.json"
    evaluate.main(["--landlord", "random", "--farmers", "rule", "--games", "1", "--no-progress", "--json",
                   str(out)])
    text = capsys.readouterr().out
    adp = strict(out)["agents"]["random"]["all"]["adp"]
    assert adp["n"] == 1 and math.isfinite(adp["mean"]) and adp["ci"] is adp["low"] is adp["high"] is None
    assert "(1 deal: no interval)" in text and "nan" not in text.lower()


def test_tournament_of_one_deal_without_bootstrap_writes_strict_json(tmp_path, capsys):
    out, md, cache = tmp_path / "t.json", tmp_path / "t.md", tmp_path / "cells"
    tournament.main(["--agents", "random", "rule", "--deals", "1", "--modes", "fixed_landlord", "--bootstrap",
                     "0", "--cache", str(cache), "--json", str(out), "--markdown", str(md), "--no-progress"])
    text = capsys.readouterr().out
    report = strict(out)
    cell = report["modes"]["fixed_landlord"]["cells"]["rule"]["random"]["adp"]
    assert cell["n"] == 1 and cell["ci"] is None
    rating = report["ratings"]["fixed_landlord"]["rule"]["adp"]
    assert rating["replicates"] == 0 and rating["low"] is None and rating["high"] is None
    assert "(no bootstrap)" in text and "nan" not in text.lower() and "nan" not in md.read_text().lower()
    for cell_file in cache.iterdir():  # the cache's cell files too
        strict(cell_file)


def test_sprt_of_one_deal_writes_strict_json(tmp_path, capsys):
    out = tmp_path / "s.json"
    sprt.main(["--candidate", "rule", "--baseline", "random", "--max-deals", "1", "--chunk-size", "1",
               "--quiet", "--json", str(out)])
    text = capsys.readouterr().out
    result = strict(out)
    assert result["estimate"]["n"] == 1 and result["estimate"]["ci"] is None
    assert result["decision"] == "inconclusive"  # never a decision on one deal (its variance is 0)
    assert "(1 deal: no interval)" in text and "LLR none (one deal has no variance)" in text
    assert "nan" not in text


@pytest.mark.parametrize("report", [
    {"mean": math.nan},  # a NaN without the count that allows it
    {"mean": math.nan, "n": 3},  # a mean of three games cannot be missing
    {"ci": math.nan, "n": 2},
    {"llr": math.inf},
    {"history": [[1, -math.inf]]},
])
def test_report_json_fails_loudly_on_any_other_non_finite_number(report):
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        report_json(report)


def test_report_json_writes_null_with_the_count_beside_it():
    assert json.loads(report_json({"a": mean_ci([]), "b": mean_ci([2.0])})) == {
        "a": {"mean": None, "ci": None, "low": None, "high": None, "n": 0},
        "b": {"mean": 2.0, "ci": None, "low": None, "high": None, "n": 1}}
    bidding = {"seats": 0, "landlord_share": math.nan}
    assert json.loads(report_json(bidding)) == {"seats": 0, "landlord_share": None}


def test_format_estimate_never_says_nan():
    assert format_estimate(mean_ci([])) == "no games in this role"
    assert format_estimate(mean_ci([0.5])) == "+0.500 (1 deal: no interval)"
    assert format_estimate(mean_ci([1.0, 2.0]), 2) == "+1.50 ± 0.98"
