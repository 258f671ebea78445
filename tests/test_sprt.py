"""The sequential test (doudizhu_arena.sprt): its error rates, its decisions in real games, its errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from doudizhu_arena.sprt import (
    SPRT,
    SPRTConfig,
    deal_values,
    log_likelihood_ratio,
    main,
    run_sprt,
    sequential_test,
)
from doudizhu_env.rules import Rules

FIXED = Rules.preset("standard", bidding=False)


def test_log_likelihood_ratio_is_the_normal_models():
    values = np.array([0.3, -0.1, 0.4, 0.2])
    h0, h1 = 0.0, 0.25
    var = values.var()
    direct = float(np.sum((values - h0) ** 2 - (values - h1) ** 2) / (2 * var))
    assert log_likelihood_ratio(4, values.mean(), var, h0, h1) == pytest.approx(direct)
    test = SPRT(SPRTConfig(h0, h1))
    test.update(values)
    assert test.llr == pytest.approx(direct)


def test_bounds_are_walds():
    c = SPRTConfig(0.0, 0.1, alpha=0.05, beta=0.1)
    assert c.upper == pytest.approx(np.log(0.9 / 0.05)) and c.lower == pytest.approx(np.log(0.1 / 0.95))


@pytest.fixture(scope="module")
def equal_agents_values() -> np.ndarray:
    """Per-deal values of a random agent head to head against a random agent: two agents of equal
    strength, cheap to play (centred, so that H0 holds exactly when resampling them)."""
    values = np.concatenate(list(deal_values("random", "random", FIXED, seed=11, chunk_size=500,
                                             max_deals=3000)))
    assert values.std() > 1.0  # the deals differ: not a degenerate stream
    return values - values.mean()


def _simulate(values: np.ndarray, shift: float, config: SPRTConfig, runs: int, seed: int,
              chunk: int = 25) -> dict:
    """Decisions of ``runs`` SPRTs over values resampled (with replacement) and shifted by ``shift``."""
    rng = np.random.default_rng(seed)
    counts = {"H0": 0, "H1": 0, "inconclusive": 0}
    deals = []
    for _ in range(runs):
        stream = (values[rng.integers(0, len(values), chunk)] + shift for _ in range(400))
        result = run_sprt(stream, config, min_deals=chunk)
        counts[result.decision] += 1
        deals.append(result.deals)
    return counts | {"mean_deals": float(np.mean(deals))}


def test_equal_agents_accept_not_better_at_about_the_stated_error_rate(equal_agents_values):
    sd = equal_agents_values.std()
    config = SPRTConfig(0.0, 0.15 * sd, alpha=0.05, beta=0.05)
    runs = 600
    out = _simulate(equal_agents_values, 0.0, config, runs, seed=0)
    false_h1 = out["H1"] / runs
    assert false_h1 <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / runs), out
    assert false_h1 >= 0.01, out  # about the stated rate, not a test that never says "better"
    assert out["inconclusive"] == 0 and out["mean_deals"] < 1000, out


def test_a_stronger_agent_is_accepted_at_about_the_stated_power(equal_agents_values):
    sd = equal_agents_values.std()
    config = SPRTConfig(0.0, 0.15 * sd, alpha=0.05, beta=0.05)
    runs = 600
    out = _simulate(equal_agents_values, 0.15 * sd, config, runs, seed=1)
    assert out["H0"] / runs <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / runs), out
    clearly = _simulate(equal_agents_values, 0.5 * sd, config, 100, seed=2)
    assert clearly["H1"] == 100 and clearly["mean_deals"] < 150, clearly


def test_rule_agent_is_better_than_random_within_a_bounded_number_of_deals():
    result = sequential_test("rule", "random", h0=0.0, h1=0.5, rules=FIXED, chunk_size=50, max_deals=500)
    assert result.decision == "H1" and result.deals <= 500
    assert result.estimate["low"] > 0.5
    assert result.history[-1][0] == result.deals


def test_identical_agents_accept_not_better_and_the_workers_do_not_change_the_result():
    same = sequential_test("rule", "rule", chunk_size=20, max_deals=200)
    assert same.decision == "H0" and same.deals == 20 and same.estimate["mean"] == 0.0
    one = sequential_test("random", "rule", h1=0.2, reference="rule", rules=FIXED, chunk_size=20,
                          max_deals=200, seed=3)
    two = sequential_test("random", "rule", h1=0.2, reference="rule", rules=FIXED, chunk_size=20,
                          max_deals=200, seed=3, workers=2)
    assert one.decision == "H0" and one.estimate["mean"] < 0
    assert (one.deals, one.estimate, one.history) == (two.deals, two.estimate, two.history)


def test_undecided_within_the_deals_allowed_is_inconclusive():
    result = sequential_test("random", "random", h0=-0.01, h1=0.01, rules=FIXED, chunk_size=10, max_deals=30)
    assert result.decision == "inconclusive" and result.deals == 30
    assert "no decision" in result.summary()


@pytest.mark.parametrize("kwargs, message", [
    ({"alpha": 0.0}, "alpha must be a probability strictly between 0 and 1"),
    ({"alpha": 1.0}, "alpha must be"),
    ({"beta": 1.5}, "beta must be"),
    ({"beta": -0.1}, "beta must be"),
    ({"h0": 0.1, "h1": 0.1}, "h1 must be greater than h0"),
    ({"h1": float("nan")}, "h1 must be a finite number"),
])
def test_bad_hypotheses_and_error_rates(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SPRTConfig(**kwargs)
    with pytest.raises(ValueError, match=message):
        sequential_test("rule", "random", **kwargs)


def test_command_line(tmp_path, capsys):
    out = tmp_path / "sprt.json"
    main(["--candidate", "rule", "--baseline", "random", "--fixed-landlord", "--h1", "0.5",
          "--chunk-size", "50", "--json", str(out), "--quiet"])
    printed = capsys.readouterr().out
    assert "better: H1 (+0.5) accepted after 50 deals" in printed
    data = json.loads(out.read_text())
    assert data["decision"] == "H1" and data["deals"] == 50 and data["setup"]["candidate"] == "rule"


@pytest.mark.parametrize("args, message", [
    (["--alpha", "1"], "alpha must be a probability"),
    (["--beta", "0"], "beta must be a probability"),
    (["--h1", "-1"], "h1 must be greater than h0"),
    (["--max-deals", "0"], "--max-deals must be at least 1"),
    (["--baseline", "nosuch"], "agent 'nosuch': unknown agent"),
    (["--json", "/nonexistent/dir/x.json"], "--json: cannot write"),
])
def test_command_line_errors_are_one_line(args, message, capsys):
    base = {"--candidate": "rule", "--baseline": "random"}
    for flag in ("--candidate", "--baseline"):
        if flag in args:
            base.pop(flag)
    argv = [x for kv in base.items() for x in kv] + args
    with pytest.raises(SystemExit) as err:
        main(argv)
    assert err.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
