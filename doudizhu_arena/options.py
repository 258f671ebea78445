"""The judges' shared command-line options and their one-line errors.

``python -m doudizhu_arena.evaluate``, ``.tournament`` and ``.sprt`` play chunks of duplicate deals
the same way, so they take the same options for it, defined once here:

- :func:`add_play_options`: ``--seed``, ``--chunk-size``, ``--workers``, ``--backend`` and
  ``--ray-address`` (where the chunks are played; the results depend on the seed and the chunk
  size, never on where they are played);
- :func:`add_fixed_landlord`: ``--fixed-landlord``, the mode without bidding;
- :func:`prepare_backend`: Ray imported before any game when ``--backend ray`` asks for it;
- :func:`exit_error`: an error as one line naming the command, exit status 2;
- :func:`check_count`, :func:`check_deals`, :func:`check_positive`: numbers in range, one-line
  ``ValueError`` naming the option;
- :func:`check_outputs_and_agents`: before any game, outputs that are not inputs and every agent
  built once; :func:`command_errors`: those errors as the command's one line, exit status 2.

Seeds are checked by :func:`doudizhu_env.checks.check_seed` (``--seed`` in 0..2**63-1).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import NoReturn

from doudizhu_env.rules import Rules

from .cluster import BACKENDS, import_ray


def add_play_options(p: argparse.ArgumentParser, chunk_size: int,
                     chunk_help: str = "deals per chunk") -> None:
    """The options of where and how the chunks of deals are played."""
    p.add_argument("--seed", type=int, default=0, help="seed of the deals (default 0)")
    p.add_argument("--chunk-size", type=int, default=chunk_size,
                   help=f"{chunk_help} (default {chunk_size}; results depend on it)")
    p.add_argument("--workers", type=int, help="processes (default 1), or with --backend ray the chunks "
                   "played at once (default: the cluster's CPUs); results do not depend on it")
    p.add_argument("--backend", choices=BACKENDS, default="local",
                   help="where the chunks are played: local (this process or --workers processes, the "
                        "default) or ray (Ray tasks over a cluster; needs pip install -e '.[ray]')")
    p.add_argument("--ray-address", default="", help="with --backend ray, the cluster: auto (the one "
                   "`ray start` started here) or HOST:PORT; default: a local Ray instance for this run")


def add_fixed_landlord(p: argparse.ArgumentParser) -> None:
    """``--fixed-landlord``: no bidding, the deal gives the landlord."""
    p.add_argument("--fixed-landlord", action="store_true", help="no bidding: the deal gives the landlord")


def prepare_backend(args: argparse.Namespace) -> None:
    """Import Ray now (a one-line ImportError saying how to install it) when ``--backend ray``."""
    if args.backend == "ray":
        import_ray()


def exit_error(parser: argparse.ArgumentParser, err: BaseException | str, option: str = "") -> NoReturn:
    """Exit 2 with ``err`` as one line (its white space folded), naming the command and ``option``."""
    where = f"{option}: " if option else ""
    parser.exit(2, f"{parser.prog}: error: {where}{' '.join(str(err).split())}\n")


# ----------------------------------------------------------------------------
# checks before the first game, shared by the judges and the benchmark commands
# ----------------------------------------------------------------------------


def check_count(value, option: str, low: int = 1, high: int | None = None, why: str = "") -> None:
    """``ValueError`` naming ``option`` unless ``value`` (an int, or None: not given) is in ``low..high``;
    ``why`` says what the upper bound protects."""
    if value is None:
        return
    if value < low:
        raise ValueError(f"{option} must be at least {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{option} must be at most {high:,}{f' ({why})' if why else ''}, got {value:,}")


def check_deals(value: int, option: str = "--deals", high: int = 1_000_000, low: int = 1) -> None:
    """The deal count of a command: every deal is dealt before the first game, so it is bounded."""
    check_count(value, option, low, high, "every deal is made before the first game; run several times "
                "with different --seed instead")


def check_positive(value, option: str) -> None:
    """``ValueError`` naming ``option`` unless ``value`` (a float, or None) is finite and above 0."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise ValueError(f"{option} must be a finite number above 0, got {value}")


def check_outputs_and_agents(outputs: dict, specs: Sequence[str] = (), rules: Sequence[Rules | None] = (),
                             inputs: Sequence = ()) -> None:
    """Before any game: the outputs (``{option: path or None}``) can be written and none of them is an
    input (the files ``specs`` name, and ``inputs``) or another output; then every agent of ``specs``
    is built once under each of ``rules`` (None: the agent's own; torch held to one thread first), so
    that a bad spec or checkpoint is a one-line ``ValueError`` naming it before the first game of any
    part."""
    from agents.registry import check_specs, spec_files
    from doudizhu_env.files import check_outputs

    from .arena import one_thread

    check_outputs(outputs, inputs=[*(i for i in inputs if i), *spec_files(specs)])
    one_thread()
    for r in rules:
        check_specs(specs, r)


@contextmanager
def command_errors(parser: argparse.ArgumentParser) -> Iterator[None]:
    """``with command_errors(parser): ...``: a ``ValueError``, ``OSError`` or ``ImportError`` raised
    in the block is the command's one-line error (:func:`exit_error`, exit status 2)."""
    try:
        yield
    except (ValueError, OSError, ImportError) as err:
        exit_error(parser, err)
