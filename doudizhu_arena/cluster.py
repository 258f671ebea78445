"""Ray, shared by the project's Ray code: the backends, the import, the session, the address check.

Ray is an optional extra (``pip install -e ".[ray]"``): nothing imports it
until :func:`import_ray` is called, and without it that call says how to
install it. The arena's Ray pool (:mod:`doudizhu_arena.ray_arena`) and the training
run's Ray actors (:mod:`train.ray_backend`) both run inside :func:`ray_session`.
"""

from __future__ import annotations

import contextlib
import socket

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
