"""Golden deals: the hands a given seed deals are pinned, so that a change of the deal stream is seen
(every seeded result, benchmark and checkpoint evaluation depends on it), not just tolerated."""

import numpy as np
import pytest

from doudizhu_arena.arena import make_deals
from doudizhu_env import engine
from doudizhu_env.cards import format_hand


@pytest.mark.parametrize("seed, rules, game, hands, hole, first, ids", [
    (0, "standard", 0, ("34566699TJJKAA2XD", "34455567889TQK222", "33477789TTJJQQKKA"), "8QA", 2,
     [31, 2, 52, 12, 15, 34]),
    (0, "standard", 1, ("456668TTTJJQQKA2D", "33456789TJQKKA22X", "33445577899JQKAA2"), "789", 1,
     [14, 35, 33, 15, 11, 41]),
])
def test_a_seed_deals_these_hands(seed, rules, game, hands, hole, first, ids):
    state = engine.reset(np.random.default_rng(seed), 2, rules)
    assert tuple(format_hand(state.hands[game, s]) for s in range(3)) == hands
    assert format_hand(state.hole[game]) == hole and int(state.first_bidder[game]) == first
    assert state.deal[game][:6].tolist() == ids  # the suits too (records and the tables show them)


def test_fixed_landlord_deals_and_the_arenas_deals_are_pinned():
    state = engine.reset(np.random.default_rng(7), 1, "douzero")
    assert [format_hand(state.hands[0, s]) for s in range(3)] == [
        "333444566899TQA2X", "45566789TTJKKAA2D", "35777889TJJJQQQKKA22"]  # the landlord holds the hole
    assert format_hand(state.hole[0]) == "7JQ" and int(state.landlord[0]) == 2
    deal = make_deals(0, 1, "standard")[0]
    assert deal.hands == ("33446667778TJQK2D", "344556899TJQKK222", "3558899TTJJQQKAAA")
    assert (deal.hole, deal.first_bidder, deal.landlord) == ("7AX", 0, None)
