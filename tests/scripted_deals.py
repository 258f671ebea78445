"""Scripted hands (deal, the action names of the whole hand in turn order, the points it ends in)
shared by the engine, observation and env tests; each worked out by hand from docs/rules.md (Scoring)."""

from typing import NamedTuple

# Spring. Seat 0 holds six triples 3..8; with the hole 8, 9, 2 it goes out in three plays.
SPRING_DEAL = {"hands": ["33344455566677788", "345678999TTTTJJJJ", "QQQQKKKKAAAA222XD"], "hole": "892",
               "first_bidder": 0}
SPRING_SCRIPT = ["bid2", "bid0", "bid0",  # seat 0 is landlord, base 2
                 "no_double", "no_double",  # farmers 1, 2 decline: the landlord is not asked
                 "9", "pass", "pass", "2", "pass", "pass", "333444555666777888"]  # farmers never play
# Landlord wins, spring: multiplier 2 (spring). Landlord +2 x 2 x 2 = +8, each farmer -2 x 2 = -4.
SPRING_POINTS = [8, -4, -4]

# Reverse spring. Seat 1 (a farmer) goes out with 2, 3456789TJQKA, KKK+X.
REVERSE_DEAL = {"hands": ["33344455566677788", "3456789TJQKA2KKKX", "899TTJJQQQAAA222D"], "hole": "9TJ",
                "first_bidder": 0}
REVERSE_SCRIPT = ["bid1", "bid0", "bid0",  # seat 0 is landlord, base 1
                  "double", "no_double", "no_double",  # farmer 1 doubles; the landlord does not redouble
                  "5", "2", "pass", "pass",  # the landlord's only play
                  "3456789TJQKA", "pass", "pass", "KKK+X"]
# Farmers win, reverse spring (the landlord played once): multiplier 2 (double) x 2 (reverse spring) = 4.
# Landlord -2 x 1 x 4 = -8, each farmer +1 x 4 = +4.
REVERSE_POINTS = [-8, 4, 4]

# Redoubled bomb game. Seat 1 becomes landlord with 3333 2222 45678 TTT JJJ X (hole J J X);
# seat 2 holds the bomb KKKK.
BOMB_DEAL = {"hands": ["45667778889999TJD", "3333222245678TTTJ", "KKKKQQQQAAAA44556"], "hole": "JJX",
             "first_bidder": 2}
BOMB_SCRIPT = ["bid0", "bid2", "bid3",  # seats 2, 0, 1: seat 1 is landlord, base 3
               "double", "double", "double",  # farmer 2, farmer 0, then the landlord redoubles
               "3333", "KKKK", "pass", "2222", "pass", "pass",  # three bombs
               "45678", "pass", "pass", "TTTJJJ", "pass", "pass", "X"]
# Landlord wins, no spring (seat 2 played): multiplier 2^3 (bombs) x 2^2 (doubles) x 2 (redouble) = 64.
# Landlord +2 x 3 x 64 = +384, each farmer -3 x 64 = -192.
BOMB_POINTS = [-192, 384, -192]


class ScriptedHand(NamedTuple):
    """One scripted hand: its name, the deal, the action names in turn order, the points it ends in."""

    name: str
    deal: dict
    script: list
    points: list


SPRING = ScriptedHand("spring", SPRING_DEAL, SPRING_SCRIPT, SPRING_POINTS)
REVERSE = ScriptedHand("reverse_spring", REVERSE_DEAL, REVERSE_SCRIPT, REVERSE_POINTS)
BOMB = ScriptedHand("redoubled_bombs", BOMB_DEAL, BOMB_SCRIPT, BOMB_POINTS)
#: Every scripted hand (the ``scripted_hand`` fixture of conftest.py runs a test on each).
HANDS = (SPRING, REVERSE, BOMB)
