"""Throughput of the peer Dou Dizhu engines, on the same workload as ours.

Peers (PyPI packages):

* ``open_spiel`` -- the C++ game ``dou_dizhu`` through ``pyspiel`` (with bidding);
* ``rlcard`` -- ``rlcard.games.doudizhu.Game`` (card play only, seat 0 is landlord),
  and its environment ``rlcard.make("doudizhu")`` for the environment-level figure;
* ``douzero`` -- ``douzero.env.game.GameEnv`` (card play only, landlord given).

Install, either into the project's venv, where the benchmarks measure them in the same
interpreter (the extra ``benchmark``: the extra ``peers``, rlcard and douzero, and
open_spiel; after the CPU build of torch, which ``make install`` puts in first)::

    .venv/bin/python -m pip install -e ".[benchmark]"

or into a virtualenv of their own, ``.venv-peers``, which ``benchmarks.engine`` and
``benchmarks.env`` run in a subprocess for a peer their interpreter lacks (the commands
that worked, Python 3.11, from the repository root)::

    python3 -m venv .venv-peers
    .venv-peers/bin/python -m pip install --upgrade pip
    .venv-peers/bin/python -m pip install torch==2.13.0     # FIRST: the CPU build
    .venv-peers/bin/python -m pip install -r benchmarks/requirements-peers.txt
    # i.e. open_spiel==2.0.2 rlcard==1.2.0 douzero==1.1.0 numpy==2.4.6

torch comes first and pinned because douzero depends on it (for training only; its
engine does not import it) and an unpinned torch pulls a multi-GB CUDA build.

Workload: full games under a uniform-random policy over the legal actions, which the
peer recomputes at every decision; one process, one thread.  A *decision* is one
choice by a player (a bid or a card-play move, passes included); chance nodes are
not decisions.  Setup (imports, building the game object) is not timed; each game,
deal included, is.  Every random choice comes from a ``random.Random`` (or, where the
peer needs numpy, a ``numpy.random.RandomState``) instance seeded from ``seed``;
no global random state is read or changed.

Usage::

    .venv-peers/bin/python -m benchmarks.peers --seconds 5 --json out.json

and, from an interpreter without the peers (e.g. the project's venv)::

    run_in_subprocess(".venv-peers/bin/python", "rlcard_engine", 5.0, 0)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

INSTALL_HINT = "see benchmarks/requirements-peers.txt for the peers' virtualenv"

# A game-playing callable returns (bidding decisions, card-play decisions) of one game.
PlayGame = Callable[[], tuple[int, int]]


def _require(module: str, package: str):
    """Import ``module`` or raise ImportError naming the PyPI ``package``."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"peer '{package}' is not installed ({err}); {INSTALL_HINT}") from err


def _measure(play_game: PlayGame, seconds: float, max_games: int | None) -> dict:
    """Play games (at least one) until ``seconds`` have passed or ``max_games`` are done."""
    play_game()  # one untimed warm-up game
    games = bids = plays = no_play = 0
    start = time.perf_counter()
    while True:
        b, p = play_game()
        games, bids, plays, no_play = games + 1, bids + b, plays + p, no_play + (p == 0)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds or (max_games is not None and games >= max_games):
            break
    return {
        "games": games,
        "bid_decisions": bids,
        "play_decisions": plays,
        "no_play_games": no_play,  # all players passed in the bidding: no card play
        "seconds": elapsed,
    }


def _engine_result(peer: str, bidding: bool, counts: dict) -> dict:
    """The result dict of an engine measurement, rates included."""
    games, secs = counts["games"], counts["seconds"]
    decisions = counts["bid_decisions"] + counts["play_decisions"]
    return {
        "peer": peer,
        "bidding": bidding,
        "games": games,
        "decisions": decisions,
        "seconds": secs,
        "games_per_s": games / secs,
        "decisions_per_s": decisions / secs,
        "bid_decisions": counts["bid_decisions"],
        "play_decisions": counts["play_decisions"],
        "no_play_games": counts["no_play_games"],
        "decisions_per_game": decisions / max(games, 1),
        "play_decisions_per_game": counts["play_decisions"] / max(games, 1),
    }


# --------------------------------------------------------------------------- open_spiel


def _openspiel_game_player(pyspiel, rng: random.Random) -> PlayGame:
    """One full open_spiel game per call: deal (chance nodes), bidding, card play."""
    game = pyspiel.load_game("dou_dizhu")

    def play() -> tuple[int, int]:
        state = game.new_initial_state()
        bids = plays = 0
        bidding = True
        while not state.is_terminal():
            if state.is_chance_node():
                # The deal: 52 chance nodes (first 51 outcomes, then one card dealt per node),
                # uniform in open_spiel 2.0.2, so a uniform pick among the outcomes
                # (= legal_actions at a chance node) samples them exactly.
                state.apply_action(rng.choice(state.legal_actions()))
                continue
            legal = state.legal_actions()
            # Actions 0..3 are Pass/Bid 1..3; the landlord's first lead always offers more.
            bidding = bidding and max(legal) <= 3
            bids, plays = (bids + 1, plays) if bidding else (bids, plays + 1)
            state.apply_action(rng.choice(legal))
        return bids, plays

    return play


def openspiel_engine(seconds: float, seed: int, max_games: int | None = None) -> dict:
    """open_spiel's C++ ``dou_dizhu`` via pyspiel: bidding and card play, random policy."""
    pyspiel = _require("pyspiel", "open_spiel")
    play = _openspiel_game_player(pyspiel, random.Random(seed))
    return _engine_result("open_spiel", True, _measure(play, seconds, max_games))


# ------------------------------------------------------------------------------- rlcard


def _rlcard_np_random(seed: int):
    """rlcard's own seeded ``RandomState`` (what ``rlcard.make`` gives its game)."""
    seeding = _require("rlcard.utils.seeding", "rlcard")
    return seeding.np_random(seed)[0]


def _rlcard_game_player(game, rng: random.Random) -> PlayGame:
    """One full rlcard game per call: deal, then card play (seat 0 is the landlord)."""

    def play() -> tuple[int, int]:
        state, _ = game.init_game()
        plays = 0
        while not game.is_over():
            # ``state["actions"]``: the acting player's legal moves, recomputed each step.
            # Their order follows string hashing (PYTHONHASHSEED): sort for reproducibility.
            state, _ = game.step(rng.choice(sorted(state["actions"])))
            plays += 1
        return 0, plays

    return play


def rlcard_engine(seconds: float, seed: int, max_games: int | None = None) -> dict:
    """rlcard's ``doudizhu`` game object (no bidding), random policy over its legal moves."""
    game_module = _require("rlcard.games.doudizhu.game", "rlcard")
    game = game_module.DoudizhuGame()
    game.np_random = _rlcard_np_random(seed)  # the deck shuffle; read by init_game
    play = _rlcard_game_player(game, random.Random(seed))
    return _engine_result("rlcard", False, _measure(play, seconds, max_games))


def _rlcard_env_player(env, rng: random.Random) -> PlayGame:
    """One full game through rlcard's environment API (encoded observations)."""

    def play() -> tuple[int, int]:
        state, _ = env.reset()
        steps = 0
        while not env.is_over():
            # Legal action ids, in an order that follows string hashing: sorted, as above.
            state, _ = env.step(rng.choice(sorted(state["legal_actions"])))
            steps += 1
        env.get_payoffs()
        return 0, steps

    return play


def rlcard_env(seconds: float, seed: int, max_games: int | None = None) -> dict:
    """rlcard's ``rlcard.make("doudizhu")`` stepped with random legal action ids."""
    rlcard = _require("rlcard", "rlcard")
    env = rlcard.make("doudizhu", config={"seed": seed})
    counts = _measure(_rlcard_env_player(env, random.Random(seed)), seconds, max_games)
    games, steps, secs = counts["games"], counts["play_decisions"], counts["seconds"]
    return {
        "peer": "rlcard-env",
        "bidding": False,
        "games": games,
        "steps": steps,
        "seconds": secs,
        "games_per_s": games / secs,
        "steps_per_s": steps / secs,
        "steps_per_game": steps / max(games, 1),
    }


# ------------------------------------------------------------------------------ douzero


class _RandomDouZeroPlayer:
    """A douzero player: ``act`` picks uniformly among the infoset's legal actions."""

    def __init__(self, rng: random.Random, counter: list[int]):
        self.rng, self.counter = rng, counter

    def act(self, infoset):
        self.counter[0] += 1
        return self.rng.choice(infoset.legal_actions)


def _douzero_deck() -> list[int]:
    """douzero's 54 cards: 3..14 (3..A), 17 (2), 20 and 30 (the jokers)."""
    return [rank for rank in (*range(3, 15), 17) for _ in range(4)] + [20, 30]


def _douzero_deal(rng: random.Random) -> dict:
    """A deal in douzero's format, shuffled by ``rng`` (``douzero.env.Env.reset`` would
    use the global ``np.random``); the landlord holds 20 cards, the last 3 of them shown."""
    deck = _douzero_deck()
    rng.shuffle(deck)
    return {
        "landlord": sorted(deck[:20]),
        "landlord_up": sorted(deck[20:37]),
        "landlord_down": sorted(deck[37:]),
        "three_landlord_cards": sorted(deck[17:20]),
    }


def _douzero_game_player(game_module, rng: random.Random) -> PlayGame:
    """One full douzero game per call: deal, then card play (landlord given)."""
    counter = [0]
    player = _RandomDouZeroPlayer(rng, counter)
    game = game_module.GameEnv({pos: player for pos in ("landlord", "landlord_up", "landlord_down")})

    def play() -> tuple[int, int]:
        counter[0] = 0
        game.reset()
        game.card_play_init(_douzero_deal(rng))  # computes the first legal actions
        while not game.game_over:
            game.step()  # the player acts; the next infoset (legal actions) is computed
        return 0, counter[0]

    return play


def douzero_engine(seconds: float, seed: int, max_games: int | None = None) -> dict:
    """douzero 1.1.0's ``GameEnv`` (no bidding), random policy over its legal moves."""
    game_module = _require("douzero.env.game", "douzero")
    play = _douzero_game_player(game_module, random.Random(seed))
    return _engine_result("douzero", False, _measure(play, seconds, max_games))


# --------------------------------------------------------------------------- running

MEASUREMENTS: dict[str, Callable[..., dict]] = {
    "openspiel_engine": openspiel_engine,
    "rlcard_engine": rlcard_engine,
    "douzero_engine": douzero_engine,
    "rlcard_env": rlcard_env,
}


def run_in_subprocess(
    python_exe: str, func_name: str, seconds: float, seed: int, max_games: int | None = None
) -> dict:
    """Run one measurement in another interpreter (e.g. ``.venv-peers/bin/python``).

    The child runs this file with ``--one func_name`` and prints the result as JSON on
    stdout.  Raises ImportError if the peer is missing there, RuntimeError on other
    failures.
    """
    cmd = [
        python_exe,
        str(Path(__file__).resolve()),
        "--one",
        func_name,
        "--seconds",
        str(seconds),
        "--seed",
        str(seed),
    ]
    if max_games is not None:
        cmd += ["--games", str(max_games)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode == 3:
        raise ImportError(proc.stderr.strip().splitlines()[-1])
    if proc.returncode != 0:
        raise RuntimeError(f"{func_name} failed in {python_exe}:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median_summary(runs: list[dict]) -> dict:
    """Medians of the rates over ``runs``; totals and per-game means pooled over them."""
    summary = {"peer": runs[0]["peer"], "bidding": runs[0]["bidding"], "repeats": len(runs)}
    for key in ("games_per_s", "decisions_per_s", "steps_per_s"):
        if key in runs[0]:
            summary[key] = statistics.median(r[key] for r in runs)
    games = sum(r["games"] for r in runs)
    for key in ("decisions", "play_decisions", "steps"):
        if key in runs[0]:
            summary[f"{key}_per_game"] = sum(r[key] for r in runs) / games
    return summary


def _format_table(summaries: list[dict]) -> str:
    """A plain-text table: one line per peer."""
    head = f"{'peer':<12} {'bidding':>7} {'games/s':>10} {'decisions/s':>12} {'dec/game':>9} {'play/game':>9}"
    lines = [head, "-" * len(head)]
    for s in summaries:
        rate = s.get("decisions_per_s", s.get("steps_per_s"))
        per_game = s.get("decisions_per_game", s.get("steps_per_game"))
        play = s.get("play_decisions_per_game", s.get("steps_per_game"))
        lines.append(
            f"{s['peer']:<12} {'yes' if s['bidding'] else 'no':>7} {s['games_per_s']:>10.1f} "
            f"{rate:>12.0f} {per_game:>9.2f} {play:>9.2f}"
        )
    return "\n".join(lines)


def _run_one_repeated(name: str, args: argparse.Namespace) -> list[dict]:
    """``args.repeats`` runs of measurement ``name``, seeds ``args.seed + i``."""
    runs = []
    for i in range(args.repeats):
        if args.python:
            runs.append(run_in_subprocess(args.python, name, args.seconds, args.seed + i, args.games))
        else:
            runs.append(MEASUREMENTS[name](args.seconds, args.seed + i, args.games))
    return runs


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers",
                                     description="Measure the peer Dou Dizhu engines (random play).")
    parser.add_argument("--seconds", type=float, default=5.0, help="wall time per run (default 5)")
    parser.add_argument("--games", type=int, default=None, help="stop a run after this many games")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", nargs="+", choices=sorted(MEASUREMENTS), help="measure only these")
    parser.add_argument("--python", help="run each measurement in this interpreter instead")
    parser.add_argument("--json", help="write all runs and medians to this file")
    parser.add_argument("--one", choices=sorted(MEASUREMENTS), help=argparse.SUPPRESS)
    return parser


def _check_args(args: argparse.Namespace) -> str | None:
    """What is wrong with the options (one line), or None. This file runs alone in the peers'
    interpreter too, so it checks as :mod:`doudizhu_arena.options` does without importing it."""
    if not (args.seconds > 0 and args.seconds < float("inf")):
        return f"--seconds must be a finite number above 0, got {args.seconds}"
    for option, value in (("--repeats", args.repeats), ("--games", args.games)):
        if value is not None and value < 1:
            return f"{option} must be at least 1, got {value}"
    # the runs are seeded seed, seed + 1, ...: numpy's seeds end at 2**32 - 1 (--one: a single run)
    top = 2**32 - (1 if args.one else args.repeats)
    if not 0 <= args.seed <= top:
        return (f"--seed must be an integer in 0..{top} (the runs use --seed + i for i < --repeats), "
                f"got {args.seed}")
    if args.json is not None:
        folder = os.path.dirname(os.path.abspath(args.json))
        if not args.json or os.path.isdir(args.json) or not os.path.isdir(folder):
            return f"--json: cannot write {args.json!r}: expected a file path in an existing folder"
        if args.python and os.path.exists(args.python) and os.path.realpath(args.json) == os.path.realpath(
                args.python):
            return f"--json: cannot write {args.json!r}: it is --python, an input of this command"
    return None


def _write_json(path: str, data) -> None:
    """``data`` as strict JSON (non-finite numbers as null), written atomically."""
    import math
    import tempfile

    def finite(x):
        if isinstance(x, float):
            return x if math.isfinite(x) else None
        if isinstance(x, dict):
            return {k: finite(v) for k, v in x.items()}
        return [finite(v) for v in x] if isinstance(x, (list, tuple)) else x

    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(finite(data), indent=2, allow_nan=False) + "\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _child_main(args: argparse.Namespace) -> int:
    """``--one NAME``: a single run, its dict as one JSON line on stdout (exit 3: peer missing)."""
    try:
        result = MEASUREMENTS[args.one](args.seconds, args.seed, args.games)
    except ImportError as err:
        print(err, file=sys.stderr)
        return 3
    print(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run every available peer ``--repeats`` times; print the medians as a table."""
    parser = _parser()
    args = parser.parse_args(argv)
    problem = _check_args(args)
    if problem:
        parser.exit(2, f"{parser.prog}: error: {problem}\n")
    if args.one:
        return _child_main(args)
    report: dict = {"seconds": args.seconds, "games": args.games, "seed": args.seed, "results": {}}
    for name in args.only or list(MEASUREMENTS):
        try:
            runs = _run_one_repeated(name, args)
        except ImportError as err:
            print(f"skipped {name}: {err}", file=sys.stderr)
            continue
        report["results"][name] = {"median": _median_summary(runs), "runs": runs}
    print(_format_table([r["median"] for r in report["results"].values()]))
    if args.json:
        _write_json(args.json, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
