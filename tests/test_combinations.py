"""Combination types and beating, written from docs/rules.md ("Combinations", "Beating")
and the examples of both seed rule texts (seeds/000_*.txt, seeds/001_*.txt).

Card strings may use the notation of docs/rules.md (`777+3+K`, `33-44-55`, `10`);
`parse_hand` does not accept '+', so `cards()` drops it before `classify`.
"""

import numpy as np
import pytest
from helpers import DOUZERO, NO_ROCKET_KICKERS, STANDARD

from doudizhu_env import CombType, Rules, action_table, classify, legal_moves
from doudizhu_env.actions import NUM_SPECIAL
from doudizhu_env.legal import beats

BOTH = [STANDARD, DOUZERO]
T = CombType


def cards(text):
    return text.replace("+", "")


def readings(text, rules):
    return {(a.name, a.type) for a in classify(cards(text), rules)}


# (cards as written, canonical name, type); legal under both presets
LEGAL = [
    # single: any rank, jokers included
    ("3", "3", T.SINGLE),
    ("10", "T", T.SINGLE),
    ("A", "A", T.SINGLE),
    ("2", "2", T.SINGLE),
    ("X", "X", T.SINGLE),
    ("D", "D", T.SINGLE),
    # pair: 2 of a rank, no jokers
    ("33", "33", T.PAIR),
    ("1010", "TT", T.PAIR),
    ("22", "22", T.PAIR),
    # triple
    ("333", "333", T.TRIPLE),
    ("JJJ", "JJJ", T.TRIPLE),
    ("222", "222", T.TRIPLE),
    # triple + single (seed 000: 555 + 4; seed 001: 333+6)
    ("555+4", "555+4", T.TRIPLE_SINGLE),
    ("4555", "555+4", T.TRIPLE_SINGLE),
    ("333+6", "333+6", T.TRIPLE_SINGLE),
    ("AAA+2", "AAA+2", T.TRIPLE_SINGLE),
    ("222+3", "222+3", T.TRIPLE_SINGLE),
    ("333+X", "333+X", T.TRIPLE_SINGLE),
    ("222+D", "222+D", T.TRIPLE_SINGLE),
    # triple + pair (seed 000: 555 + 44; seed 001: 444+99)
    ("555+44", "555+44", T.TRIPLE_PAIR),
    ("444+99", "444+99", T.TRIPLE_PAIR),
    ("33-222", "222+33", T.TRIPLE_PAIR),
    ("333+22", "333+22", T.TRIPLE_PAIR),
    # sequence (seed 000: 10-J-Q-K-A; seed 001: 45678, 78910JQK)
    ("10JQKA", "TJQKA", T.SEQUENCE),
    ("10-J-Q-K-A", "TJQKA", T.SEQUENCE),
    ("45678", "45678", T.SEQUENCE),
    ("34567", "34567", T.SEQUENCE),
    ("78910JQK", "789TJQK", T.SEQUENCE),
    ("3456789TJQKA", "3456789TJQKA", T.SEQUENCE),
    # pair sequence (seed 000: 33-44-55; seed 001: 334455, 7788991010JJ)
    ("33-44-55", "334455", T.PAIR_SEQUENCE),
    ("334455", "334455", T.PAIR_SEQUENCE),
    ("7788991010JJ", "778899TTJJ", T.PAIR_SEQUENCE),
    ("QQKKAA", "QQKKAA", T.PAIR_SEQUENCE),
    ("33445566778899TTJJQQ", "33445566778899TTJJQQ", T.PAIR_SEQUENCE),
    # plane (seed 000: 333-444; seed 001: 333444, 555666777888)
    ("333-444", "333444", T.PLANE),
    ("555666777888", "555666777888", T.PLANE),
    ("KKKAAA", "KKKAAA", T.PLANE),
    ("333444555666777888", "333444555666777888", T.PLANE),
    # plane + singles (seed 000: 333-444 + 5 + 7; seed 001: 444555+79)
    ("333-444 + 5 + 7", "333444+5+7", T.PLANE_SINGLES),
    ("333444+5+7", "333444+5+7", T.PLANE_SINGLES),
    ("444555+79", "444555+7+9", T.PLANE_SINGLES),
    ("7-444555-9", "444555+7+9", T.PLANE_SINGLES),
    ("KKKAAA+2+X", "KKKAAA+2+X", T.PLANE_SINGLES),
    ("KKKAAA+3+2", "KKKAAA+3+2", T.PLANE_SINGLES),
    ("333444+X+D", "333444+X+D", T.PLANE_SINGLES),
    ("333444555+6+8+D", "333444555+6+8+D", T.PLANE_SINGLES),
    ("333444555666777+8+9+T+J+Q", "333444555666777+8+9+T+J+Q", T.PLANE_SINGLES),
    # plane + pairs (seed 000: 333-444 + 55 + 77; seed 001: 333444555+7799JJ)
    ("333-444 + 55 + 77", "333444+55+77", T.PLANE_PAIRS),
    ("333444555+7799JJ", "333444555+77+99+JJ", T.PLANE_PAIRS),
    ("333444555+77+99+JJ", "333444555+77+99+JJ", T.PLANE_PAIRS),
    ("KKKAAA+33+22", "KKKAAA+33+22", T.PLANE_PAIRS),
    ("333444555666+77+88+99+TT", "333444555666+77+88+99+TT", T.PLANE_PAIRS),
    # four + two singles (seed 000: 7777 + 3 + K; seed 001: 555538)
    ("7777+3+K", "7777+3+K", T.FOUR_TWO_SINGLES),
    ("555538", "5555+3+8", T.FOUR_TWO_SINGLES),
    ("2222+3+A", "2222+3+A", T.FOUR_TWO_SINGLES),
    ("3333+2+D", "3333+2+D", T.FOUR_TWO_SINGLES),
    ("7777+X+D", "7777+X+D", T.FOUR_TWO_SINGLES),
    # four + two pairs (seed 000: 7777 + 33 + KK; seed 001: 44445577)
    ("7777+33+KK", "7777+33+KK", T.FOUR_TWO_PAIRS),
    ("44445577", "4444+55+77", T.FOUR_TWO_PAIRS),
    ("2222+33+AA", "2222+33+AA", T.FOUR_TWO_PAIRS),
    # bomb
    ("3333", "3333", T.BOMB),
    ("7777", "7777", T.BOMB),
    ("2222", "2222", T.BOMB),
    # rocket
    ("XD", "XD", T.ROCKET),
    ("DX", "XD", T.ROCKET),
]


# Under douzero (distinct_kickers off) a plane of four also reads as a plane of three
# with three equal single kickers (docs/rules.md, last kicker rule).
DOUZERO_EXTRA = {
    "555666777888": {("555666777+8+8+8", T.PLANE_SINGLES), ("666777888+5+5+5", T.PLANE_SINGLES)},
}


@pytest.mark.parametrize("rules", BOTH, ids=["standard", "douzero"])
@pytest.mark.parametrize("text, name, ctype", LEGAL)
def test_legal(text, name, ctype, rules):
    extra = DOUZERO_EXTRA.get(text, set()) if rules == DOUZERO else set()
    assert readings(text, rules) == {(name, ctype)} | extra
    table = action_table(rules)
    i = table.index(name)
    assert table.name(i) == name
    assert table[i].type == ctype
    assert table.index(cards(text)) == i


# Card sets that are no combination under either preset.
ILLEGAL = [
    "34",
    "XD3",
    # sequence: no 2s or jokers, 5..12 long, no wrap, no gap (seed 000: max ends at A)
    "JQKA2",
    "QKA2X",
    "KA2XD",
    "A2345",
    "23456",
    "3456",
    "34578",
    "3456789TJQKA2",
    # pair sequence: no 2s or jokers, at least 3 pairs, at most 10
    "3344",
    "KKAA22",
    "AA22XD",
    "334466",
    "33445566778899TTJJQQKK",
    # plane: no 2s or jokers, consecutive, at most 6 triples
    "AAA222",
    "333555",
    "333444555666777888999",
    # planes with kickers: no 2 in the chain, at most 5 / 4 triples
    "AAA222+3+4",
    "AAA222+33+44",
    "333444555666777888+9+T+J+Q+K+A",
    "333444555666777+88+99+TT+JJ+QQ",
    # a kicker never has the body's rank
    "333444+4+5",
    "3333+4",  # not 333+3 with a 4 (a kicker of the body's rank), not a bomb
    # pair kickers: pairwise different ranks, never jokers
    "7777+33+33",
    "333444+55+55",
    "333+XD",
    "333444+55+XD",
    "7777+33+XD",
    # wrong kicker counts
    "333444+5",
    "333444+5+6+7",
    "333444+55+66+77",
    "7777+3",
    "7777+3+4+5",
    "777+3+4",
    "777+33+4",
    # mixed shapes
    "334",
    "33445",
    "3333444",
]


@pytest.mark.parametrize("rules", BOTH, ids=["standard", "douzero"])
@pytest.mark.parametrize("text", ILLEGAL)
def test_illegal(text, rules):
    assert readings(text, rules) == set()
    with pytest.raises(ValueError):
        action_table(rules).index(cards(text))


@pytest.mark.parametrize("text", ["XX", "DD", "XXD", "22222", "33333+4"])
def test_impossible_cards(text):
    # no joker pairs: a deck has one X and one D
    with pytest.raises(ValueError):
        classify(cards(text))


def test_xd_is_the_rocket_not_a_pair():
    assert readings("XD", STANDARD) == {("XD", T.ROCKET)}
    assert all(a.type != T.PAIR for a in classify("XD"))


def test_pair_kickers_never_jokers():
    for rules in BOTH:
        table = action_table(rules)
        for t in (T.TRIPLE_PAIR, T.PLANE_PAIRS, T.FOUR_TWO_PAIRS):
            for length in range(1, 5):
                for i in table.groups.get((t, length), ()):
                    assert table.counts[i][13] == 0 and table.counts[i][14] == 0, table.name(i)


def test_four_two_is_not_a_bomb():
    # seed 001: "four band two is not a bomb"
    for text in ["555538", "44445577", "7777+3+K", "7777+33+KK"]:
        for rules in BOTH:
            assert all(a.type not in (T.BOMB, T.ROCKET) for a in classify(cards(text), rules))
    # it is beaten by a higher four + two of its kind and by any bomb, itself not beating a pair
    assert set(legal_moves("888834", "7777+3+K")) == {"pass", "8888+3+4", "8888"}


# ---------------------------------------------------------------- distinct_kickers


@pytest.mark.parametrize(
    "text, name, ctype",
    [
        ("7777+3+3", "7777+3+3", T.FOUR_TWO_SINGLES),
        ("777733", "7777+3+3", T.FOUR_TWO_SINGLES),
        ("2222+A+A", "2222+A+A", T.FOUR_TWO_SINGLES),
        ("3333+44", "3333+4+4", T.FOUR_TWO_SINGLES),
        ("333444+5+5", "333444+5+5", T.PLANE_SINGLES),
        ("333444+2+2", "333444+2+2", T.PLANE_SINGLES),
        ("333444555+6+6+X", "333444555+6+6+X", T.PLANE_SINGLES),
        ("333444555+7+7+7", "333444555+7+7+7", T.PLANE_SINGLES),
        ("333444555666777+8888+9", "333444555666777+8+8+8+8+9", T.PLANE_SINGLES),
    ],
)
def test_repeated_single_kickers(text, name, ctype):
    # distinct_kickers on (standard): not legal; off (douzero): legal, 3 or 4 of a rank included
    assert readings(text, STANDARD) == set()
    assert readings(text, DOUZERO) == {(name, ctype)}
    assert readings(text, Rules.preset("standard", distinct_kickers=False)) == {(name, ctype)}
    assert readings(text, Rules.preset("douzero", distinct_kickers=True)) == set()


def test_repeated_single_kicker_names():
    table = action_table(DOUZERO)
    assert table.name(table.index("333444555+666")) == "333444555+6+6+6"
    assert table.name(table.index("777733")) == "7777+3+3"


# ---------------------------------------------------------------- rocket_as_kickers


@pytest.mark.parametrize(
    "text, name, ctype",
    [
        ("7777+X+D", "7777+X+D", T.FOUR_TWO_SINGLES),
        ("333444+X+D", "333444+X+D", T.PLANE_SINGLES),
        ("333444555+6+X+D", "333444555+6+X+D", T.PLANE_SINGLES),
    ],
)
def test_rocket_as_kickers(text, name, ctype):
    assert readings(text, STANDARD) == {(name, ctype)}
    assert readings(text, DOUZERO) == {(name, ctype)}
    assert readings(text, NO_ROCKET_KICKERS) == set()
    assert readings(text, Rules.preset("douzero", rocket_as_kickers=False)) == set()
    with pytest.raises(ValueError):
        action_table(NO_ROCKET_KICKERS).index(name)


@pytest.mark.parametrize("text", ["7777+3+X", "7777+X+2", "333444+6+D", "333+X", "333+D"])
def test_one_joker_kicker_is_fine_without_rocket_as_kickers(text):
    assert len(readings(text, NO_ROCKET_KICKERS)) == 1


# ---------------------------------------------------------------- chain lengths

CHAIN_RANKS = "3456789TJQKA"


@pytest.mark.parametrize("length", range(1, 13))
def test_sequence_lengths(length):
    for start in range(0, 13 - length):
        text = CHAIN_RANKS[start : start + length]
        got = readings(text, STANDARD)
        if length == 1:
            assert got == {(text, T.SINGLE)}
        elif 5 <= length <= 12:
            assert got == {(text, T.SEQUENCE)}
        else:
            assert got == set()


@pytest.mark.parametrize("length", range(1, 13))
def test_pair_sequence_lengths(length):
    for start in range(0, 13 - length):
        text = "".join(c * 2 for c in CHAIN_RANKS[start : start + length])
        got = readings(text, STANDARD)
        if length == 1:
            assert got == {(text, T.PAIR)}
        elif 3 <= length <= 10:
            assert got == {(text, T.PAIR_SEQUENCE)}
        else:
            assert got == set(), text


@pytest.mark.parametrize("length", range(1, 9))
def test_plane_lengths(length):
    for rules in BOTH:
        text = "".join(c * 3 for c in CHAIN_RANKS[:length])
        names = {n for n, t in readings(text, rules) if t == T.PLANE}
        assert names == ({text} if 2 <= length <= 6 else set())


@pytest.mark.parametrize("length", range(1, 7))
def test_plane_singles_lengths(length):
    body = "".join(c * 3 for c in CHAIN_RANKS[:length])
    kickers = (CHAIN_RANKS[length:] + "2")[-length:]
    text = body + "+" + "+".join(kickers)
    for rules in BOTH:
        got = readings(text, rules)
        if 2 <= length <= 5:
            assert got == {(text, T.PLANE_SINGLES)}
        elif length == 1:
            assert got == {("333+2", T.TRIPLE_SINGLE)}
        else:
            assert got == set()


@pytest.mark.parametrize("length", range(1, 6))
def test_plane_pairs_lengths(length):
    body = "".join(c * 3 for c in CHAIN_RANKS[:length])
    kickers = [c * 2 for c in (CHAIN_RANKS[length:] + "2")[-length:]]
    text = body + "+" + "+".join(kickers)
    for rules in BOTH:
        got = readings(text, rules)
        if 2 <= length <= 4:
            assert got == {(text, T.PLANE_PAIRS)}
        elif length == 1:
            assert got == {("333+22", T.TRIPLE_PAIR)}
        else:
            assert got == set()


def test_chain_groups_lengths():
    # the table's groups hold exactly the lengths of docs/rules.md
    limits = {
        T.SEQUENCE: (5, 12),
        T.PAIR_SEQUENCE: (3, 10),
        T.PLANE: (2, 6),
        T.PLANE_SINGLES: (2, 5),
        T.PLANE_PAIRS: (2, 4),
    }
    for rules in BOTH:
        table = action_table(rules)
        for t, (lo, hi) in limits.items():
            assert sorted(n for (tt, n) in table.groups if tt == t) == list(range(lo, hi + 1))


def test_no_two_or_joker_in_any_chain_body():
    for rules in BOTH:
        table = action_table(rules)
        for t in (T.SEQUENCE, T.PAIR_SEQUENCE, T.PLANE, T.PLANE_SINGLES, T.PLANE_PAIRS):
            for (tt, _), ids in table.groups.items():
                if tt == t:
                    for i in ids:
                        assert not table.body[i][12:].any(), table.name(i)


def test_kicker_never_shares_body_rank_in_table():
    for rules in BOTH:
        table = action_table(rules)
        kick = table.counts.astype(int) - table.body
        assert not ((kick > 0) & (table.body > 0)).any()


# ---------------------------------------------------------------- ambiguous readings


def test_ambiguous_readings_douzero():
    # docs/rules.md: only with distinct_kickers off; 333444555666 is a plane of four or a plane
    # of three with three equal single kickers (either end of the chain).
    expected = {
        ("333444555666", T.PLANE),
        ("333444555+6+6+6", T.PLANE_SINGLES),
        ("444555666+3+3+3", T.PLANE_SINGLES),
    }
    assert readings("333444555666", DOUZERO) == expected
    assert readings("333444555666", STANDARD) == {("333444555666", T.PLANE)}


def test_index_lists_readings_when_ambiguous():
    table = action_table(DOUZERO)
    with pytest.raises(ValueError) as info:
        table.index("666555444333")
    for name in ("333444555666", "333444555+6+6+6", "444555666+3+3+3"):
        assert name in str(info.value)
    # the canonical names pick one reading each
    ids = {table.index(n) for n in ("333444555666", "333444555+6+6+6", "444555666+3+3+3")}
    assert len(ids) == 3
    assert table.index("444555666+333") == table.index("444555666+3+3+3")
    assert action_table(STANDARD).name(action_table(STANDARD).index("666555444333")) == "333444555666"


def test_index_not_a_combination():
    for text in ["3456", "7777+33+33", "JQKA2", "34"]:
        with pytest.raises(ValueError):
            action_table(STANDARD).index(text)


def test_index_special_actions():
    table = action_table(STANDARD)
    for i, name in enumerate(["pass", "bid0", "bid1", "bid2", "bid3", "double", "no_double"]):
        assert table.index(name) == i
        assert table.name(i) == name


def test_ambiguous_reading_decides_what_beats_it():
    # the next player must beat the reading played
    hand = "777888999TTT"
    on_plane3 = legal_moves(hand, "333444555+6+6+6", DOUZERO)
    assert "777888999+T+T+T" in on_plane3
    assert "888999TTT+7+7+7" in on_plane3
    assert "777888999TTT" not in on_plane3
    on_plane4 = legal_moves(hand, "333444555666", DOUZERO)
    assert on_plane4 == ["pass", "777888999TTT"]
    assert "777888999+T+T+T" in legal_moves(hand, "444555666+3+3+3", DOUZERO)
    # other cards, both plane-of-three readings above the hand's planes (bodies from J and from Q)
    assert legal_moves(hand, "JJJQQQKKK+A+A+A", DOUZERO) == ["pass"]
    assert legal_moves(hand, "QQQKKKAAA+J+J+J", DOUZERO) == ["pass"]


# ---------------------------------------------------------------- beating

EVERY_TYPE = [
    "3", "2", "D", "33", "22", "333", "222", "333+4", "222+A", "333+44", "222+AA",
    "34567", "TJQKA", "3456789TJQKA", "334455", "QQKKAA", "333444", "KKKAAA",
    "333444+5+7", "KKKAAA+2+D", "333444+55+77", "333444555+77+99+JJ",
    "7777+3+K", "2222+X+D", "7777+33+KK", "2222+33+AA",
]


@pytest.mark.parametrize("last", EVERY_TYPE)
def test_bomb_beats_every_non_bomb(last):
    # the lowest bomb the table leaves possible (no rank of the table: one deck) against the
    # lowest and the highest of each type
    bomb = next(c * 4 for c in "3456789TJQKA2" if c not in cards(last))
    assert bomb in legal_moves(bomb, last)


def test_bomb_beats_four_two():
    assert "3333" in legal_moves("3333", "2222+4+5")
    assert "3333" in legal_moves("3333", "2222+44+55")
    assert "3333" in legal_moves("3333", "7777+4+K")


@pytest.mark.parametrize(
    "low, high", [("3333", "4444"), ("3333", "2222"), ("KKKK", "AAAA"), ("AAAA", "2222")]
)
def test_higher_bomb_beats_lower(low, high):
    assert high in legal_moves(high, low)
    assert legal_moves(low, high) == ["pass"]
    # a bomb against itself is no position (one deck holds one bomb of a rank): the rule itself
    table = action_table(STANDARD)
    assert not beats(table, table.index(low), table.index(low))


# every type at its lowest and highest that leaves the rocket to the hand (the table holds no joker)
NO_JOKER = [t for t in EVERY_TYPE if "X" not in t and "D" not in t] + ["KKKAAA+Q+2", "2222+K+A"]


@pytest.mark.parametrize("last", NO_JOKER + ["3333", "2222"])
def test_rocket_beats_all(last):
    moves = legal_moves("XD", last)
    assert "XD" in moves
    if len(cards(last)) > 1:
        assert moves == ["pass", "XD"]


def test_nothing_beats_the_rocket():
    assert legal_moves("22223333AAAAKKKK", "XD") == ["pass"]
    # a second rocket is no position (one deck), but the rule must still say the rocket does not
    # beat the rocket ("The rocket beats everything"; nothing is above it)
    for rules in BOTH:
        table = action_table(rules)
        assert not beats(table, table.rocket, table.rocket), "the rocket must not beat the rocket"


@pytest.mark.parametrize(
    "hand, last, beaten_by, not_beaten_by",
    [
        ("4", "3", ["4"], []),
        ("3", "3", [], ["3"]),
        ("D", "X", ["D"], []),
        ("X", "2", ["X"], []),
        ("3", "D", [], ["3"]),
        ("44", "33", ["44"], ["4"]),
        ("4444", "33", ["44", "4444"], ["444"]),
        ("444", "333", ["444"], ["44", "4"]),
        ("44455", "333+6", ["444+5"], ["444+55", "444", "55"]),
        ("44455", "333+66", ["444+55"], ["444+5", "444"]),
        ("345678", "34567", ["45678"], ["345678", "34567"]),
        ("456789", "34567", ["45678", "56789"], ["456789"]),
        ("3456789", "345678", ["456789"], ["34567", "45678", "3456789"]),
        ("44556677", "334455", ["445566", "556677"], ["44556677", "4455", "44"]),
        ("555666777", "333444", ["555666", "666777"], ["555666777"]),
        ("666777888", "333444555", ["666777888"], ["666777", "777888"]),
        ("55566678", "333444+9+T", ["555666+7+8"], ["555666", "555+6", "666+7"]),
    ],
)
def test_same_type_and_length(hand, last, beaten_by, not_beaten_by):
    moves = legal_moves(hand, last)
    for m in beaten_by:
        assert m in moves
    for m in not_beaten_by:
        assert m not in moves


@pytest.mark.parametrize(
    "hand, last, move",
    [
        # kickers never matter: a higher body wins over higher kickers, a lower body never does
        ("4443", "333+2", "444+3"),
        ("44455", "333+22", "444+55"),
        ("5556667+8", "333444+X+D", "555666+7+8"),
        ("55566677+88", "333444+22+AA", "555666+77+88"),
        ("8888+3+4", "7777+2+D", "8888+3+4"),
        ("8888+33+44", "7777+22+AA", "8888+33+44"),
    ],
)
def test_kickers_never_matter(hand, last, move):
    assert move in legal_moves(cards(hand), last)


@pytest.mark.parametrize(
    "hand, last, move",
    [
        ("333D", "444+5", "333+D"),
        ("33322", "444+55", "333+22"),
        ("3334442D", "555666+7+8", "333444+2+D"),
        ("3332D", "444+3", "333+D"),
        ("77772D", "8888+3+4", "7777+2+D"),
        ("777722AA", "8888+33+44", "7777+AA+22"),
        ("666777AA22", "888999+33+44", "666777+AA+22"),
    ],
)
def test_lower_body_with_higher_kickers_does_not_beat(hand, last, move):
    assert move in legal_moves(hand, None)
    assert move not in legal_moves(hand, last)


@pytest.mark.parametrize("rules", BOTH, ids=["standard", "douzero"])
def test_equal_body_with_higher_kickers_does_not_beat(rules):
    # equal bodies of triples and fours are no position (one deck), so the rule itself, over the
    # whole table: neither the action itself nor the last of its group with the same body rank
    # (sorted by kickers, so the highest kickers) beats it
    table = action_table(rules)
    ids = np.arange(NUM_SPECIAL, len(table))
    assert not beats(table, ids, ids).any()
    same_body = table.beat_start[ids] - 1
    assert np.all(table.ranks[same_body] == table.ranks[ids])
    assert not beats(table, same_body, ids).any()


@pytest.mark.parametrize(
    "hand, last, move",
    [
        ("22", "3", "22"),
        ("2", "33", "2"),
        ("222", "33", "222"),
        ("AAA2", "333", "AAA+2"),
        ("AAA22", "333+4", "AAA+22"),
        ("AAA2", "333+44", "AAA+2"),
        ("AAA2", "33", "AAA"),
        ("TJQKA2", "345678", "TJQKA"),
        ("JJQQKKAA", "334455", "JJQQKKAA"),
        ("KKKAAA", "333444+5+6", "KKKAAA"),
        ("KKKAAA2X", "333444+55+66", "KKKAAA+2+X"),
        ("QQQKKKAAA", "333444", "QQQKKKAAA"),
        ("AAAA23", "7777", "AAAA+3+2"),
    ],
)
def test_different_type_does_not_beat(hand, last, move):
    assert move in legal_moves(hand, None)
    assert move not in legal_moves(hand, last)


def test_longer_chain_does_not_beat_shorter():
    # a 6-sequence does not beat a 5-sequence; only same-length higher chains do
    moves = legal_moves("456789", "34567")
    assert set(moves) == {"pass", "45678", "56789"}
    assert legal_moves("45678", "345678") == ["pass"]
    assert legal_moves("445566", "33445566") == ["pass"]
    assert legal_moves("777888999", "333444555666") == ["pass"]


def test_four_two_types_beat_only_their_own_kind():
    assert "8888+3+4" not in legal_moves("888834", "7777+33+KK")
    assert "8888+33+44" not in legal_moves("88883344", "7777+3+K")
    assert "8888+33+44" in legal_moves("88883344", "7777+33+KK")


@pytest.mark.parametrize("rules", BOTH, ids=["standard", "douzero"])
@pytest.mark.parametrize("hand", ["3", "33", "3456789TJQKA2XD", "333444555666777+8888+9", "XD", "2222"])
def test_leading_never_includes_pass(hand, rules):
    moves = legal_moves(cards(hand), None, rules)
    assert moves and "pass" not in moves


@pytest.mark.parametrize("rules", BOTH, ids=["standard", "douzero"])
@pytest.mark.parametrize("hand, last", [("3", "4"), ("", "3"), ("XD", "3"), ("2222", "XD"), ("4", "3")])
def test_following_always_includes_pass(hand, last, rules):
    moves = legal_moves(hand, last, rules)
    assert moves[0] == "pass" and moves.count("pass") == 1


def test_leading_lists_every_combination_of_the_hand():
    assert set(legal_moves("3334")) == {"3", "4", "33", "333", "333+4"}
    assert set(legal_moves("XD")) == {"X", "D", "XD"}
    assert set(legal_moves("77773K")) == {
        "3", "7", "K", "77", "777", "777+3", "777+K", "7777", "7777+3+K",
    }
