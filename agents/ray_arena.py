"""Arena chunks on a Ray cluster, and the Ray session the project's Ray code shares.

Ray is an optional extra (``pip install -e ".[ray]"``): nothing imports it
until :func:`import_ray` is called, and without it that call says how to
install it.

:func:`ray_pool` is a ``pool`` for :func:`agents.arena.run_arena`: every chunk
of deals is one Ray task, placed anywhere on the cluster. A chunk draws its
cards, redeal keys and agents' seeds from ``(seed, chunk)`` alone, so the
report is the same as the local pool's for the same seed and chunk size.
Agent specs are built on the node that plays the chunk: a checkpoint path
must exist there too (a shared file system, or the same path on every node).
"""

from __future__ import annotations

import collections
import contextlib
import socket
from collections.abc import Callable, Iterable, Iterator

from .arena import one_thread

#: Where work runs: in this machine's processes, or on a Ray cluster.
BACKENDS = ("local", "ray")
#: What to do when Ray is missing (the extra of pyproject.toml).
INSTALL_HINT = ('Ray is not installed; install the extra with pip install -e ".[ray]" '
                '(or pip install "ray>=2.60")')


class ClusterUnreachable(ConnectionError):
    """The Ray cluster of an address could not be reached."""


def import_ray():
    """The ``ray`` module, or ``ImportError`` saying how to install it."""
    try:
        import ray
    except ImportError as err:
        raise ImportError(f"{INSTALL_HINT} ({err})") from err
    return ray


@contextlib.contextmanager
def ray_session(address: str = "", num_cpus: int | None = None):
    """Ray for the duration of the block, left as it was found.

    This process's Ray connection when there is one (``ray.init`` called
    before, e.g. by a test); else the cluster at ``address`` (``auto``: the
    one started on this machine by ``ray start``; ``HOST:PORT``: its head
    node), disconnected at the end; else (``address`` empty) a new local
    instance with ``num_cpus`` CPUs (default: all of them) and no dashboard,
    stopped at the end. A cluster that cannot be reached raises
    :class:`ClusterUnreachable` naming the address.
    """
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    if address:
        check_reachable(address)
        try:
            ray.init(address=address)
        except (ConnectionError, ValueError, RuntimeError) as err:
            raise ClusterUnreachable(f"cannot connect to the Ray cluster at {address!r} ({err}); expected "
                                     "'auto' or the HOST:PORT that `ray start --head` printed (a cluster "
                                     "with token authentication also needs RAY_AUTH_MODE=token and its "
                                     "token here: docs/distributed.md)") from err
    else:
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """:class:`ClusterUnreachable` when nothing listens at ``HOST:PORT`` (Ray would retry for minutes).

    ``auto`` and ``ray://...`` are left to ``ray.init``; anything else that is not ``HOST:PORT``
    (``:6379``, ``host:``, ``host:port``) is :class:`ClusterUnreachable` at once, before Ray logs
    its own traceback.
    """
    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise ClusterUnreachable(f"{address[:80]!r} is not a Ray address; expected 'auto' or HOST:PORT "
                                 "(e.g. 10.0.0.5:6379, as `ray start --head` printed it)")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as err:
        raise ClusterUnreachable(f"nothing answers at {address!r} ({err}); expected the HOST:PORT of a "
                                 "running Ray head node, as `ray start --head` printed it") from err


def cluster_cpus(ray) -> int:
    """The CPUs of the connected cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _play_in_task(play: Callable, job):
    """One chunk's Ray task: with one torch thread, like a local worker (:func:`~agents.arena.one_thread`)."""
    one_thread()
    return play(job)


def ray_pool(max_in_flight: int | None = None,
             num_cpus: float = 1.0) -> Callable[[Callable, Iterable], Iterator]:
    """A ``pool`` for :func:`agents.arena.run_arena` playing each chunk as a Ray task.

    At most ``max_in_flight`` chunks are submitted at once (default: the
    cluster's CPUs), each task reserving ``num_cpus``; results come back in
    the order of the jobs. Ray must be connected when the pool runs
    (:func:`ray_session`). A task whose worker dies is retried by Ray; a chunk
    is deterministic, so a retry gives the same result.
    """
    ray = import_ray()

    def run(play: Callable, jobs: Iterable) -> Iterator:
        task = ray.remote(num_cpus=num_cpus)(_play_in_task)
        limit = max_in_flight or cluster_cpus(ray)
        pending: collections.deque = collections.deque()
        for job in jobs:
            pending.append(task.remote(play, job))
            if len(pending) >= limit:
                yield ray.get(pending.popleft())
        while pending:
            yield ray.get(pending.popleft())

    return run


@contextlib.contextmanager
def chunk_pool(backend: str, address: str, workers: int | None):
    """The ``pool`` of :func:`agents.arena.run_arena` for a backend: None (local) or Ray tasks.

    For ``ray``, connected (or a local instance started) for the block.
    """
    if backend == "local":
        yield None
        return
    with ray_session(address, num_cpus=workers):
        yield ray_pool(workers)
