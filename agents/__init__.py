"""Agents that play Dou Dizhu through the batched engine.

Every agent implements :class:`agents.base.Agent`: it is given the seat views
of many games at once (:func:`doudizhu_env.observation.seat_view`) and returns
one action id per game, for bidding, doubling and play alike.
"""

from .base import Agent, RandomAgent
from .registry import make_agent
from .rule import RuleAgent

__all__ = ["Agent", "RandomAgent", "RuleAgent", "make_agent"]
