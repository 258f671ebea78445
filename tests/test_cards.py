"""Card notation: parse_hand / format_hand (docs/rules.md, "The deck and the notation")."""

import re

import numpy as np
import pytest
from helpers import RANKS

from doudizhu_env import format_hand, parse_hand

DECK = np.array([4] * 13 + [1, 1])


def counts(**by_char):
    out = np.zeros(15, dtype=int)
    for ch, n in by_char.items():
        out[RANKS.index(ch)] = n
    return out


def test_rank_order_has_15_ranks():
    assert format_hand(np.ones(15, dtype=int)) == RANKS
    assert parse_hand(RANKS).tolist() == [1] * 15


def test_shape_and_empty():
    assert parse_hand("").shape == (15,)
    assert parse_hand("").sum() == 0
    assert format_hand(np.zeros(15, dtype=int)) == ""


@pytest.mark.parametrize(
    "text, expected",
    [
        ("3", "3"),
        ("10", "T"),
        ("T", "T"),
        ("t", "T"),
        ("1010", "TT"),
        ("10JQKA", "TJQKA"),
        ("10jqka", "TJQKA"),
        ("TJQKA", "TJQKA"),
        ("tjqka", "TJQKA"),
        ("78910JQK", "789TJQK"),
        ("7788991010JJ", "778899TTJJ"),
        ("33-44-55", "334455"),
        ("3 3 4", "334"),
        ("3,3,4", "334"),
        ("3, 3 - 4", "334"),
        ("xd", "XD"),
        ("DX", "XD"),
        ("2A3", "3A2"),
        ("2222XD", "2222XD"),
    ],
)
def test_parse_then_format(text, expected):
    assert format_hand(parse_hand(text)) == expected


def test_ten_spellings_agree():
    assert np.array_equal(parse_hand("10"), parse_hand("T"))
    assert np.array_equal(parse_hand("10101010"), parse_hand("TTTT"))
    assert np.array_equal(parse_hand("10T10t"), counts(T=4))


def test_counts_per_rank():
    assert np.array_equal(parse_hand("33-44-55"), counts(**{"3": 2, "4": 2, "5": 2}))
    assert np.array_equal(parse_hand("XD"), counts(X=1, D=1))
    assert np.array_equal(parse_hand("2222"), counts(**{"2": 4}))


def test_format_prints_ten_as_t():
    assert format_hand(counts(T=2)) == "TT"


def test_full_deck():
    deck = "".join(c * int(n) for c, n in zip(RANKS, DECK, strict=True))
    assert len(deck) == 54
    assert np.array_equal(parse_hand(deck), DECK)


@pytest.mark.parametrize("seed", range(5))
def test_round_trip_random_hands(seed):
    rng = np.random.default_rng(seed)
    deck_cards = np.repeat(np.arange(15), DECK)
    for _ in range(200):
        size = int(rng.integers(0, 55))
        drawn = rng.choice(deck_cards, size=size, replace=False)
        hand = np.bincount(drawn, minlength=15)
        text = format_hand(hand)
        assert len(text) == size
        assert np.array_equal(parse_hand(text), hand)
        # shuffled order, lowercase and separators do not matter
        shuffled = "-".join(rng.permutation(list(text))).lower()
        assert np.array_equal(parse_hand(shuffled), hand)


@pytest.mark.parametrize("text, bad", [("33Z", "Z"), ("3!4", "!"), ("1", "1"), ("0", "0"), ("3B", "B"),
                                       ("3.4", ".")])
def test_bad_character_is_named(text, bad):
    """A character that is no card (nor a separator) is named in the error."""
    with pytest.raises(ValueError, match=re.escape(repr(bad))):
        parse_hand(text)


@pytest.mark.parametrize(
    "text, rank",
    [
        ("77777", "7"),
        ("7-7-7-7-7", "7"),
        ("DD", "D"),
        ("XX", "X"),
        ("XDX", "X"),
        ("1010101010", "T"),
        ("22222", "2"),
    ],
)
def test_impossible_counts(text, rank):
    with pytest.raises(ValueError, match=rf"\b{rank}\b"):
        parse_hand(text)


def test_four_of_a_rank_is_fine():
    assert parse_hand("7777").sum() == 4


def test_not_a_string():
    with pytest.raises((TypeError, ValueError)):
        parse_hand(33)


@pytest.mark.parametrize("text, expected",
                         [("777+3+K", "3777K"), ("333444+55+77", "3334445577"), ("33-44-55", "334455")])
def test_combination_notation_parses_as_cards(text, expected):
    """docs/rules.md writes combinations as ``777+3+K`` and ``33-44-55``: both read as plain cards."""
    assert format_hand(parse_hand(text)) == expected
