"""Environment throughput: the PettingZoo AEC env vs. rlcard's env, and the Gymnasium vector env.

Workloads (standard rules, full hands with bidding and doubling; one process):

* ``aec``: random play through the AEC API of ``doudizhu_v0`` exactly as a user
  writes it: ``agent_iter``, ``last`` (observation dict with the action mask),
  ``step``, each action drawn uniformly from the mask
  (``np.flatnonzero(obs["action_mask"])``). Figure: steps/s, a step
  being one decision (bid, double or play; the dead steps that end a hand are
  not counted), side by side with rlcard's ``rlcard.make("doudizhu")`` stepped
  with random legal action ids (card play only, it has no bidding), from
  :func:`benchmarks.peers.rlcard_env` (run in this interpreter if rlcard is
  importable, else in ``.venv-peers``); target 5x. In parentheses: steps/s
  counting only the time inside the env's calls (``last`` and ``step``
  through PettingZoo's wrappers), without the loop's own sampling.
* ``gym``: the single-seat Gymnasium env ``DouDizhu-v0`` (``DouDizhuEnv``, the
  learner against two random opponents), learner steps/s; target 3x rlcard's
  env steps/s. In parentheses: counting only the time in ``reset`` and ``step``.
  Both envs step one game on the single-game path (:mod:`doudizhu_env.game`).
* ``vector``: ``DouDizhuVectorEnv`` at B = 1024, learner seat 0 against random
  opponents, actions drawn from the observed masks (vectorized). Figures:
  learner decisions/s (B x steps/s) and all decisions/s (the opponents' too).
* ``vector_masks``: the same at B = 1024 and 4096 (``--mask-batches``) for each
  form of the legal actions (``mask="dense"``, ``"ids"``, ``"bits"``), actions
  drawn from that form, printed side by side: learner decisions/s, and in
  ``env.step`` alone.

Every figure is the median of ``--repeats`` runs; the three one-game workloads
(``aec``, rlcard's env, ``gym``) run in rounds, one run of each per round, so that
the machine's load falls on them alike. Run::

    python -m benchmarks.env                      # ~2 minutes
    python -m benchmarks.env --json env.json
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time

import numpy as np

from benchmarks import write_json
from benchmarks.engine import MAX_BATCH, interleaved, measure_peer
from doudizhu_arena.options import check_count, check_outputs_and_agents, check_positive, command_errors
from doudizhu_env.gym_env import MASKS, DouDizhuEnv, DouDizhuVectorEnv, RandomPolicy
from doudizhu_env.legal import sample_bits

TARGET_VS_RLCARD = 5.0  # the AEC env's steps/s over rlcard's env's
TARGET_GYM_VS_RLCARD = 3.0  # the single-seat env's learner steps/s over rlcard's env's steps/s


def aec_random_play(seconds: float, seed: int) -> dict:
    """Random play through the AEC API for about ``seconds``."""
    from doudizhu_env import env

    game = env()
    rng = np.random.default_rng(seed)
    game.reset(seed=seed)
    _play_aec_hand(game, rng)  # warm-up: caches, tables
    steps = games = 0
    env_time = 0.0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        t = time.perf_counter()
        game.reset()
        env_time += time.perf_counter() - t
        hand_steps, hand_time = _play_aec_hand(game, rng)
        steps, env_time, games = steps + hand_steps, env_time + hand_time, games + 1
    return {"games": games, "steps": steps, "seconds": elapsed, "steps_per_s": steps / elapsed,
            "steps_per_s_env_only": steps / env_time, "games_per_s": games / elapsed}


def _play_aec_hand(game, rng) -> tuple[int, float]:
    """One hand of random play; the decisions made and the seconds spent in the env's calls."""
    steps, env_time = 0, 0.0
    clock = time.perf_counter
    for _agent in game.agent_iter():
        t = clock()
        obs, _reward, termination, truncation, _info = game.last()
        env_time += clock() - t
        if termination or truncation:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.integers(len(legal))])
            steps += 1
        t = clock()
        game.step(action)
        env_time += clock() - t
    return steps, env_time


def gym_random_play(seconds: float, seed: int) -> dict:
    """The single-seat Gymnasium env, masked random actions, for about ``seconds``."""
    env = DouDizhuEnv(seat=0)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    steps = games = 0
    env_time = 0.0
    clock = time.perf_counter
    start = clock()
    while (elapsed := clock() - start) < seconds:
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.integers(len(legal))])
        t = clock()
        obs, _, terminated, truncated, _ = env.step(action)
        env_time += clock() - t
        steps += 1
        if terminated or truncated:
            games += 1
            t = clock()
            obs, _ = env.reset()
            env_time += clock() - t
    return {"games": games, "steps": steps, "seconds": elapsed, "steps_per_s": steps / elapsed,
            "steps_per_s_env_only": steps / env_time, "games_per_s": games / elapsed}


def sample_masks(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of a ``(B, A)`` 0/1 mask, vectorized."""
    num, width = mask.shape
    flat = np.flatnonzero(mask.view(bool) if mask.dtype == np.int8 else mask.astype(bool))
    bounds = np.searchsorted(flat, np.arange(num + 1) * width)  # each row's legal ids, in order
    starts, counts = bounds[:-1], np.diff(bounds)
    return flat[starts + (rng.random(num) * counts).astype(np.int64)] - np.arange(num) * width


def sample_compact(mask: str, obs: dict, info: dict, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per game from the vector env's legal actions in form ``mask``."""
    if mask == "dense":
        return sample_masks(obs["action_mask"], rng)
    if mask == "ids":
        ids, offsets = info["legal_ids"], info["legal_offsets"]
        counts = np.diff(offsets)
        return ids[offsets[:-1] + (rng.random(len(counts)) * counts).astype(np.int64)]
    packed = info["legal_bits"]  # little-endian bytes of the engine's uint64 words, cut to ceil(A / 8)
    words = np.zeros((len(packed), -(-packed.shape[1] // 8) * 8), np.uint8)
    words[:, : packed.shape[1]] = packed
    return sample_bits(words.view("<u8"), rng)


def vector_random_play(num_envs: int, seconds: float, seed: int, mask: str = "dense") -> dict:
    """``DouDizhuVectorEnv(num_envs, mask=mask)`` with masked random actions for about ``seconds``."""
    counter = _CountingRandom(seed + 1)
    envs = DouDizhuVectorEnv(num_envs, opponents=[counter, counter], mask=mask)  # random opponents that count
    rng = np.random.default_rng(seed)
    obs, info = envs.reset(seed=seed)
    obs, _, _, _, info = envs.step(sample_compact(mask, obs, info, rng))  # warm-up
    steps = games = 0
    counter.count = 0
    env_time = 0.0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        actions = sample_compact(mask, obs, info, rng)
        t = time.perf_counter()
        obs, _, terminated, truncated, info = envs.step(actions)
        env_time += time.perf_counter() - t
        steps += 1
        games += int((terminated | truncated).sum())
    decisions = steps * num_envs
    return {"batch": num_envs, "mask": mask, "steps": steps, "games": games, "seconds": elapsed,
            "decisions_per_s": decisions / elapsed, "decisions_per_s_env_only": decisions / env_time,
            "all_seat_decisions_per_s": (decisions + counter.count) / elapsed, "games_per_s": games / elapsed}


class _CountingRandom(RandomPolicy):
    """The vector env's default random opponent, counting its decisions."""

    count = 0

    def act(self, view):
        self.count += view.num_games
        return super().act(view)


def _decisions_cell(figures: dict) -> str:
    return f"{figures['decisions_per_s']:,.0f} ({figures['decisions_per_s_env_only']:,.0f})"


def _median(fn, repeats: int, keys) -> dict:
    runs = [fn(seed) for seed in range(repeats)]
    return {**{k: statistics.median(r[k] for r in runs) for k in keys if k in runs[0]}, "runs": runs}


def _print_one_game(result: dict) -> None:
    """The AEC and single-seat figures, and their ratios to rlcard's env (recorded in ``result``)."""
    a, g, peer = result["aec"], result["gym"], result.get("rlcard_env")
    lines = [f"  doudizhu_v0 (AEC API):   {a['steps_per_s']:>12,.0f} steps/s "
             f"({a['steps_per_s_env_only']:,.0f} in the env's calls alone)",
             f"  DouDizhu-v0 (one seat):  {g['steps_per_s']:>12,.0f} learner steps/s "
             f"({g['steps_per_s_env_only']:,.0f} in reset and step alone)"]
    if peer is not None:
        targets = (("aec_vs_rlcard", a, TARGET_VS_RLCARD), ("gym_vs_rlcard", g, TARGET_GYM_VS_RLCARD))
        for key, fig, target in targets:
            ratio = fig["steps_per_s"] / peer["steps_per_s"]
            result[key] = {"ratio": ratio, "target": target, "met": ratio >= target}
        lines.append(f"  rlcard env:              {peer['steps_per_s']:>12,.0f} steps/s   (AEC x"
                     f"{result['aec_vs_rlcard']['ratio']:.2f}, target x{TARGET_VS_RLCARD:g}; one seat x"
                     f"{result['gym_vs_rlcard']['ratio']:.2f}, target x{TARGET_GYM_VS_RLCARD:g})")
    print("\n".join(lines), flush=True)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.env", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (the median is shown)")
    parser.add_argument("--batch", type=int, default=1024, help="games of the vector env")
    parser.add_argument("--mask-batches", default="1024,4096",
                        help="comma-separated games of the vector env for the mask forms ('' to skip)")
    parser.add_argument("--no-peers", action="store_true", help="skip rlcard")
    parser.add_argument("--json", help="write the figures as JSON to this path")
    args = parser.parse_args(argv)
    with command_errors(parser):  # every option and the output before the first measurement
        check_positive(args.seconds, "--seconds")
        check_count(args.repeats, "--repeats")
        check_count(args.batch, "--batch", 1, MAX_BATCH, "the games of a batch are held at once")
        try:
            batches = [int(b) for b in args.mask_batches.split(",") if b.strip()]
        except ValueError:
            raise ValueError(f"--mask-batches must be comma-separated whole numbers, got "
                             f"{args.mask_batches!r}") from None
        for b in batches:
            check_count(b, "--mask-batches", 1, MAX_BATCH, "the games of a batch are held at once")
        check_outputs_and_agents({"--json": args.json})
    secs, reps = args.seconds, args.repeats

    result = {"workload": "random legal actions, full hands, standard rules", "cpu_count": os.cpu_count()}
    one_game = {"aec": lambda s: aec_random_play(secs, s), "gym": lambda s: gym_random_play(secs, s)}
    if not args.no_peers:
        one_game["rlcard_env"] = lambda s: measure_peer("rlcard_env", secs, s)
    result.update(interleaved(one_game, reps, ("steps_per_s", "steps_per_s_env_only", "games_per_s")))
    _print_one_game(result)
    result["vector"] = _median(lambda s: vector_random_play(args.batch, secs, s), reps,
                               ("decisions_per_s", "decisions_per_s_env_only", "all_seat_decisions_per_s",
                                "games_per_s"))
    v = result["vector"]
    print(f"  vector env B={args.batch}:      {v['decisions_per_s']:>12,.0f} learner decisions/s "
          f"({v['decisions_per_s_env_only']:,.0f} in env.step alone; {v['all_seat_decisions_per_s']:,.0f} "
          f"decisions/s of all seats; {v['games_per_s']:,.0f} hands/s)", flush=True)
    if batches:
        result["vector_masks"] = {}
        print("  vector env by mask form, learner decisions/s (in env.step alone):", flush=True)
        print("    " + f"{'B':>6}" + "".join(f"{m:>28}" for m in MASKS), flush=True)
    for b in batches:
        row = result["vector_masks"][str(b)] = {}
        for m in MASKS:
            row[m] = _median(lambda s, b=b, m=m: vector_random_play(b, secs, s, mask=m), reps,
                             ("decisions_per_s", "decisions_per_s_env_only", "games_per_s"))
        cells = "".join(f"{_decisions_cell(row[m]):>28}" for m in MASKS)
        print(f"    {b:>6}{cells}", flush=True)
    result["max_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if args.json:
        write_json(args.json, result)
    return result


if __name__ == "__main__":
    main()
