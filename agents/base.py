"""The agent interface, and the uniform random baseline.

An agent acts for many games at once. The arena (or any driver) groups the
games where this agent's seat is to act and calls :meth:`Agent.act` with their
*seat views*: :class:`~doudizhu_env.engine.State` objects restricted to what
the acting seat may see (other hands and hidden hole cards blanked, see
:func:`doudizhu_env.observation.seat_view`). From a view an agent can take
``engine.legal_actions(view)`` / ``engine.legal_action_mask(view)``,
``observation.observe(view)``, or read the public fields directly
(``view.hands[i, view.to_act[i]]`` is its own hand).

Agents keep any per-seat memory themselves; most need none, since the view
carries the whole public history of the hand.
"""

from __future__ import annotations

import abc

import numpy as np

from doudizhu_env import engine


class Agent(abc.ABC):
    """Chooses actions for a batch of games in which it is to act."""

    name: str = "agent"

    @abc.abstractmethod
    def act(self, view: engine.State) -> np.ndarray:
        """``(N,)`` legal action ids, one per game of ``view`` (its ``to_act`` seat)."""

    def reset(self) -> None:  # noqa: B027  (optional hook, empty by default)
        """Called before a new series of games (drop any per-game memory)."""


class RandomAgent(engine.RandomPolicy, Agent):
    """Uniform over the legal actions, from its own seeded generator (default seed 0).

    The env layer's :class:`doudizhu_env.engine.RandomPolicy` as an :class:`Agent`. Since a
    subclass may read its view or change ``act``, it is driven like any agent: given seat views,
    its actions checked, asked on the one-game path through its state (no ``act_game``).
    """

    needs_view = True
    legal_by_construction = False
    act_game = None  # type: ignore[assignment]  # none: asked through its state, like any agent

    def __init__(self, seed: int | np.random.Generator | None = 0):
        super().__init__(seed)
