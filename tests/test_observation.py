"""The observation pieces on a scripted hand: each piece says what its docstring says."""

import numpy as np
import pytest
from helpers import play_names
from scripted_deals import SPRING_DEAL

from doudizhu_env import action_table, parse_hand
from doudizhu_env.engine import Deal, reset
from doudizhu_env.observation import (
    ACTION_SIZE,
    OBS_SIZE,
    PIECES,
    action_features,
    card_bits,
    observe,
    piece_slice,
)

DEAL = Deal.coerce(SPRING_DEAL)  # seat 0: six triples 3..8; the farmers: five bombs and the rocket
TABLE = action_table()


def play(names):
    return play_names(reset(0, 1, deals=[DEAL]), names)


def piece(obs, name):
    return obs[0, piece_slice(name)]


def one_hot_slots(obs, name, size):
    """The category index of each slot of a one-hot piece (-1 for an empty slot)."""
    slots = piece(obs, name).reshape(-1, size)
    return [int(np.argmax(s)) if s.any() else -1 for s in slots]


def test_layout_is_consistent():
    assert sum(size for _, size in PIECES) == OBS_SIZE
    assert len({name for name, _ in PIECES}) == len(PIECES)
    assert action_features("standard").shape == (len(TABLE), ACTION_SIZE)
    with pytest.raises(KeyError, match="unknown observation piece"):
        piece_slice("nope")


@pytest.mark.parametrize("cards", ["", "3", "3333", "XD", "3456789TJQKA2XD", "22"])
def test_card_bits_count_per_rank(cards):
    """Four bits per rank 3..2 (k-th set when at least k+1 cards), one per joker."""
    bits = card_bits(parse_hand(cards))
    assert bits.shape == (54,) and bits.sum() == len(cards)
    assert bits[0:4].tolist() == [1.0 * (cards.count("3") > k) for k in range(4)]


def test_pieces_while_bidding():
    obs = observe(play(["bid1"]))  # seat 1 to act; seat 0 bid 1
    assert np.array_equal(piece(obs, "hand"), card_bits(parse_hand(DEAL.hands[1])))
    assert not piece(obs, "hole").any() and not piece(obs, "role").any()
    assert one_hot_slots(obs, "phase", 4) == [0]
    assert one_hot_slots(obs, "bids", 5) == [0, 0, 2]  # self, next: not yet; prev (seat 0): bid 1
    assert one_hot_slots(obs, "base", 4) == [1]
    assert one_hot_slots(obs, "cards_left", 21) == [17, 17, 17]
    assert one_hot_slots(obs, "history_seats", 3)[:2] == [2, -1]  # the bid came from prev


def test_pieces_during_play():
    # seat 0 becomes landlord with the hole 8 9 2, farmers decline, the landlord leads 333444+55+66
    state = play(["bid3", "no_double", "no_double", "333444+55+66"])
    obs = observe(state)  # seat 1 (landlord_down) to act
    assert one_hot_slots(obs, "role", 3) == [1]
    assert one_hot_slots(obs, "landlord", 3) == [2]  # the landlord is the previous seat
    assert np.array_equal(piece(obs, "hole"), card_bits(parse_hand("892")))
    assert np.array_equal(piece(obs, "to_beat"), card_bits(parse_hand("3334445566")))
    assert one_hot_slots(obs, "to_beat_seat", 3) == [2]
    played = piece(obs, "played").reshape(3, 54)
    assert np.array_equal(played[2], card_bits(parse_hand("3334445566"))) and not played[:2].any()
    assert one_hot_slots(obs, "cards_left", 21) == [17, 17, 10]
    assert one_hot_slots(obs, "doubles", 3) == [1, 1, 0]  # both farmers declined; the landlord was not asked
    unseen = parse_hand("33344455566677788" + "QQQQKKKKAAAA222XD" + "892") - parse_hand("3334445566")
    assert np.array_equal(piece(obs, "unseen"), card_bits(unseen))
    moves = piece(obs, "history_cards").reshape(15, 54)
    assert np.array_equal(moves[0], card_bits(parse_hand("3334445566"))) and not moves[1:].any()


def test_multiplier_and_bombs_after_a_bomb():
    state = play(["bid3", "no_double", "no_double", "333444+55+66", "TTTT"])
    obs = observe(state)
    assert one_hot_slots(obs, "multiplier", 16) == [1] and one_hot_slots(obs, "bombs", 5) == [1]


def test_the_deal_keeps_its_suits():
    """The engine keeps the physical cards of the deal, for showing a game as dealt."""
    from doudizhu_env.cards import card_name

    ids = reset(0, 1, deals=[DEAL]).deal[0]  # card ids in dealing order: 17 per seat, then the hole
    parts = [ids[17 * i:17 * (i + 1)] for i in range(3)] + [ids[51:]]
    shown = {name: " ".join(card_name(c) for c in part)
             for name, part in zip(["player_0", "player_1", "player_2", "hole"], parts, strict=True)}
    assert shown["hole"] == "8D 9D 2D"  # suits are given in order: the hands took S, H, C of 8, 9 and 2
    for seat, hand in enumerate(DEAL.hands):
        cards = shown[f"player_{seat}"].split()
        assert "".join(sorted(c[0] for c in cards)) == "".join(sorted(hand)) and len(set(cards)) == 17
    every = " ".join(shown.values()).split()
    assert len(set(every)) == 54


def test_roles_of_seats():
    """``role_of``: landlord 0, the seat after it 1 (landlord_down), the seat before it 2 (landlord_up);
    -1 while there is no landlord. The observation's ``role`` piece is that role, for its seat."""
    from doudizhu_env.engine import ROLE_NAMES, role_of

    assert ROLE_NAMES == ("landlord", "landlord_down", "landlord_up")
    landlord = np.array([0, 1, 2, -1])
    expected = np.array([[0, 1, 2], [2, 0, 1], [1, 2, 0], [-1, -1, -1]])
    got = role_of(np.arange(3)[None, :], landlord[:, None])
    assert got.dtype == np.int64 and (got == expected).all()
    assert [int(role_of(s, 2)) for s in range(3)] == [1, 2, 0]
    bidding = play([])
    assert all(one_hot_slots(observe(bidding, s), "role", 3) == [-1] for s in range(3))
    state = play(["bid0", "bid3"])  # seat 1 bids 3: landlord
    assert state.landlord[0] == 1
    assert [ROLE_NAMES[one_hot_slots(observe(state, s), "role", 3)[0]] for s in range(3)] == \
        ["landlord_up", "landlord", "landlord_down"]


def test_report_roles_partition_the_games():
    """Every role once in an arena report, the farmers' aggregate being the two farmer roles
    (a repeated landlord row was a bug), and the roles' games adding up to the agent's."""
    from doudizhu_arena.arena import REPORT_ROLES, run_arena

    report = run_arena(["rule", "random", "random"], 20, "douzero", seed=1)
    for entry in report["agents"].values():
        assert [r for r in REPORT_ROLES if r in entry] == list(REPORT_ROLES)
        games = {r: entry[r]["games"] for r in REPORT_ROLES}
        assert games["landlord"] + games["farmer"] == games["all"]
        assert games["landlord_down"] + games["landlord_up"] == games["farmer"]
