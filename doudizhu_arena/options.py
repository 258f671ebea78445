"""The judges' shared command-line options and their one-line errors.

``python -m doudizhu_arena.evaluate``, ``.tournament`` and ``.sprt`` play chunks of duplicate deals
the same way, so they take the same options for it, defined once here:

- :func:`add_play_options`: ``--seed``, ``--chunk-size``, ``--workers``, ``--backend`` and
  ``--ray-address`` (where the chunks are played; the results depend on the seed and the chunk
  size, never on where they are played);
- :func:`add_fixed_landlord`: ``--fixed-landlord``, the mode without bidding;
- :func:`prepare_backend`: Ray imported before any game when ``--backend ray`` asks for it;
- :func:`exit_error`: an error as one line naming the command, exit status 2.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

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
