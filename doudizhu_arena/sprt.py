"""A sequential test for "is the candidate better than the baseline?", on duplicate deals.

Examples::

    python -m doudizhu_arena.sprt --candidate dmc:runs/new/checkpoint.pt --baseline pretrained
    python -m doudizhu_arena.sprt --candidate pretrained --baseline rule --fixed-landlord --h1 0.1
    python -m doudizhu_arena.sprt --candidate dmc:a.pt --baseline dmc:b.pt --reference rule

From Python::

    from doudizhu_arena.sprt import sequential_test
    result = sequential_test("dmc:runs/new/checkpoint.pt", "pretrained", h0=0.0, h1=0.1)
    result.decision, result.deals, result.estimate   # "H1", 2400, {"mean": ..., "low": ..., ...}

What is measured: one number per deal, ``x``, whose mean is 0 when the two agents
are equally strong.

- Head to head (the default): the line-up ``candidate, baseline, baseline`` over
  the three rotations of the seats (with bidding) or of the roles (fixed
  landlord); ``x`` is the candidate's mean points over its three places. The
  game is zero-sum, so ``x`` has mean 0 when the candidate plays like the
  baseline, and it is the arena's ADP of the candidate against the baseline.
- Against a reference (``reference=SPEC``): both agents play ``agent, ref, ref``
  over the three rotations on the same deals; ``x`` is the candidate's mean
  points minus the baseline's.

The test (Wald's SPRT with a normal model of ``x``, the variance estimated
from the deals so far, as fishtest's normalized tests do): the hypotheses are
``H0: mean(x) = h0`` and ``H1: mean(x) = h1`` (``h1 > h0``; ADP points), and the
log-likelihood ratio after ``n`` deals of mean ``m`` and variance ``s2`` is
``n (h1 - h0) (2 m - h0 - h1) / (2 s2)``. It is checked after every chunk of
deals: ``H1`` ("better by h1") is accepted when it reaches
``log((1 - beta) / alpha)``, ``H0`` ("not better") when it falls to
``log(beta / (1 - alpha))``. ``alpha`` bounds the chance of accepting H1 when
H0 holds, ``beta`` that of accepting H0 when H1 holds; checking per chunk
rather than per deal only lowers them. Without a decision by ``max_deals``
the result is ``"inconclusive"``, with the estimate so far.

The chunks' deals and agents' seeds come from ``(seed, chunk)`` as in the
arena, so the decision and the deals it took depend on the seed and chunk
size, not on the number of workers.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import numbers
import re
import sys
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field

import numpy as np

from doudizhu_env.checks import check_seed, is_int, short
from doudizhu_env.files import atomic_write, check_outputs, echo
from doudizhu_env.rules import Rules

from .arena import (
    ArenaConfig,
    chunk_deals,
    format_estimate,
    lead_values,
    mean_ci,
    one_thread,
    play_chunks,
    report_json,
)
from .cluster import ClusterUnreachable
from .options import add_fixed_landlord, add_play_options, exit_error, prepare_backend
from .ray_arena import chunk_pool

DECISIONS = ("H0", "H1", "inconclusive")
#: The smallest variance used in the ratio (all-equal deals: identical deterministic agents).
MIN_VARIANCE = 1e-12
#: The largest hypothesis in absolute value (points per deal): a game's points are int32, so a mean
#: beyond 2**31 cannot be tested, and larger ones make the log-likelihood ratio overflow.
MAX_HYPOTHESIS = 2.0**31


@dataclass(frozen=True)
class SPRTConfig:
    """The two hypotheses on the mean per-deal difference (ADP points) and the error rates."""

    h0: float = 0.0
    h1: float = 0.1
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self):
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not (_is_number(value) and 0.0 < value < 1.0):
                raise ValueError(f"{name} must be a probability strictly between 0 and 1, got {short(value)}")
        for name in ("h0", "h1"):
            value = getattr(self, name)
            if not (_is_number(value) and math.isfinite(value)):
                raise ValueError(f"{name} must be a finite number of points, got {short(value)}")
            if abs(value) > MAX_HYPOTHESIS:
                raise ValueError(f"{name} must be a mean of points per deal within "
                                 f"±{MAX_HYPOTHESIS:,.0f} (no game scores more), got {value:g}")
        if not self.h1 > self.h0:
            raise ValueError(f"h1 must be greater than h0 (H1: better by h1), got h0={self.h0}, h1={self.h1}")
        if not self.alpha + self.beta < 1.0:
            raise ValueError(f"alpha + beta must be below 1 (Wald's bounds cross otherwise), got alpha="
                             f"{self.alpha:g}, beta={self.beta:g}")

    @property
    def lower(self) -> float:
        """Accept H0 at or below this log-likelihood ratio."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this log-likelihood ratio."""
        return math.log((1.0 - self.beta) / self.alpha)


def _is_number(x) -> bool:
    """A real number that is not a bool (Python or numpy)."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and type(x).__name__ != "bool_"


def log_likelihood_ratio(n: int, mean: float, variance: float, h0: float, h1: float) -> float:
    """The normal model's log-likelihood ratio of H1 against H0 after ``n`` values."""
    if n == 0:
        return 0.0
    llr = n * (h1 - h0) * (2.0 * mean - h0 - h1) / (2.0 * max(variance, MIN_VARIANCE))
    if math.isnan(llr):  # never with hypotheses SPRTConfig takes and values a game can give
        raise ValueError(f"the log-likelihood ratio is not a number (n={n}, mean={mean:g}, variance="
                         f"{variance:g}, h0={h0:g}, h1={h1:g}); expected finite hypotheses and values")
    return llr


@dataclass
class SPRT:
    """The test's running state: feed it per-deal values with :meth:`update`."""

    config: SPRTConfig = field(default_factory=SPRTConfig)
    min_deals: int = 2
    n: int = 0
    total: float = 0.0
    squares: float = 0.0
    values: list = field(default_factory=list)

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else math.nan

    @property
    def variance(self) -> float:
        return max(self.squares / self.n - self.mean**2, 0.0) if self.n else math.nan

    @property
    def llr(self) -> float:
        return log_likelihood_ratio(self.n, self.mean, self.variance, self.config.h0, self.config.h1)

    @property
    def decision(self) -> str | None:
        """``"H1"``, ``"H0"``, or None while undecided."""
        if self.n < self.min_deals:
            return None
        if self.llr >= self.config.upper:
            return "H1"
        if self.llr <= self.config.lower:
            return "H0"
        return None

    def update(self, values) -> str | None:
        """Add a batch of per-deal values; the decision after it."""
        values = np.asarray(values, dtype=np.float64).ravel()
        if not np.isfinite(values).all():
            raise ValueError(f"per-deal values must be finite points, got {short(values.tolist())}")
        self.n += len(values)
        self.total += float(values.sum())
        self.squares += float((values**2).sum())
        self.values.append(values)
        return self.decision


@dataclass
class SPRTResult:
    """The outcome: the decision, the deals it took, the estimate of the mean with its 95% interval."""

    decision: str
    deals: int
    estimate: dict
    llr: float
    bounds: tuple[float, float]
    config: SPRTConfig
    history: list = field(default_factory=list)  # (deals, llr) after each chunk
    setup: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"decision": self.decision, "deals": self.deals, "estimate": self.estimate, "llr": self.llr,
                "bounds": list(self.bounds), "config": dataclasses.asdict(self.config),
                "history": self.history, "setup": self.setup}

    def summary(self) -> str:
        """One paragraph for people."""
        e, c = self.estimate, self.config
        said = {"H1": f"better: H1 (+{c.h1:g}) accepted", "H0": f"not better: H0 ({c.h0:+g}) accepted",
                "inconclusive": "no decision within the deals allowed"}[self.decision]
        if self.deals <= 1:
            llr = "none (one deal has no variance)"
        elif abs(self.llr) < 1e6:
            llr = f"{self.llr:+.2f}"
        elif e.get("ci") == 0.0:
            llr = f"{self.llr:+.3g}, beyond the bounds (all deals gave one value)"
        else:
            llr = f"{self.llr:+.3g}, beyond the bounds"
        ranged = e.get("n", 0) > 1 and math.isfinite(e["ci"])
        interval = f" (95%: [{e['low']:+.3f}, {e['high']:+.3f}])" if ranged else ""
        deals = f"{self.deals:,} deal{'' if self.deals == 1 else 's'}"
        return (f"{said} after {deals}; estimate {format_estimate(e)} points per deal{interval}; LLR {llr}, "
                f"bounds [{self.bounds[0]:+.2f}, {self.bounds[1]:+.2f}], alpha {c.alpha:g}, beta {c.beta:g}")


def run_sprt(batches: Iterable, config: SPRTConfig | None = None, max_deals: int | None = None,
             min_deals: int = 2, on_batch: Callable | None = None) -> SPRTResult:
    """The SPRT over a stream of per-deal value batches, stopping at the first decision (or once
    ``max_deals`` values are in, or the stream ends: ``"inconclusive"``)."""
    test = SPRT(config or SPRTConfig(), min_deals)
    history = []
    decision = None
    for batch in batches:
        decision = test.update(batch)
        history.append((test.n, test.llr))
        if on_batch is not None:
            on_batch(test)
        if decision is not None or (max_deals is not None and test.n >= max_deals):
            break
    values = np.concatenate(test.values) if test.values else np.zeros(0)
    return SPRTResult(decision or "inconclusive", test.n, mean_ci(values), test.llr,
                      (test.config.lower, test.config.upper), test.config, history)


# ----------------------------------------------------------------------------
# per-deal values from the arena
# ----------------------------------------------------------------------------


def _configs(candidate: str, baseline: str, reference: str | None, rules: Rules, seed: int,
             chunk_size: int, agent_factory) -> list[ArenaConfig]:
    """The arena set-ups whose position-0 values make ``x``: one head to head, or two against a reference."""
    lineups = [(candidate, baseline, baseline)] if reference is None else [
        (candidate, reference, reference), (baseline, reference, reference)]
    return [ArenaConfig(lu, rules, "rotate", seed, chunk_size, agent_factory, sorted(set(lu)))
            for lu in lineups]


def deal_values(candidate: str, baseline: str, rules: Rules, *, reference: str | None = None, seed: int = 0,
                chunk_size: int = 100, max_deals: int = 50_000, workers: int = 1, pool=None,
                agent_factory: Callable | None = None) -> Generator[np.ndarray, None, None]:
    """Per chunk of deals, the values ``x`` (see the module docstring), chunk after chunk."""
    cfgs = _configs(candidate, baseline, reference, rules, seed, chunk_size, agent_factory)
    chunks = math.ceil(max_deals / chunk_size)

    def jobs():
        for k in range(chunks):
            n = min(chunk_size, max_deals - k * chunk_size)
            deals = chunk_deals(seed, k, n, rules)
            for cfg in cfgs:
                yield (cfg, k, deals, k * chunk_size)

    results = play_chunks(jobs(), workers, pool)
    try:
        for _ in range(chunks):
            values = [lead_values(next(results), cfg)[0] for cfg in cfgs]
            yield values[0] if reference is None else values[0] - values[1]
    finally:
        results.close()


def sequential_test(candidate: str, baseline: str, *, h0: float = 0.0, h1: float = 0.1, alpha: float = 0.05,
                    beta: float = 0.05, rules: Rules | str | None = None, reference: str | None = None,
                    seed: int = 0, chunk_size: int = 100, max_deals: int = 50_000, workers: int = 1,
                    pool=None, agent_factory: Callable | None = None,
                    on_batch: Callable | None = None) -> SPRTResult:
    """Is ``candidate`` better than ``baseline``? Plays chunks of duplicate deals until the SPRT
    decides (see the module docstring). ``rules``: a preset name or :class:`Rules` (default standard,
    with bidding); ``Rules.preset("standard", bidding=False)`` for a fixed landlord."""
    from doudizhu_env.rules import resolve_rules

    config = SPRTConfig(h0, h1, alpha, beta)
    for name, value in (("max_deals", max_deals), ("chunk_size", chunk_size), ("workers", workers)):
        if not (is_int(value) and value >= 1):
            raise ValueError(f"{name} must be an integer of at least 1, got {short(value)}")
    check_seed(seed)
    rules = resolve_rules(rules)
    start = time.perf_counter()
    stream = deal_values(candidate, baseline, rules, reference=reference, seed=seed, chunk_size=chunk_size,
                         max_deals=max_deals, workers=workers, pool=pool, agent_factory=agent_factory)
    try:
        # never a decision on one deal: its variance is 0 whatever the agents (the ratio is then unbounded)
        result = run_sprt(stream, config, max_deals, min_deals=max(2, min(chunk_size, max_deals)),
                          on_batch=on_batch)
    finally:
        stream.close()
    result.setup = {"candidate": candidate, "baseline": baseline, "reference": reference, "seed": seed,
                    "chunk_size": chunk_size, "max_deals": max_deals, "rules": rules.to_dict(),
                    "seconds": time.perf_counter() - start}
    return result


# ----------------------------------------------------------------------------
# command line
# ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m doudizhu_arena.sprt", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--candidate", required=True, help="agent spec of the new agent (agents.registry)")
    p.add_argument("--baseline", required=True, help="agent spec it must beat (e.g. pretrained)")
    p.add_argument("--reference", help="compare both against this agent instead of head to head")
    p.add_argument("--h0", type=float, default=0.0, help="ADP difference under H0 (default 0)")
    p.add_argument("--h1", type=float, default=0.1, help="ADP difference under H1 (default 0.1)")
    p.add_argument("--alpha", type=float, default=0.05, help="chance of accepting H1 when H0 holds")
    p.add_argument("--beta", type=float, default=0.05, help="chance of accepting H0 when H1 holds")
    add_fixed_landlord(p)
    p.add_argument("--max-deals", type=int, default=50_000, help="stop undecided after this many deals")
    add_play_options(p, chunk_size=100, chunk_help="deals between looks")
    p.add_argument("--json", help="write the result here (replaced if it exists)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


def _progress(every: float = 5.0) -> Callable:
    """A line at most every ``every`` seconds: deals so far, the estimate, the ratio and its bounds."""
    last = [time.perf_counter()]

    def show(test: SPRT) -> None:
        if time.perf_counter() - last[0] >= every:
            last[0] = time.perf_counter()
            echo(f"  deals {test.n:>7,}  mean {test.mean:+.3f}  LLR {test.llr:+.2f} "
                 f"(decides at {test.config.lower:+.2f} / {test.config.upper:+.2f})")

    return show


def check_args(args, rules: Rules) -> SPRTConfig:
    """The test's config from the options, every option and file checked before any game (one-line
    ``ValueError``s naming the option)."""
    from agents.registry import check_specs, spec_files

    try:
        config = SPRTConfig(args.h0, args.h1, args.alpha, args.beta)
    except ValueError as err:  # named as the options are
        message = str(err).replace("alpha + beta", "--alpha + --beta")
        raise ValueError(re.sub(r"^(alpha|beta|h0|h1)\b", r"--\1", message)) from None
    for name in ("max_deals", "chunk_size", "workers"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    check_seed(args.seed, "--seed")
    specs = [args.candidate, args.baseline] + ([args.reference] if args.reference else [])
    check_outputs({"--json": args.json}, inputs=spec_files(specs))
    one_thread()
    check_specs(specs, rules)
    return config


def main(argv=None) -> SPRTResult:
    """Run the test, write the JSON asked for, print the decision. Ctrl-C stops it with one line (exit
    status 130); stdout closed early (``| head -1``) stops the printing, not the test or its file."""
    parser = build_parser()
    args = parser.parse_args(argv)
    rules = Rules.preset("standard", bidding=not args.fixed_landlord)
    try:
        config = check_args(args, rules)
        prepare_backend(args)
    except (ValueError, OSError, ImportError) as err:
        exit_error(parser, err)
    except KeyboardInterrupt:  # while the agents load
        parser.exit(130, f"{parser.prog}: interrupted by Ctrl-C before the first game: nothing played\n")
    echo(f"SPRT: is {args.candidate} better than {args.baseline}"
         f"{' (both against ' + args.reference + ')' if args.reference else ' (head to head)'}? "
         f"H0 {config.h0:+g} against H1 {config.h1:+g} points per deal, "
         f"{'fixed landlord' if args.fixed_landlord else 'with bidding'}")
    try:
        with chunk_pool(args.backend, args.ray_address, args.workers) as pool:
            result = sequential_test(args.candidate, args.baseline, h0=config.h0, h1=config.h1,
                                     alpha=config.alpha, beta=config.beta, rules=rules,
                                     reference=args.reference, seed=args.seed, chunk_size=args.chunk_size,
                                     max_deals=args.max_deals, workers=args.workers or 1, pool=pool,
                                     on_batch=None if args.quiet else _progress())
    except ClusterUnreachable as err:
        exit_error(parser, err, "--ray-address")
    except KeyboardInterrupt:
        parser.exit(130, f"{parser.prog}: interrupted by Ctrl-C: no decision, nothing written (the test "
                         "keeps no partial results); run the same command again to start it over (same "
                         "seed, same deals)\n")
    if args.json:
        atomic_write(args.json, report_json(result.to_dict()))
    echo(result.summary() + f" ({result.setup['seconds']:.0f}s)")
    if args.json:
        echo(f"written: {args.json}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
