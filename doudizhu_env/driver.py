"""Asking players for their moves: the one loop that drives the seats of agents (:func:`drive`).

A *player* (an agent) is any object with ``act(view) -> (N,) action ids``, one
per game of ``view``, each for the seat to act there. The arena, the
Gymnasium envs' opponents, the terminal and web tables all ask their players
through :func:`decide`, :func:`seat_actions` and (one game of the single-game path)
:func:`decide_in_game`, so a player is given the same
thing everywhere and its answer is checked the same way.

What a player is given, it declares with two optional class attributes:

``needs_view`` (default ``True``)
    ``True``: the seat views of its games (:func:`doudizhu_env.observation.seat_view`:
    the hands and hole cards its seat cannot see are blanked). ``False``: the rows
    of the state as they are, which saves building the views; a player declaring
    it reads nothing but the acting seat's legal actions
    (:class:`doudizhu_env.engine.RandomPolicy` does).
``legal_by_construction`` (default ``False``)
    ``True``: its actions are drawn from the legal actions, so a driver may step
    the engine without checking them (``engine.step(..., check=False)``).

A player may also offer ``act_game(game) -> int``: its move in one
:class:`doudizhu_env.game.Game`, the single-game path, without a state being
built (``RandomPolicy`` draws there exactly what it would draw from the state).

Whatever a player returns is checked by :func:`doudizhu_env.checks.agent_actions`
(N integer ids, named errors otherwise); legality is the engine's check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from . import engine
from .checks import agent_actions
from .observation import seat_view


def needs_view(player) -> bool:
    """Whether ``player`` is given seat views (the default) rather than the state's rows."""
    return bool(getattr(player, "needs_view", True))


def legal_by_construction(player) -> bool:
    """Whether ``player``'s actions are legal by construction (a driver may skip the engine's check)."""
    return bool(getattr(player, "legal_by_construction", False))


def needs_check(players) -> bool:
    """Whether a driver must check the actions of ``players`` (any of them not legal by construction)."""
    return not all(legal_by_construction(p) for p in players)


def decide_in_game(player, game) -> int:
    """``player``'s checked move in one :class:`doudizhu_env.game.Game`: its ``act_game`` when it
    offers one, else :func:`decide` on the game's one-game state."""
    if callable(getattr(player, "act_game", None)):
        return int(player.act_game(game))
    return int(decide(player, game.to_state(), np.array([0]))[0])


def decide(player, state: engine.State, games: np.ndarray) -> np.ndarray:
    """``player``'s checked actions for games ``games`` of ``state``, given what it declares it needs."""
    games = np.asarray(games, dtype=np.int64)
    if needs_view(player):
        view = seat_view(state, games)
    else:
        view = state if len(games) == state.num_games else engine.take(state, games)
    return agent_actions(player.act(view), len(games), player)


def seat_actions(state: engine.State, seat_player: np.ndarray, players, live=None) -> np.ndarray:
    """``(B,)`` actions of the players to act in the games of ``state`` (those where ``live``, a
    ``(B,)`` bool mask, is set, if given; the others get 0).

    ``seat_player`` is ``(B, 3)``: the index into ``players`` of the player at each seat of each
    game (-1: a seat driven elsewhere, whose games get 0). Each player is called once, for all
    the games where its seat is to act.
    """
    actor = seat_player[np.arange(state.num_games), state.to_act]
    if live is not None:
        actor = np.where(live, actor, -1)
    actions = np.zeros(state.num_games, dtype=np.int64)
    for k, player in enumerate(players):
        games = np.flatnonzero(actor == k)
        if len(games):
            actions[games] = decide(player, state, games)
    return actions


class Turn(NamedTuple):
    """One step of every live game, as :func:`drive` yields it."""

    before: engine.State
    """The state the players were asked in."""
    actions: np.ndarray
    """``(B,)`` the actions chosen (0 in the games that were over)."""
    live: np.ndarray
    """``(B,)`` bool: the games where a seat decided (not over, and not waiting for a seat driven
    elsewhere)."""
    after: engine.State
    """The state after the step."""


def drive(state: engine.State, seat_player: np.ndarray, players, *, auto_reset: bool = False,
          max_steps: int | None = None, check: bool | None = None) -> Iterator[Turn]:
    """Step the games of ``state``, the players of ``seat_player`` (as in :func:`seat_actions`)
    choosing, and yield every step as a :class:`Turn`: the one loop that drives seats.

    A seat whose player is -1 is driven elsewhere (a person at a table, the learning seat of a
    Gymnasium env): a game waits when that seat is to act, and only the other games are stepped.
    It ends when no game can move (every game over or waiting), or, with ``auto_reset`` (finished
    games dealt again, as :func:`doudizhu_env.engine.step` does), after ``max_steps`` steps. A
    caller that wants to see each decision (a recorder, a benchmark gathering positions, a table
    narrating) reads the turns; one that wants only the end calls :func:`play_out`. The engine
    checks the actions unless every player declares them legal by construction, or the caller
    says ``check=False`` (a trusted caller that has measured what the check costs it).
    """
    if auto_reset and max_steps is None:
        raise ValueError("drive(..., auto_reset=True) never ends by itself; give max_steps")
    check = needs_check(players) if check is None else check
    rows = np.arange(state.num_games)
    steps = 0
    while max_steps is None or steps < max_steps:
        live = ~state.done & (seat_player[rows, state.to_act] >= 0)
        if not live.any():
            return
        actions = seat_actions(state, seat_player, players, live)
        if live.all():
            after = engine.step(state, actions, check=check, auto_reset=auto_reset)
        else:  # step the games that can move; the others wait as they are
            moving = np.flatnonzero(live)
            taken = engine.take(state, moving)
            stepped = engine.step(taken, actions[moving], check=check, auto_reset=auto_reset)
            after = engine.merge_rows(state, moving, taken, stepped)
        yield Turn(state, actions, live, after)
        state, steps = after, steps + 1


def drive_game(game, seat_player, players) -> None:
    """:func:`drive` for one :class:`doudizhu_env.game.Game` (the single-game path), in place:
    step it while its seat to act has a player (``seat_player[seat]``, an index into
    ``players``; -1: driven elsewhere), each asked by :func:`decide_in_game`."""
    check = needs_check(players)
    while not game.done and seat_player[game.to_act] >= 0:
        game.step(decide_in_game(players[seat_player[game.to_act]], game), check=check)


def play_out(state: engine.State, seat_player: np.ndarray, players) -> tuple[engine.State, int]:
    """Step every game of ``state`` to its end, the players of ``seat_player`` (as in
    :func:`seat_actions`, every seat driven) choosing; the final state and the decisions made."""
    decisions = 0
    for turn in drive(state, seat_player, players):
        decisions += int(turn.live.sum())
        state = turn.after
    return state, decisions
