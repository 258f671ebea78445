"""The optional extras stay optional: with gymnasium and pettingzoo absent the rules, the engine
and the test suite's collection still work, and the env test modules skip instead of erroring."""

import subprocess
import sys

import pytest
from helpers import ROOT

#: makes ``import gymnasium`` / ``import pettingzoo`` fail as if they were not installed
BLOCK = "import sys\nfor name in ('gymnasium', 'pettingzoo'): sys.modules[name] = None\n"


def run_blocked(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK + code], capture_output=True, text=True,
                          cwd=ROOT, check=False, timeout=300)


def test_engine_plays_without_gymnasium_and_pettingzoo():
    out = run_blocked(
        "import numpy as np\n"
        "from doudizhu_env import engine, legal_moves\n"
        "s = engine.reset(0, 8); rng = np.random.default_rng(0)\n"
        "while not s.done.all(): s = engine.step(s, engine.sample_legal(s, rng))\n"
        "print(legal_moves('3334', last='3'), int(s.done.sum()))\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['pass', '4'] 8"


@pytest.mark.integration  # a subprocess: make test-slow
def test_suite_collects_without_gymnasium_and_pettingzoo():
    out = run_blocked(
        "import pytest\n"
        "sys.exit(pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', '-rs', 'tests']))\n"
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    skipped = [line for line in out.stdout.splitlines() if line.startswith("SKIPPED")]
    for module in ("test_aec_env", "test_gym_env", "test_compact_masks", "test_rl_clients", "test_infos",
                   "test_interop"):
        assert any(f"tests/{module}.py" in line for line in skipped), (module, skipped)


@pytest.mark.integration  # a subprocess: make test-slow
def test_the_installed_packages_are_the_projects_own_and_benchmarks_stays_in_the_checkout(tmp_path):
    """``agents``, ``train`` and ``doudizhu_env`` are installed; ``benchmarks`` is run from a checkout
    (``python -m benchmarks.X`` at its root), so that no installed package of that name shadows a
    user's own ``benchmarks/`` folder, or is shadowed by it. (Another distribution may install a
    ``benchmarks`` folder of its own: torchrl 0.14 of the extra ``interop`` does, a namespace folder
    without our modules.)"""
    code = ("import importlib.util\n"
            "import doudizhu_arena.arena, train.run, doudizhu_table.web.server\n"
            "try:\n    import benchmarks\nexcept ModuleNotFoundError:\n    print('not installed')\n"
            "else:\n    print('ours' if importlib.util.find_spec('benchmarks.rule_agent') else 'not ours')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         check=False, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() in ("not installed", "not ours"), out.stdout
