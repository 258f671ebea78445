"""Scripted hands through the engine, checked against docs/rules.md ("A hand, start to finish",
"Scoring")."""

import dataclasses

import numpy as np
import pytest
from helpers import action_ids, play_names, state_fields
from scripted_deals import REVERSE_DEAL, SPRING_DEAL

from doudizhu_env import Rules, action_table, parse_hand
from doudizhu_env.cards import DECK_COUNTS
from doudizhu_env.engine import (
    BIDDING,
    DOUBLING,
    NO_SPRING,
    OVER,
    PLAY,
    REVERSE_SPRING,
    SPRING,
    Deal,
    IllegalActionError,
    escape,
    legal_action_mask,
    reset,
    step,
)

# Seat 0 holds six triples 3..8 (with the hole 8, 9, 2 it can go out in three plays); the
# farmers hold bombs TTTT JJJJ QQQQ KKKK AAAA and the rocket.
BASIC = Deal.coerce(SPRING_DEAL)
# Seat 1 (a farmer when seat 0 is landlord) can go out with 2, 3456789TJQKA, KKK+X.
FARMER = Deal.coerce(REVERSE_DEAL)

BIDS = {1: ["bid1", "bid0", "bid0"], 2: ["bid2", "bid0", "bid0"], 3: ["bid3"]}  # seat 0 becomes landlord
NO_DOUBLES = ["no_double", "no_double"]
PLANE = "333444555666777888"
# BASIC, landlord 0: farmer 1 plays a T, so no spring.
LANDLORD_WINS = ["9", "T", "pass", "2", "pass", "pass", PLANE]
SPRING_PLAY = ["9", "pass", "pass", "2", "pass", "pass", PLANE]
# FARMER, landlord 0: the landlord plays 5 and T, farmer 1 goes out.
FARMERS_WIN = ["5", "pass", "8", "T", "2", "pass", "pass", "3456789TJQKA", "pass", "pass", "KKK+X"]
REVERSE_SPRING_PLAY = ["5", "2", "pass", "pass", "3456789TJQKA", "pass", "pass", "KKK+X"]


def start(deal=BASIC, rules=None, num_games=1):
    return reset(0, num_games, rules, deals=[deal] * num_games)


def play(names, deal=BASIC, rules=None, state=None):
    """Play action names one at a time in a single game (``deal`` under ``rules``, or ``state``)."""
    return play_names(start(deal, rules) if state is None else state, names)


def points(landlord, landlord_won, base, mult):
    """docs/rules.md, "Scoring": landlord +-2 x base x mult, each farmer -+base x mult."""
    sign = 1 if landlord_won else -1
    p = [-sign * base * mult] * 3
    p[landlord] = 2 * sign * base * mult
    return p


def assert_same(a, b, skip=()):
    for name, value in state_fields(a).items():
        if name not in skip:
            np.testing.assert_array_equal(value, getattr(b, name), err_msg=name)


# ---------------------------------------------------------------------------- scoring


@pytest.mark.parametrize("bid", [1, 2, 3])
@pytest.mark.parametrize(
    "deal, moves, landlord_won", [(BASIC, LANDLORD_WINS, True), (FARMER, FARMERS_WIN, False)]
)
def test_win_with_each_bid(bid, deal, moves, landlord_won):
    s = play(BIDS[bid] + NO_DOUBLES + moves, deal)
    # base = bid, multiplier 1 (no bomb, rocket, double or spring):
    # landlord wins: [2b, -b, -b]; farmers win: [-2b, b, b].
    assert s.done[0] and s.ended[0] and s.phase[0] == OVER and not s.truncated[0]
    assert s.landlord[0] == 0 and s.base[0] == bid and s.multiplier[0] == 1
    assert s.scores[0].tolist() == points(0, landlord_won, bid, 1)
    assert s.rewards[0].tolist() == s.scores[0].tolist()
    assert s.scores[0].sum() == 0


@pytest.mark.parametrize(
    "deal, bid, moves, landlord_won, mult, spring",
    [
        # spring: landlord wins, farmers never played: x2 -> [2*3*2, -6, -6]
        (BASIC, 3, SPRING_PLAY, True, 2, SPRING),
        (BASIC, 1, SPRING_PLAY, True, 2, SPRING),
        # reverse spring: farmers win, the landlord only led once: x2 -> [-2*1*2, 2, 2]
        (FARMER, 1, REVERSE_SPRING_PLAY, False, 2, REVERSE_SPRING),
        (FARMER, 2, REVERSE_SPRING_PLAY, False, 2, REVERSE_SPRING),
        # the landlord played twice: no reverse spring
        (FARMER, 2, FARMERS_WIN, False, 1, NO_SPRING),
        # one farmer played: no spring
        (BASIC, 2, LANDLORD_WINS, True, 1, NO_SPRING),
    ],
)
def test_spring_and_reverse_spring(deal, bid, moves, landlord_won, mult, spring):
    s = play(BIDS[bid] + NO_DOUBLES + moves, deal)
    assert s.spring[0] == spring and s.multiplier[0] == mult
    assert s.scores[0].tolist() == points(0, landlord_won, bid, mult)


@pytest.mark.parametrize(
    "moves, bombs, rocket",
    [
        # a bomb (TTTT) played: x2 -> [2*1*2, -2, -2]
        (["9", "TTTT", "pass", "pass", "3", "pass", "2", "pass", "pass", PLANE], 1, False),
        # the rocket played: x2
        (["9", "pass", "XD", "pass", "pass", "Q", "2", "pass", "pass", PLANE], 0, True),
        # two bombs: x4
        (["9", "TTTT", "QQQQ", "pass", "pass", "K", "2", "pass", "pass", PLANE], 2, False),
        # a bomb and the rocket: x4
        (["9", "TTTT", "XD", "pass", "pass", "Q", "2", "pass", "pass", PLANE], 1, True),
    ],
)
def test_bombs_and_rocket_played_double_the_stake(moves, bombs, rocket):
    s = play(BIDS[1] + NO_DOUBLES + moves)
    mult = 2 ** (bombs + rocket)
    assert s.bombs[0] == bombs and s.rocket[0] == rocket and s.multiplier[0] == mult
    assert s.spring[0] == NO_SPRING
    assert s.scores[0].tolist() == points(0, True, 1, mult)


def test_bombs_and_rocket_in_hand_count_nothing():
    s = play(BIDS[2] + NO_DOUBLES + LANDLORD_WINS)
    # the farmers still hold TTTT JJJJ QQQQ KKKK AAAA and XD: base 2, multiplier 1 -> [4, -2, -2]
    assert s.hands[0, 2].tolist() == parse_hand("QQQQKKKKAAAA222XD").tolist()
    assert s.bombs[0] == 0 and not s.rocket[0]
    assert s.scores[0].tolist() == [4, -2, -2]


@pytest.mark.parametrize(
    "doubling, doubles, mult",
    [
        (["no_double", "no_double"], [-1, 0, 0], 1),  # nobody doubled: the landlord is not asked
        (["double", "no_double", "no_double"], [0, 1, 0], 2),  # one farmer double
        (["no_double", "double", "no_double"], [0, 0, 1], 2),
        (["double", "no_double", "double"], [1, 1, 0], 4),  # one farmer double + redouble
        (["double", "double", "no_double"], [0, 1, 1], 4),  # two farmer doubles
        (["double", "double", "double"], [1, 1, 1], 8),  # two farmer doubles + redouble
    ],
)
def test_doubling(doubling, doubles, mult):
    s = play(BIDS[1] + doubling)
    assert s.phase[0] == PLAY and s.to_act[0] == 0 and s.doubles[0].tolist() == doubles
    s = play(LANDLORD_WINS, state=s)
    # landlord wins, base 1: [2 * mult, -mult, -mult]
    assert s.multiplier[0] == mult and s.scores[0].tolist() == points(0, True, 1, mult)


def test_doubling_order_follows_the_landlord():
    # landlord 1: farmer 2 (after the landlord), then farmer 0, then the landlord redoubles
    s = play(["bid3"], dataclasses.replace(BASIC, first_bidder=1))
    assert s.phase[0] == DOUBLING and s.landlord[0] == 1
    order = []
    for name in ["double", "no_double", "double"]:
        order.append(int(s.to_act[0]))
        s = play([name], state=s)
    assert order == [2, 0, 1]
    assert s.phase[0] == PLAY and s.to_act[0] == 1 and s.multiplier[0] == 4


# ---------------------------------------------------------------------------- redeal, truncation, escape


def test_redeal_after_three_passes():
    s0 = start()
    s = play(["bid0"] * 3, state=s0)
    assert s.redeals[0] == 1 and s.episode[0] == 0
    assert s.phase[0] == BIDDING and s.first_bidder[0] == 1 and s.to_act[0] == 1
    assert not s.done[0] and not s.ended[0] and s.scores[0].tolist() == [0, 0, 0]
    assert s.history_len[0] == 0 and (s.history[0] == -1).all()
    assert s.bids[0].tolist() == [-1, -1, -1] and s.base[0] == 0 and s.landlord[0] == -1
    assert not np.array_equal(s.deal, s0.deal)  # new cards
    assert s.hands[0].sum(axis=1).tolist() == [17, 17, 17] and s.hole[0].sum() == 3
    assert (s.hands[0].sum(axis=0) + s.hole[0]).tolist() == DECK_COUNTS.tolist()
    s = play(["bid0"] * 3, state=s)
    assert s.redeals[0] == 2 and s.first_bidder[0] == 2 and s.to_act[0] == 2


def test_truncation_past_the_redeal_bound():
    s = start(rules=Rules.preset("standard", redeal_limit=2))
    s = play(["bid0"] * 8, state=s)  # two redeals, then two passes
    assert not s.done[0] and s.redeals[0] == 2
    s = play(["bid0"], state=s)  # the third redeal passes the bound of 2
    assert s.done[0] and s.truncated[0] and s.ended[0] and s.phase[0] == OVER
    assert s.scores[0].tolist() == [0, 0, 0] and s.rewards[0].tolist() == [0, 0, 0]


@pytest.mark.parametrize(
    "moves, seat, loss",
    [
        ([], 1, -3),  # no one has bid: -3
        (["bid0"], 0, -3),  # still no bid
        (["bid2"], 2, -6),  # -3 x base 2 x 1
        (BIDS[2] + ["double", "no_double", "double"], 0, -24),  # -3 x 2 x 4
        (BIDS[2] + ["double", "no_double", "double", "9", "TTTT"], 1, -48),  # -3 x 2 x 8
    ],
)
def test_escape(moves, seat, loss):
    s = play(moves)
    s = escape(s, [seat])
    expected = [0, 0, 0]
    expected[seat] = loss
    assert s.done[0] and s.ended[0] and s.escaped[0] == seat and not s.truncated[0]
    assert s.scores[0].tolist() == expected and s.rewards[0].tolist() == expected


# ---------------------------------------------------------------------------- douzero preset


@pytest.mark.parametrize("landlord", [0, 1, 2])
def test_douzero_starts_in_play_with_given_landlord(landlord):
    s = start(dataclasses.replace(BASIC, landlord=landlord), "douzero")
    assert s.phase[0] == PLAY and s.landlord[0] == landlord and s.to_act[0] == landlord and s.base[0] == 1
    sizes = [20 if seat == landlord else 17 for seat in range(3)]
    assert s.hands[0].sum(axis=1).tolist() == sizes
    mask = legal_action_mask(s)[0]
    assert not mask[:7].any()  # no pass, bid or double when leading
    # standard rules ignore Deal.landlord: there is bidding
    assert start(dataclasses.replace(BASIC, landlord=landlord)).phase[0] == BIDDING


@pytest.mark.parametrize(
    "moves, mult",
    [
        (SPRING_PLAY, 1),  # no spring in douzero: [2, -1, -1]
        (["9", "TTTT", "pass", "pass", "3", "pass", "2", "pass", "pass", PLANE], 2),  # bomb: [4, -2, -2]
    ],
)
def test_douzero_scoring(moves, mult):
    s = play(moves, dataclasses.replace(BASIC, landlord=0), "douzero")
    assert s.spring[0] == NO_SPRING and (s.doubles[0] == -1).all()
    assert s.scores[0].tolist() == points(0, True, 1, mult)


# ---------------------------------------------------------------------------- bidding


@pytest.mark.parametrize(
    "before, bad, legal",
    [
        (["bid2"], "bid2", ["bid0", "bid3"]),
        (["bid2"], "bid1", ["bid0", "bid3"]),
        (["bid1"], "bid1", ["bid0", "bid2", "bid3"]),
        (["bid1", "bid2"], "bid2", ["bid0", "bid3"]),
        (["bid1", "bid0"], "bid1", ["bid0", "bid2", "bid3"]),
        ([], "double", ["bid0", "bid1", "bid2", "bid3"]),
        ([], "pass", ["bid0", "bid1", "bid2", "bid3"]),
        ([], "33", ["bid0", "bid1", "bid2", "bid3"]),
    ],
)
def test_bids_must_rise(before, bad, legal):
    s = start(num_games=2)
    for name in before:
        s = step(s, action_ids(s, name, name))
    with pytest.raises(IllegalActionError) as err:
        step(s, action_ids(s, legal[0], bad))  # game 0 is fine, game 1 is not
    msg = str(err.value)
    assert "game 1" in msg and repr(bad) in msg and "bidding" in msg
    assert f"legal: [{', '.join(legal)}]" in msg
    mask = legal_action_mask(s)[1]
    assert [action_table().names[i] for i in np.flatnonzero(mask)] == legal


def test_bid3_ends_bidding_at_once():
    s = play(["bid3"], dataclasses.replace(BASIC, first_bidder=1))
    assert s.landlord[0] == 1 and s.base[0] == 3 and s.bids[0].tolist() == [-1, 3, -1]
    assert s.phase[0] == DOUBLING and s.to_act[0] == 2


@pytest.mark.parametrize(
    "first, bids, landlord, base",
    [
        (0, ["bid1", "bid2", "bid0"], 1, 2),
        (1, ["bid1", "bid0", "bid2"], 0, 2),
        (2, ["bid0", "bid0", "bid1"], 1, 1),
        (2, ["bid1", "bid0", "bid0"], 2, 1),
        (0, ["bid0", "bid1", "bid3"], 2, 3),
    ],
)
def test_highest_bidder_after_three_turns(first, bids, landlord, base):
    s = start(dataclasses.replace(BASIC, first_bidder=first))
    for k, name in enumerate(bids):
        assert s.phase[0] == BIDDING and s.to_act[0] == (first + k) % 3
        s = play([name], state=s)
    assert s.phase[0] == DOUBLING and s.landlord[0] == landlord and s.base[0] == base


@pytest.mark.parametrize("first, bids, landlord", [(0, BIDS[2], 0), (2, ["bid0", "bid0", "bid1"], 1)])
def test_hole_cards_join_the_landlord_and_stay_public(first, bids, landlord):
    deal = dataclasses.replace(BASIC, first_bidder=first)
    s0 = start(deal)
    hole = parse_hand(deal.hole)
    assert s0.hands[0].sum(axis=1).tolist() == [17, 17, 17]
    assert s0.hole[0].tolist() == hole.tolist()
    s = play(bids + NO_DOUBLES, state=s0)
    assert s.landlord[0] == landlord
    assert s.hands[0, landlord].tolist() == (parse_hand(deal.hands[landlord]) + hole).tolist()
    assert s.hands[0].sum(axis=1).tolist() == [20 if seat == landlord else 17 for seat in range(3)]
    assert s.hole[0].tolist() == hole.tolist()  # still shown to everyone


# ---------------------------------------------------------------------------- play


def test_landlord_leads_and_may_not_pass():
    s = play(BIDS[1] + NO_DOUBLES)
    assert s.phase[0] == PLAY and s.to_act[0] == 0 and s.leading[0]
    assert not legal_action_mask(s)[0, 0]
    with pytest.raises(IllegalActionError, match="'pass'.*play phase"):
        step(s, action_ids(s, "pass"))


def test_after_two_passes_the_last_player_leads_anything():
    s = play(BIDS[1] + NO_DOUBLES + ["9", "T", "pass"])
    assert not s.leading[0]
    with pytest.raises(IllegalActionError):
        step(s, action_ids(s, "3"))  # the landlord's 3 does not beat T
    s = play(["pass"], state=s)
    assert s.to_act[0] == 1 and s.leading[0] and s.to_beat[0] == -1
    with pytest.raises(IllegalActionError):
        step(s, action_ids(s, "pass"))
    s = play(["3"], state=s)  # lower than the T on the table before
    assert s.to_beat_seat[0] == 1 and s.hands[0, 1].sum() == 15


def test_stepping_a_finished_game_is_a_noop():
    s = start(num_games=2)
    names = BIDS[1] + NO_DOUBLES + SPRING_PLAY
    for name in names:
        s = step(s, action_ids(s, name, "bid0"))  # game 1 keeps passing (and redealing)
    assert s.done[0] and not s.done[1]
    after = step(s, np.array([999_999, int(action_ids(s, "bid0")[0])]))  # game 0's action is ignored
    assert after.done[0] and not after.ended[0] and after.rewards[0].tolist() == [0, 0, 0]
    for name, value in state_fields(s).items():
        if name not in ("rewards", "ended"):
            np.testing.assert_array_equal(value[0], getattr(after, name)[0], err_msg=name)
    assert after.history_len[1] == s.history_len[1] + 1
    assert not legal_action_mask(s)[0].any()  # nothing is legal in a finished game


def test_out_of_range_action_raises():
    s = start()
    with pytest.raises(IllegalActionError, match="game 0: action id -1 out of range"):
        step(s, np.array([-1]))


@pytest.mark.parametrize(
    "moves, bad",
    [
        (["bid2"], "bid2"),
        (["bid2"], "bid1"),
        (BIDS[1], "pass"),
        (BIDS[1] + NO_DOUBLES, "pass"),  # leading
        (BIDS[1] + NO_DOUBLES, "TTTT"),  # not in the hand
        (BIDS[1] + NO_DOUBLES + ["9"], "8"),  # does not beat
        (BIDS[1] + NO_DOUBLES + ["9"], "99"),  # wrong type
    ],
)
def test_illegal_step_leaves_the_input_unchanged(moves, bad):
    s = start(num_games=2)
    for name in moves:
        s = step(s, action_ids(s, name, name))
    before = {name: np.copy(value) for name, value in state_fields(s).items()}
    legal = np.flatnonzero(legal_action_mask(s)[0])[0]
    with pytest.raises(IllegalActionError, match="game 1"):
        step(s, np.array([legal, action_ids(s, bad)[0]]))
    for name, value in before.items():
        np.testing.assert_array_equal(value, getattr(s, name), err_msg=name)


@pytest.mark.parametrize(
    "hands, hole, match",
    [
        (("3334445556667778", *BASIC.hands[1:]), "892", "17 cards and 3 hole cards"),  # 16 cards
        (BASIC.hands, "8923", "17 cards and 3 hole cards"),  # 4 hole cards
        (("77777", "", ""), "", "5 x 7"),  # five 7s in one hand
        (("33344455566677788", "345678999TTTTJJJJ", "QQQQKKKKAAAA222X7"), "892", "5 x 7"),  # across hands
        (BASIC.hands, "893", "5 x 3"),  # a 3 in the hole and in seat 0
        ((*BASIC.hands[:2], "QQQQKKKKAAAA222XX"), "892", "2 x X"),
        (BASIC.hands, "89Z", "bad card character"),
    ],
)
def test_impossible_deal_raises(hands, hole, match):
    with pytest.raises(ValueError, match=match):
        reset(0, 1, deals=[Deal(hands=hands, hole=hole)])


@pytest.mark.parametrize(
    "kwargs, match", [({"first_bidder": 3}, "first_bidder"), ({"landlord": 5}, "landlord")]
)
def test_deal_bad_seats_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        reset(0, 1, deals=[dataclasses.replace(BASIC, **kwargs)])


def test_wrong_number_of_deals_raises():
    with pytest.raises(ValueError, match="2 deals for 3 games"):
        reset(0, 3, deals=[BASIC, BASIC])


@pytest.mark.parametrize("field", ["first_bidder", "landlord"])
def test_deal_rejects_bool_seats(field):
    """Regression: True is not a seat (it used to pass as seat 1)."""
    deal = dataclasses.replace(BASIC, **{field: True})
    with pytest.raises(ValueError, match=field):
        reset(0, 1, deals=[deal])
