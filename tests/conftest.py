"""Fixtures shared by the test modules."""

import pytest
from scripted_deals import HANDS


@pytest.fixture(params=HANDS, ids=lambda hand: hand.name)
def scripted_hand(request):
    """Each scripted hand of ``scripted_deals.HANDS`` in turn (deal, script, points)."""
    return request.param
