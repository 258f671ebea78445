"""An independent, deliberately slow reference for legal_moves.

Every sub-multiset of a hand (itertools.product over range(count + 1) per rank) is
classified by straightforward code written from docs/rules.md ("Combinations" with its
kicker rules, "Beating"), without the project's action table, and the resulting set of
canonical names must equal legal_moves(hand, last) for seeded random hands and tables,
under the standard and douzero presets (and standard without rocket_as_kickers).
"""

import functools
import itertools

import numpy as np
import pytest
from helpers import sweep

from doudizhu_env import Rules, legal_moves

CH = "3456789TJQKA2XD"
ACE, TWO, X, D = 11, 12, 13, 14
DECK = [r for r in range(15) for _ in range(4 if r <= TWO else 1)]

CONFIGS = {
    "standard": Rules.preset("standard"),
    "douzero": Rules.preset("douzero"),
    "no_rocket_kickers": Rules.preset("standard", rocket_as_kickers=False),
}


def name_of(body, unit, kickers=(), kicker_unit=1):
    """Canonical name: body cards in rank order, then each kicker after '+', ascending."""
    text = "".join(CH[r] * unit for r in body)
    return text + "".join("+" + CH[k] * kicker_unit for k in sorted(kickers))


def cards_of(c):
    """The ranks of a count vector, one entry per card, ascending."""
    return [r for r in range(15) for _ in range(c[r])]


def repeats_or_rocket(kickers):
    """Flags of a set of single kickers: (a rank repeats, both jokers are in it)."""
    return len(set(kickers)) != len(kickers), X in kickers and D in kickers


def pair_kickers(rest, num):
    """The ranks of `num` pair kickers if `rest` is exactly that: different ranks, no jokers."""
    ranks = [r for r in range(15) if rest[r]]
    if len(ranks) == num and all(rest[r] == 2 and r <= TWO for r in ranks):
        return ranks
    return None


def reference_readings(c):
    """Every reading of the card counts `c` (15 ints) under any rule configuration, as
    ((name, kind, length, rank), repeated single kickers, both jokers as single kickers)."""
    n = sum(c)
    if n == 0 or n > 20:
        return []
    present = [r for r in range(15) if c[r]]
    plain = (False, False)  # no single kickers at all
    out = []
    # single, pair (no jokers), triple, bomb, rocket
    if len(present) == 1:
        r, k = present[0], c[present[0]]
        kind = {1: "single", 2: "pair", 3: "triple", 4: "bomb"}[k]
        if not (kind == "pair" and r > TWO):
            out.append(((CH[r] * k, kind, 1, r), *plain))
    if n == 2 and c[X] == 1 and c[D] == 1:
        out.append((("XD", "rocket", 1, X), *plain))
    # triple + single, triple + pair: the kicker never has the body's rank
    if n in (4, 5):
        for r in range(TWO + 1):
            if c[r] == 3:
                rest = list(c)
                rest[r] = 0
                if n == 4:
                    out.append(((name_of([r], 3, cards_of(rest)), "triple+single", 1, r), *plain))
                elif pair_kickers(rest, 1):
                    out.append(((name_of([r], 3, pair_kickers(rest, 1), 2), "triple+pair", 1, r), *plain))
    # four + two singles, four + two pairs (never a bomb)
    if n in (6, 8):
        for r in range(TWO + 1):
            if c[r] == 4:
                rest = list(c)
                rest[r] = 0
                kick = cards_of(rest)
                if n == 6:
                    out.append(((name_of([r], 4, kick), "four+singles", 1, r), *repeats_or_rocket(kick)))
                elif pair_kickers(rest, 2):
                    out.append(((name_of([r], 4, pair_kickers(rest, 2), 2), "four+pairs", 1, r), *plain))
    # chains without kickers: all counts equal the unit, consecutive ranks 3..A
    if present[-1] <= ACE and present[-1] - present[0] == len(present) - 1:
        for unit, kind, lo, hi in ((1, "sequence", 5, 12), (2, "pair sequence", 3, 10), (3, "plane", 2, 6)):
            if all(c[r] == unit for r in present) and lo <= len(present) <= hi:
                out.append(((name_of(present, unit), kind, len(present), present[0]), *plain))
    # plane + singles (L = 2..5, 4L cards), plane + pairs (L = 2..4, 5L cards)
    triples = [r for r in range(ACE + 1) if c[r] >= 3]
    for length in range(2, 6):
        if n not in (4 * length, 5 * length) or len(triples) < length:
            continue
        for start in range(0, ACE - length + 2):
            body = range(start, start + length)
            if not all(c[r] >= 3 for r in body):
                continue
            rest = list(c)
            for r in body:
                rest[r] -= 3
            if any(rest[r] for r in body):  # a kicker never shares a rank with the body
                continue
            kick = cards_of(rest)
            if n == 4 * length:
                move = (name_of(body, 3, kick), "plane+singles", length, start)
                out.append((move, *repeats_or_rocket(kick)))
            if n == 5 * length and length <= 4 and pair_kickers(rest, length):
                move = (name_of(body, 3, pair_kickers(rest, length), 2), "plane+pairs", length, start)
                out.append((move, *plain))
    return out


def beats(move, last):
    """docs/rules.md, "Beating": rocket beats everything; bomb beats any non-bomb and lower bombs;
    otherwise same type, same length, strictly higher rank. Kickers never matter."""
    _, kind, length, rank = move
    _, last_kind, last_length, last_rank = last
    if last_kind == "rocket":
        return False
    if kind == "rocket":
        return True
    if kind == "bomb" and last_kind != "bomb":
        return True
    return kind == last_kind and length == last_length and rank > last_rank


def allowed(rules, repeated, rocket):
    """[flag distinct_kickers]: single kickers pairwise different; [flag rocket_as_kickers]:
    X and D may both be single kickers."""
    return not (repeated and rules.distinct_kickers) and not (rocket and not rules.rocket_as_kickers)


def all_readings(hand):
    """Every combination the hand can play, per configuration: brute force over all its
    sub-multisets."""
    out = {config: [] for config in CONFIGS}
    for sub in itertools.product(*(range(k + 1) for k in hand)):
        for move, repeated, rocket in reference_readings(sub):
            for config, rules in CONFIGS.items():
                if allowed(rules, repeated, rocket):
                    out[config].append(move)
    return out


def reference_moves(readings, last):
    if last is None:
        return {m[0] for m in readings}
    return {"pass"} | {m[0] for m in readings if beats(m, last)}


@functools.cache
def shape(name):
    """A key telling the types and lengths apart from a canonical name alone."""
    body, *kickers = name.split("+")
    return len(body), len(set(body)), len(kickers), len(kickers[0]) if kickers else 0


def pick_table(rng, other, rules):
    """A random combination of another hand, as the reference reads it.

    The candidates are listed by legal_moves(other) (fast, any size), a random shape first
    so that rare types show up, then a random name of that shape. The reference must
    read the name's cards as exactly that name (kind, length and rank come from it).
    """
    names = legal_moves(counts_text(other), None, rules)
    by_shape = {}
    for n in names:
        by_shape.setdefault(shape(n), []).append(n)
    shapes = sorted(by_shape)
    of_shape = by_shape[shapes[rng.integers(len(shapes))]]
    name = of_shape[rng.integers(len(of_shape))]
    cards = tuple(name.replace("+", "").count(ch) for ch in CH)
    mine = [m for m, repeated, rocket in reference_readings(cards) if allowed(rules, repeated, rocket)]
    assert [m for m in mine if m[0] == name], f"{name!r} is no combination under {rules}"
    return next(m for m in mine if m[0] == name)


def counts_text(c):
    return "".join(CH[r] * k for r, k in enumerate(c))


def deal(rng, sizes, concentrated):
    """A hand of random size from a shuffled deck and the cards of an "other" hand.

    concentrated: the hand is drawn from a window of 4..8 adjacent ranks (plus the rest of
    the deck at the end of the shuffle), so triples, planes, bombs and four + two show up
    often (and a hand has few sub-multisets). The other hand is a random 1..20 cards of
    the rest of the deck, or half the time all of it (every type and length then occurs).
    For a third of the concentrated hands the other hand is instead drawn the same way
    from a fresh shuffle (another window), so the table often has the hand's type and
    length; it keeps only the cards one deck still has besides the hand (legal_moves
    refuses a table that, with the hand, needs more of a rank than a deck holds).
    """

    def shuffled():
        deck = rng.permutation(DECK)
        if concentrated:
            near = (deck >= low) & (deck < low + width)
            deck = np.concatenate([deck[near], deck[~near]])
        return deck

    width = int(rng.integers(4, 9))
    low = int(rng.integers(0, 16 - width))
    deck = shuffled()
    size = int(rng.integers(sizes[0], sizes[1] + 1))
    hand = np.bincount(deck[:size], minlength=15)
    if concentrated and rng.random() < 1 / 3:
        width = int(rng.integers(4, 9))
        low = int(rng.integers(0, 16 - width))
        rest = shuffled()
        rest = rest[within_deck(rest, hand)][: int(rng.integers(sizes[0], sizes[1] + 1))]
    else:
        rest = deck[size:]
        if rng.random() < 0.5:
            rest = rest[: int(rng.integers(1, 21))]
    return tuple(hand.tolist()), tuple(np.bincount(rest, minlength=15).tolist())


def within_deck(cards, hand):
    """Mask of the ``cards`` (ranks, in order) one deck still holds besides ``hand``: per rank,
    the first ``deck - hand`` of them."""
    seen = np.zeros(15, dtype=int)
    keep = np.zeros(len(cards), dtype=bool)
    for i, r in enumerate(cards):
        keep[i] = hand[r] + seen[r] < DECK.count(r)
        seen[r] += keep[i]
    return keep


def run_cases(seed, num_cases, sizes, concentrated=False):
    rng = np.random.default_rng(seed)
    mismatches = []
    for _ in range(num_cases):
        hand, other = deal(rng, sizes, concentrated)
        lead = rng.random() < 0.25
        mine = all_readings(hand)
        for config, rules in CONFIGS.items():
            last = None if lead else pick_table(rng, other, rules)
            expected = reference_moves(mine[config], last)
            text = counts_text(hand)
            got = legal_moves(text, None if last is None else last[0], rules)
            assert len(got) == len(set(got)), (text, last)
            if set(got) != expected:
                mismatches.append(
                    f"{config}: hand {text!r} last {last and last[0]!r}: "
                    f"missing {sorted(expected - set(got))[:5]} extra {sorted(set(got) - expected)[:5]}"
                )
    assert not mismatches, f"{len(mismatches)} mismatches, e.g.\n" + "\n".join(mismatches[:10])


# Each case runs under the 3 rule configurations. 2,000 hands of 1..12 cards, 200 of
# 13..20 cards, and 1,000 concentrated hands of 8..20 cards; make test runs the first
# 400, 50 and 200 of them, the rest are marked slow (make test-slow).
@pytest.mark.parametrize("seed", sweep(range(20), default=4))
def test_small_hands(seed):
    run_cases(1000 + seed, 100, (1, 12))


@pytest.mark.parametrize("seed", sweep(range(8), default=2))
def test_large_hands(seed):
    run_cases(2000 + seed, 25, (13, 20))


@pytest.mark.parametrize("seed", sweep(range(10), default=2))
def test_concentrated_hands(seed):
    run_cases(3000 + seed, 100, (8, 20), concentrated=True)


# ------------------------------------------------------------------ the reference itself


@pytest.mark.parametrize(
    "cards, config, expected",
    [
        ("333444", "standard", {"333444"}),
        ("33344457", "standard", {"333444+5+7"}),
        ("3334445577", "standard", {"333444+55+77"}),
        ("7773", "standard", {"777+3"}),
        ("XD", "standard", {"XD"}),
        ("777733", "standard", set()),
        ("777733", "douzero", {"7777+3+3"}),
        ("333444555666", "standard", {"333444555666"}),
        ("333444555666", "douzero", {"333444555666", "333444555+6+6+6", "444555666+3+3+3"}),
        ("JQKA2", "standard", set()),
        ("TJQKA", "standard", {"TJQKA"}),
        ("77773K", "standard", {"7777+3+K"}),
        ("77773333", "standard", set()),
        ("7777XD", "standard", {"7777+X+D"}),
        ("7777XD", "no_rocket_kickers", set()),
        ("333444XD", "no_rocket_kickers", set()),
        ("3334447X", "no_rocket_kickers", {"333444+7+X"}),
        ("33344455", "douzero", {"333444+5+5"}),
        ("3334445555", "douzero", set()),
    ],
)
def test_reference_classifier(cards, config, expected):
    c = tuple(cards.count(ch) for ch in CH)
    rules = CONFIGS[config]
    got = {m[0] for m, repeated, rocket in reference_readings(c) if allowed(rules, repeated, rocket)}
    assert got == expected
