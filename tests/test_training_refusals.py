"""What train.run refuses in one line before any work: numbers a config cannot hold, and weight files
that could run code (the message never repeats torch's advice to load them with weights_only=False)."""

from __future__ import annotations

import pickle

import pytest

pytest.importorskip("torch")
pytest.importorskip("yaml")

from helpers import TINY  # noqa: E402


def refusal(capsys, argv) -> str:
    from train.run import main

    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize(("key", "value", "message"), [
    ("entropy_coef", "1" + "0" * 400, "config key 'entropy_coef' must be a number of at most 19 digits"),
    ("total_frames", "9" * 23, "config key 'total_frames' must be a number of at most 19 digits"),
    ("learning_rate", "1e999", "config key 'learning_rate' must be a finite number, got '1e999'"),
    ("value_coef", "-1e999", "config key 'value_coef' must be a finite number"),
])
def test_numbers_a_config_cannot_hold_are_one_line(tmp_path, capsys, key, value, message):
    option = f"--{key.replace('_', '-')}={value}"
    line = refusal(capsys, ["--config", TINY, "--out-dir", str(tmp_path), option])
    assert message in line
    assert list(tmp_path.iterdir()) == []


def test_the_same_numbers_in_a_yaml_file_are_one_line(tmp_path, capsys):
    config = tmp_path / "big.yaml"
    config.write_text("entropy_coef: " + "1" + "0" * 400 + "\n")
    line = refusal(capsys, ["--config", str(config), "--out-dir", str(tmp_path / "runs")])
    assert "config key 'entropy_coef' must be a number of at most 19 digits" in line


class _Runs:
    def __reduce__(self):
        return (print, ("this must never be printed",))


@pytest.mark.parametrize("how", ["pickle", "torch"])
def test_a_weights_file_that_could_run_code_is_refused_without_torchs_advice(tmp_path, capsys, how):
    import torch

    path = tmp_path / "evil.pt"
    payload = {"format": "doudizhu-dmc", "x": _Runs()}
    if how == "pickle":
        path.write_bytes(pickle.dumps(payload))
    else:
        torch.save(payload, path)
    argv = ["--config", TINY, "--out-dir", str(tmp_path / "runs"), "--init-weights", str(path)]
    line = refusal(capsys, argv)
    assert "is not a readable torch checkpoint: torch's safe loader refused it" in line
    assert "never loaded (they could run code)" in line
    assert "weights_only=False" not in line and "weights_only` set to `False`" not in line
    assert "this must never be printed" not in capsys.readouterr().out
    assert not (tmp_path / "runs").exists()
