"""Files are bounded by what is parsed, not only by their size: a deals file of more deals than a
judge reads (``evaluate --deals``), or a records file of more records than ``load_records`` keeps
(``python -m doudizhu_table.replay``), is refused in one line before it is parsed; before, a 600 MB
deals file under the 1 GiB size bound ended in a MemoryError traceback at 2.7 GB."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from doudizhu_arena import arena, evaluate
from doudizhu_arena.arena import load_deals, make_deals, save_deals
from doudizhu_env import records
from doudizhu_table import replay


def hashes(folder: Path) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as err:
        evaluate.main(argv)
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    return lines[0]


@pytest.fixture
def no_parsing(monkeypatch):
    """The refusals come before the JSON is parsed."""
    def parse(*args, **kwargs):
        raise AssertionError("the file was parsed")

    monkeypatch.setattr(json, "load", parse)
    monkeypatch.setattr(json, "loads", parse)


def test_a_deals_file_of_millions_of_values_is_refused_before_parsing(tmp_path, capsys, no_parsing):
    """9 million JSON values (18 MB) are more than a million deals hold: refused at the real bounds."""
    big = tmp_path / "big.json"
    big.write_bytes(b"[" + b"0," * 9_000_000 + b"0]")
    out = tmp_path / "r.json"
    before = hashes(tmp_path)
    line = refused(["--seats", "rule", "random", "random", "--deals", str(big), "--json", str(out),
                    "--no-progress"], capsys)
    assert f"--deals {str(big)!r}: it holds more JSON values than 1,000,000 deals would (counted before " \
           "parsing); expected at most 1,000,000 deals" in line
    assert hashes(tmp_path) == before


def test_a_deals_file_of_more_deals_than_a_judge_reads_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(arena, "MAX_FILE_DEALS", 5)
    five, six = tmp_path / "five.json", tmp_path / "six.json"
    deals = make_deals(0, 6)
    save_deals(deals[:5], str(five))
    save_deals(deals, str(six))
    assert load_deals(str(five)) == deals[:5]  # as many as allowed: read
    before = hashes(tmp_path)
    line = refused(["--seats", "rule", "random", "random", "--deals", str(six), "--no-progress"], capsys)
    assert "it holds more JSON values than 5 deals would" in line
    assert hashes(tmp_path) == before


def test_save_deals_of_more_deals_than_deals_reads_back_is_refused(tmp_path, capsys):
    line = refused(["--seats", "rule", "random", "random", "--games", "1000001", "--save-deals",
                    str(tmp_path / "d.json")], capsys)
    assert ("--save-deals writes at most 1,000,000 deals (the most --deals reads back), got --games "
            "1,000,001") in line
    assert not list(tmp_path.iterdir())


def _records_file(path: Path, games: int, blanks: int = 0) -> Path:
    arena.run_arena(["rule", "random", "random"], games, duplicate="none", record=str(path))
    if blanks:
        path.write_text(path.read_text() + "\n" * blanks)
    return path


def test_load_records_refuses_more_records_than_it_keeps_before_parsing(tmp_path, monkeypatch):
    path = _records_file(tmp_path / "games.jsonl", 4)
    assert len(records.load_records(path, max_records=4)) == 4
    monkeypatch.setattr(json, "loads", lambda *a, **k: (_ for _ in ()).throw(AssertionError("parsed")))
    with pytest.raises(records.RecordError, match=r"holds more than 3 records, the most load_records keeps "
                                                  r"in memory; read them one at a time with "
                                                  r"doudizhu_env.records.iter_records, or split the file"):
        records.load_records(path, max_records=3)


def test_blank_lines_do_not_count_as_records(tmp_path):
    path = _records_file(tmp_path / "games.jsonl", 3, blanks=50)
    assert len(records.load_records(path, max_records=3)) == 3


def test_replay_of_a_file_of_too_many_records_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    path = _records_file(tmp_path / "games.jsonl", 3)
    monkeypatch.setattr(records, "MAX_LOADED_RECORDS", 2)
    before = hashes(tmp_path)
    assert replay.main([str(path), "--list"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds more than 2 records, the most load_records keeps in memory" in err[0]
    assert hashes(tmp_path) == before
