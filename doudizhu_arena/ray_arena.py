"""Arena chunks on a Ray cluster.

:func:`ray_pool` is a ``pool`` for :func:`doudizhu_arena.arena.run_arena`: every chunk
of deals is one Ray task, placed anywhere on the cluster. A chunk draws its
cards, redeal keys and agents' seeds from ``(seed, chunk)`` alone, so the
report is the same as the local pool's for the same seed and chunk size.
Agent specs are built on the node that plays the chunk: a checkpoint path
must exist there too (a shared file system, or the same path on every node).
Ray itself (import, session, address check) is :mod:`doudizhu_arena.cluster`.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Callable, Iterable, Iterator

from .arena import one_thread
from .cluster import cluster_cpus, import_ray, ray_session


def _play_in_task(play: Callable, job):
    """One chunk's Ray task: with one torch thread, like a local worker
    (:func:`~doudizhu_arena.arena.one_thread`)."""
    one_thread()
    return play(job)


def ray_pool(max_in_flight: int | None = None,
             num_cpus: float = 1.0) -> Callable[[Callable, Iterable], Iterator]:
    """A ``pool`` for :func:`doudizhu_arena.arena.run_arena` playing each chunk as a Ray task.

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
    """The ``pool`` of :func:`doudizhu_arena.arena.run_arena` for a backend: None (local) or Ray tasks.

    For ``ray``, connected (or a local instance started) for the block.
    """
    if backend == "local":
        yield None
        return
    with ray_session(address, num_cpus=workers):
        yield ray_pool(workers)
