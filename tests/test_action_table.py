"""The action table: sizes derived from combinatorics, names, ids and group layout.

Every count below is derived from docs/rules.md ("Combinations" and its kicker rules) in a
comment and computed with math.comb, never copied from the code's output.
Notation: a chain of L units over the 12 ranks 3..A can start at 13 - L ranks.
"""

import math

import numpy as np
import pytest
from helpers import DOUZERO, NO_ROCKET_KICKERS, RANKS, STANDARD

from doudizhu_env import CombType, Rules, action_table, format_hand, parse_hand, type_counts

C = math.comb
SPECIAL = ["pass", "bid0", "bid1", "bid2", "bid3", "double", "no_double"]


def chain_starts(length):
    # a chain of `length` consecutive ranks inside 3..A (12 ranks)
    return 13 - length


def plain_multisets(n, m):
    """Multisets of m cards from n non-joker ranks, at most 4 of a rank: C(n + m - 1, m)
    multisets, minus the n holding 5 of one rank when m = 5 (here m <= 5, so no other
    multiset breaks the limit of 4)."""
    assert 0 <= m <= 5
    return C(n + m - 1, m) - (n if m == 5 else 0)


def repeated_singles(n, k):
    """Multisets of k single kickers from n non-joker ranks (at most 4 of each) and the two
    jokers (at most 1 each): choose j = 0..2 jokers (C(2, j) ways), then a multiset of the
    other k - j cards from the n ranks."""
    return sum(C(2, j) * plain_multisets(n, k - j) for j in range(3) if j <= k)


def expected_counts(rules):
    distinct = rules.distinct_kickers
    rocket_ok = rules.rocket_as_kickers

    def singles(n_plain, k):
        """Kicker sets of k singles from n_plain non-joker ranks plus the 2 jokers."""
        if distinct:
            # k different ranks out of n_plain + 2; of them, X + D + (k - 2 different plain ranks)
            total = C(n_plain + 2, k)
            both_jokers = C(n_plain, k - 2) if k >= 2 else 0
        else:
            # repeated ranks allowed; of them, X + D + a multiset of k - 2 plain ranks
            total = repeated_singles(n_plain, k)
            both_jokers = plain_multisets(n_plain, k - 2) if k >= 2 else 0
        # rocket_as_kickers off: drop the sets holding both jokers
        return total if rocket_ok else total - both_jokers

    return {
        # any of the 15 ranks
        "single": 15,
        # 2 of a rank, no jokers: ranks 3..2
        "pair": 13,
        # 3 of a rank: ranks 3..2
        "triple": 13,
        # 13 bodies x one single kicker of another rank: 12 plain ranks + 2 jokers = 14
        # (one kicker: distinct_kickers and rocket_as_kickers cannot matter)
        "triple_single": 13 * singles(12, 1),
        # 13 bodies x one pair of another non-joker rank: 12
        "triple_pair": 13 * 12,
        # lengths 5..12: 8 + 7 + ... + 1 = 36
        "sequence": sum(chain_starts(L) for L in range(5, 13)),
        # lengths 3..10: 10 + 9 + ... + 3 = 52
        "pair_sequence": sum(chain_starts(L) for L in range(3, 11)),
        # lengths 2..6: 11 + 10 + 9 + 8 + 7 = 45
        "plane": sum(chain_starts(L) for L in range(2, 7)),
        # L = 2..5: (13 - L) chain positions x kicker sets of L singles from the 13 - L plain
        # ranks outside the body plus the 2 jokers; standard: C(15 - L, L)
        # = 11*78 + 10*220 + 9*330 + 8*252 = 8,044; douzero: 11*89 + 10*340 + 9*870 + 8*1564 = 24,721
        "plane_singles": sum(chain_starts(L) * singles(13 - L, L) for L in range(2, 6)),
        # L = 2..4: (13 - L) positions x C(13 - L, L) sets of L different pair ranks outside
        # the body, no jokers: 11*55 + 10*120 + 9*126 = 2,939
        "plane_pairs": sum(chain_starts(L) * C(13 - L, L) for L in range(2, 5)),
        # 13 quads x 2 single kickers from 12 plain ranks + 2 jokers:
        # standard C(14, 2) = 91 -> 1,183; douzero: 78 + 2*12 + 1 = 103 -> 1,339
        "four_two_singles": 13 * singles(12, 2),
        # 13 quads x C(12, 2) = 66 sets of 2 different pair ranks -> 858
        "four_two_pairs": 13 * C(12, 2),
        # 4 of a rank, ranks 3..2
        "bomb": 13,
        # X + D
        "rocket": 1,
    }


def test_expected_formulas_match_rules_md():
    # the totals printed in docs/rules.md ("The size of the action space"), from the formulas above
    std = expected_counts(STANDARD)
    dz = expected_counts(DOUZERO)
    assert std["plane_singles"] == 8044
    assert std["plane_pairs"] == 2939
    assert std["four_two_singles"] == 1183
    assert dz["plane_singles"] == 24721
    assert dz["four_two_singles"] == 1339
    assert sum(std.values()) == 13550
    assert sum(dz.values()) == 30383


@pytest.mark.parametrize(
    "rules",
    [
        STANDARD,
        DOUZERO,
        NO_ROCKET_KICKERS,
        Rules.preset("douzero", rocket_as_kickers=False),
        Rules.preset("standard", distinct_kickers=False),
    ],
    ids=["standard", "douzero", "standard-no-rocket-kickers", "douzero-no-rocket-kickers", "std-repeat"],
)
def test_type_counts(rules):
    expected = expected_counts(rules)
    assert type_counts(rules) == expected
    table = action_table(rules)
    for t in CombType:
        if t < CombType.PASS:
            assert int(np.sum(table.types == t)) == expected[t.name.lower()], t.name


@pytest.mark.parametrize("rules, total", [(STANDARD, 13550), (DOUZERO, 30383)], ids=["standard", "douzero"])
def test_totals(rules, total):
    assert len(action_table(rules)) == total + 7
    assert sum(type_counts(rules).values()) == total


def test_rocket_as_kickers_off_counts():
    # planes: X + D plus L - 2 of the 13 - L plain ranks; four + two: only {X, D}
    std, off = expected_counts(STANDARD), expected_counts(NO_ROCKET_KICKERS)
    assert std["plane_singles"] - off["plane_singles"] == sum(
        chain_starts(L) * C(13 - L, L - 2) for L in range(2, 6)
    )
    assert std["four_two_singles"] - off["four_two_singles"] == 13


def test_table_ignores_non_card_flags():
    base = action_table(STANDARD)
    other = action_table(Rules.preset("standard", bidding=False, doubling=False, spring=False))
    assert base.names == other.names


@pytest.fixture(scope="module", params=["standard", "douzero"])
def table(request):
    return action_table(request.param)


def test_special_actions(table):
    for i, name in enumerate(SPECIAL):
        assert table.name(i) == name
        assert table.index(name) == i
        assert table[i].name == name
        assert not table.counts[i].any()
    assert table[0].type == CombType.PASS
    assert all(table[i].type == CombType.BID for i in range(1, 5))
    assert table[5].type == table[6].type == CombType.DOUBLE


def test_round_trip_every_id(table):
    for i in range(len(table)):
        assert table.index(table.name(i)) == i
    assert len(set(table.names)) == len(table)


def test_names_are_canonical_and_match_counts(table):
    for i in range(7, len(table)):
        name = table.name(i)
        body, *kickers = name.split("+")
        assert np.array_equal(parse_hand(name.replace("+", "")), table.counts[i]), name
        assert body == format_hand(table.body[i]), name
        # kickers ascending by rank, each a single card or a pair of one rank
        kicker_ranks = [RANKS.index(k[0]) for k in kickers]
        assert kicker_ranks == sorted(kicker_ranks), name
        assert all(len(set(k)) == 1 and len(k) in (1, 2) for k in kickers), name
        assert table.num_cards[i] == len(name) - len(kickers)


def test_getitem_matches_arrays(table):
    for i in list(range(0, len(table), 97)) + [len(table) - 1]:
        a = table[i]
        assert a.id == i
        assert a.name == table.name(i)
        assert a.type == table.types[i]
        assert a.rank == table.ranks[i]
        assert a.length == table.lengths[i]
        assert a.counts == tuple(int(c) for c in table.counts[i])
        assert a.num_cards == table.counts[i].sum()


@pytest.mark.parametrize("bad", [-1, 10**6])
def test_bad_ids(table, bad):
    with pytest.raises((ValueError, IndexError)):
        table.name(bad)
    with pytest.raises((ValueError, IndexError)):
        table[bad]


def test_rank_and_length(table):
    # rank = body rank (lowest of a chain); length = units of a chain, 1 otherwise
    units = {CombType.SEQUENCE: 1, CombType.PAIR_SEQUENCE: 2, CombType.PLANE: 3,
             CombType.PLANE_SINGLES: 3, CombType.PLANE_PAIRS: 3}
    for i in range(7, len(table)):
        t = CombType(int(table.types[i]))
        body_ranks = np.flatnonzero(table.body[i])
        assert table.ranks[i] == body_ranks[0]
        if t in units:
            assert table.lengths[i] == len(body_ranks) == table.body[i].sum() // units[t]
            assert np.all(np.diff(body_ranks) == 1)
        else:
            assert table.lengths[i] == 1


def test_group_layout(table):
    groups = sorted(table.groups.items(), key=lambda kv: kv[1].start)
    # the groups tile ids 7..A-1 without gaps, types in CombType order, lengths ascending
    assert groups[0][1].start == 7
    assert groups[-1][1].stop == len(table)
    for (_, prev), (_, nxt) in zip(groups, groups[1:], strict=False):
        assert prev.stop == nxt.start
    keys = [k for k, _ in groups]
    assert keys == sorted(keys)
    for (t, length), ids in groups:
        assert len(ids) > 0
        assert np.all(table.types[ids.start : ids.stop] == t)
        assert np.all(table.lengths[ids.start : ids.stop] == length)
        ranks = table.ranks[ids.start : ids.stop]
        assert np.all(np.diff(ranks) >= 0), (t, length)


def test_beat_start_and_group_end(table):
    # beat_start[a]: the first id of a's group with a strictly higher rank (group end if none)
    for ids in table.groups.values():
        ranks = [int(r) for r in table.ranks[ids.start : ids.stop]]
        first_above = {}
        for k in range(len(ranks) - 1, -1, -1):
            for r in range(-1, ranks[k]):
                first_above[r] = ids.start + k
        for k, a in enumerate(ids):
            assert table.group_end[a] == ids.stop
            assert table.beat_start[a] == first_above.get(ranks[k], ids.stop)


def test_bombs_and_rocket(table):
    assert table.bomb_end - table.bomb_start == 13
    assert [table.name(i) for i in range(table.bomb_start, table.bomb_end)] == [
        c * 4 for c in "3456789TJQKA2"
    ]
    assert table.name(table.rocket) == "XD"
    assert table.rocket == len(table) - 1
    assert table.groups[(CombType.BOMB, 1)] == range(table.bomb_start, table.bomb_end)


def test_group_sizes_per_length(table):
    # chains without kickers: 13 - L positions per length
    for t, lo, hi in [(CombType.SEQUENCE, 5, 12), (CombType.PAIR_SEQUENCE, 3, 10), (CombType.PLANE, 2, 6)]:
        for L in range(lo, hi + 1):
            assert len(table.groups[(t, L)]) == chain_starts(L)
    for L in range(2, 5):
        assert len(table.groups[(CombType.PLANE_PAIRS, L)]) == chain_starts(L) * C(13 - L, L)


def test_index_loose_strings():
    t = action_table(STANDARD)
    assert t.index("10JQKA") == t.index("TJQKA")
    assert t.index("3777") == t.index("777+3")
    assert t.index("K37777") == t.index("7777+3+K")
    assert t.index("75-333444") == t.index("333444+5+7")
    with pytest.raises(ValueError):
        t.index("3+777")  # '+' after the body only
    with pytest.raises(ValueError):
        t.index("3456")
    with pytest.raises(ValueError):
        t.index("pass please")


def test_standard_card_sets_have_one_reading():
    # docs/rules.md: several readings of one card set only arise with distinct_kickers off
    table = action_table(STANDARD)
    rows = table.counts[7:]
    assert len(np.unique(rows, axis=0)) == len(rows)
    douzero = action_table(DOUZERO).counts[7:]
    assert len(np.unique(douzero, axis=0)) < len(douzero)
