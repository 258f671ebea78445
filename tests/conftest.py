"""Fixtures shared by the test modules, and the set-up of pytest-xdist workers."""

import os

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # `make test` runs one worker per core: each holds its math libraries (torch's OpenMP pool,
    # the BLAS) to one thread, as the arena's worker processes do, instead of every worker
    # starting a thread per core and all of them contending for the same cores. Set before any
    # test module imports torch or numpy, which read these once.
    for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, "1")

from scripted_deals import HANDS  # noqa: E402


@pytest.fixture(params=HANDS, ids=lambda hand: hand.name)
def scripted_hand(request):
    """Each scripted hand of ``scripted_deals.HANDS`` in turn (deal, script, points)."""
    return request.param
