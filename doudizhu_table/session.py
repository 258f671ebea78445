"""What happens at a table, as data: the one home of what the terminal and the web table say.

A hand at a table is a person at one seat and agents at the others. Both tables turn each step
of the engine into :class:`Event` values (:func:`opening_events` when the hand starts,
:func:`move_events` after every move) and render them their own way: the terminal as coloured
lines (:mod:`doudizhu_table.terminal`), the web page as the entries of its log
(:mod:`doudizhu_table.web.game`). What is worth saying, and when, is decided here once.

Kinds of event (``seat`` is who it is about):

====================  =================================================================
``first_bidder``      the hand starts with bidding; ``seat`` bids first
``landlord``          ``seat`` is the landlord: at the start (``at_start``, no bidding) or
                      after the bidding, with ``base`` and the ``hole`` card ids it takes
``bid``               ``seat`` bid ``level`` (0: no bid)
``double``            ``seat`` doubled or not (``doubled``); the landlord's is a redouble
``pass``, ``play``    ``seat`` passed, or played ``action`` and holds ``cards_left``
``redeal``            nobody bid: the cards are dealt again, ``seat`` bids first
``trick``             the trick is over: ``seat`` won it and leads
====================  =================================================================

:class:`MoveError` is the one error of a move the person may not make; :func:`is_partner` the
one test of who plays on the person's side.
"""

from __future__ import annotations

from dataclasses import dataclass

from doudizhu_env import engine
from doudizhu_env.actions import BID0, DOUBLE, PASS
from doudizhu_env.display import hole_ids


class MoveError(ValueError):
    """A move the person may not make now (the message says why and what is expected)."""


@dataclass(frozen=True)
class Event:
    """One thing that happened at the table (see the module docstring for the kinds)."""

    kind: str
    seat: int
    action: int = -1
    """The action id of a move (``bid``, ``double``, ``pass``, ``play``)."""
    level: int = 0
    """A bid's level."""
    doubled: bool = False
    redouble: bool = False
    """A ``double`` by the landlord (a redouble)."""
    cards_left: int = 0
    """Cards the seat holds after a ``play``."""
    base: int = 0
    """The base when the landlord is known."""
    hole: tuple[int, ...] = ()
    """The hole card ids the landlord takes (suited ids, as :func:`doudizhu_env.display.hole_ids`)."""
    at_start: bool = False
    """A ``landlord`` given by the deal (no bidding)."""


def is_partner(state: engine.State, seat: int, person: int) -> bool:
    """Whether ``seat`` is ``person``'s fellow farmer in game 0 of ``state`` (never before there is a
    landlord, never the person's own seat)."""
    landlord = int(state.landlord[0])
    return seat != person and landlord >= 0 and landlord not in (seat, person)


def opening_events(state: engine.State) -> list[Event]:
    """How a fresh hand (game 0 of ``state``) starts: who bids first, or who is the landlord."""
    if state.rules.bidding:
        return [Event("first_bidder", int(state.first_bidder[0]))]
    return [Event("landlord", int(state.landlord[0]), base=int(state.base[0]), at_start=True)]


def move_events(before: engine.State, after: engine.State, seat: int, action: int) -> list[Event]:
    """What a move of ``seat`` (``action``, from ``before`` to ``after``, game 0) said and made
    happen: the move itself, then a redeal, the landlord found, or the end of a trick."""
    phase = int(before.phase[0])
    if phase == engine.BIDDING:
        out = [Event("bid", seat, action, level=action - BID0)]
    elif phase == engine.DOUBLING:
        out = [Event("double", seat, action, doubled=action == DOUBLE,
                     redouble=seat == int(before.landlord[0]))]
    elif action == PASS:
        out = [Event("pass", seat, action)]
    else:
        out = [Event("play", seat, action, cards_left=int(after.hands[0, seat].sum()))]
    if after.redeals[0] > before.redeals[0] and not after.done[0]:
        out.append(Event("redeal", int(after.to_act[0])))
    elif before.landlord[0] < 0 <= after.landlord[0]:
        out.append(Event("landlord", int(after.landlord[0]), base=int(after.base[0]),
                         hole=tuple(int(c) for c in hole_ids(after))))
    elif phase == engine.PLAY and action == PASS and not after.done[0] and after.to_beat[0] < 0:
        out.append(Event("trick", int(after.to_act[0])))
    return out
