"""doudizhu_env: Dou Dizhu (Fight the Landlord) for reinforcement learning.

The full hand (bidding, doubling, play, spring scoring) as a vectorized numpy
engine, with PettingZoo and Gymnasium environments on top.
"""

from .actions import Action, ActionTable, CombType, action_table, type_counts
from .cards import format_hand, parse_hand
from .moves import classify, legal_moves
from .rules import Rules

__all__ = [
    "Action",
    "ActionTable",
    "CombType",
    "Rules",
    "action_table",
    "classify",
    "format_hand",
    "legal_moves",
    "parse_hand",
    "type_counts",
]
