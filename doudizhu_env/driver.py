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

The arguments of :func:`drive`, :func:`play_out` and :func:`seat_actions` are checked before the
first step (:func:`check_drive_args`): a one-line ``TypeError`` or ``ValueError`` naming the argument
and what was expected. ``seat_player`` holds an index into ``players`` per seat of each game, or -1
for a seat driven elsewhere (:func:`drive` only: :func:`play_out`, which plays every game to its end,
refuses a -1, since it would return the games unfinished).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np

from . import engine
from .checks import agent_actions, is_int, short
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


#: The player index of a seat driven elsewhere (a person at a table, the learning seat of an env).
ELSEWHERE = -1


def _shown(value) -> str:
    """``value`` as a one-line message quotes it (an array by its dtype and shape)."""
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    return short(value)


def check_players(players, name: str = "players") -> list:
    """``players`` as a list, or a one-line ``TypeError``/``ValueError`` naming ``name``: a non-empty
    list (or tuple) of players, each an object with ``act(view)``."""
    if isinstance(players, str | bytes) or not isinstance(players, Sequence):
        raise TypeError(f"{name} must be a list of players (objects with act(view)), got {short(players)}")
    if len(players) == 0:
        raise ValueError(f"{name} must hold at least one player (an object with act(view)), got an empty "
                         f"{type(players).__name__}")
    for k, player in enumerate(players):
        if not callable(getattr(player, "act", None)):
            raise TypeError(f"{name}[{k}] must be a player, an object with act(view) -> action ids; got "
                            f"{short(player)}")
    return list(players)


def check_seat_player(state: engine.State, seat_player, num_players: int, every_seat: bool = False,
                      name: str = "seat_player") -> np.ndarray:
    """``seat_player`` as an int64 array ``(B, 3)`` for the ``B`` games of ``state``, each entry an
    index into the ``num_players`` players (or -1, a seat driven elsewhere, unless ``every_seat``); else
    a one-line ``TypeError``/``ValueError`` naming ``name``, what it held and what was expected."""
    if not isinstance(state, engine.State):
        raise TypeError(f"state must be a doudizhu_env.engine.State (engine.reset(...)), got {short(state)}")
    try:
        a = np.asarray(seat_player)
    except (ValueError, TypeError):  # ragged lists
        a = np.asarray(None, dtype=object)
    b = state.num_games
    if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{name} must be integers, an index into players per seat of each game ((B, 3), "
                        f"{ELSEWHERE} for a seat driven elsewhere), got {_shown(seat_player)}")
    if a.shape != (b, 3):
        raise ValueError(f"{name} must have shape ({b}, 3), one player index per seat of each of the "
                         f"{b} game(s), got shape {a.shape}")
    low = ELSEWHERE if not every_seat else 0
    bad = (a < low) | (a >= num_players)
    if bad.any():
        g, s = (int(x) for x in np.argwhere(bad)[0])
        value = int(a[g, s])
        if every_seat and value == ELSEWHERE:
            raise ValueError(f"{name}[{g}, {s}] is {ELSEWHERE} (a seat driven elsewhere), but play_out plays "
                             "every game to its end: expected a player index for every seat; use drive() "
                             "to stop where such a seat is to act")
        expected = f"0..{num_players - 1}"
        if not every_seat:
            expected += f" or {ELSEWHERE} (a seat driven elsewhere)"
        raise ValueError(f"{name}[{g}, {s}] is {value}, not a player: expected {expected}, one index into "
                         f"the {num_players} player(s)")
    return a.astype(np.int64, copy=False)


def check_drive_args(state: engine.State, seat_player, players, every_seat: bool = False
                     ) -> tuple[np.ndarray, list]:
    """The checked ``seat_player`` and ``players`` of :func:`drive`, :func:`play_out` (``every_seat``)
    and :func:`seat_actions`: one-line errors naming the argument (:func:`check_players`,
    :func:`check_seat_player`)."""
    players = check_players(players)
    return check_seat_player(state, seat_player, len(players), every_seat), players


def seat_actions(state: engine.State, seat_player: np.ndarray, players, live=None) -> np.ndarray:
    """``(B,)`` actions of the players to act in the games of ``state`` (those where ``live``, a
    ``(B,)`` bool mask, is set, if given; the others get 0).

    ``seat_player`` is ``(B, 3)``: the index into ``players`` of the player at each seat of each
    game (-1: a seat driven elsewhere, whose games get 0). Each player is called once, for all
    the games where its seat is to act. The arguments are checked (:func:`check_drive_args`).
    """
    seat_player, players = check_drive_args(state, seat_player, players)
    if live is not None:
        live = np.asarray(live)
        if live.dtype != bool or live.shape != (state.num_games,):
            raise ValueError(f"live must be a bool mask of shape ({state.num_games},), one entry per game, "
                             f"got {_shown(live)}")
    return _seat_actions(state, seat_player, players, live)


def _seat_actions(state: engine.State, seat_player: np.ndarray, players, live=None) -> np.ndarray:
    """:func:`seat_actions` on checked arguments."""
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

    The arguments are checked when it is called, before the first step (:func:`check_drive_args`):
    ``seat_player`` holds a player index 0..len(players)-1 or -1 per seat of each game of ``state``.
    """
    seat_player, players = check_drive_args(state, seat_player, players)
    for name, value in (("auto_reset", auto_reset), ("check", check)):
        if not (isinstance(value, bool | np.bool_) or (name == "check" and value is None)):
            raise TypeError(f"{name} must be True or False{' or None' if name == 'check' else ''}, "
                            f"got {short(value)}")
    if max_steps is not None and not (is_int(max_steps) and max_steps >= 0):
        raise ValueError(f"max_steps must be None or an integer of at least 0, got {short(max_steps)}")
    if auto_reset and max_steps is None:
        raise ValueError("drive(..., auto_reset=True) never ends by itself; give max_steps")
    check = needs_check(players) if check is None else bool(check)
    return _drive(state, seat_player, players, bool(auto_reset), max_steps, check)


def _drive(state: engine.State, seat_player: np.ndarray, players: list, auto_reset: bool,
           max_steps: int | None, check: bool) -> Iterator[Turn]:
    """:func:`drive` on checked arguments."""
    rows = np.arange(state.num_games)
    steps = 0
    while max_steps is None or steps < max_steps:
        live = ~state.done & (seat_player[rows, state.to_act] >= 0)
        if not live.any():
            return
        actions = _seat_actions(state, seat_player, players, live)
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
    ``players``; -1: driven elsewhere), each asked by :func:`decide_in_game`. A ``seat_player`` that is
    not three such indices is refused in one line naming it."""
    n = len(players)
    if not (len(seat_player) == 3 and all(is_int(k) and ELSEWHERE <= k < n for k in seat_player)):
        raise ValueError(f"seat_player must be 3 indices into the {n} player(s) ({ELSEWHERE} for a seat "
                         f"driven elsewhere), one per seat, got {_shown(seat_player)}")
    check = needs_check(players)
    while not game.done and seat_player[game.to_act] >= 0:
        game.step(decide_in_game(players[seat_player[game.to_act]], game), check=check)


def play_out(state: engine.State, seat_player: np.ndarray, players) -> tuple[engine.State, int]:
    """Step every game of ``state`` to its end, the players of ``seat_player`` (as in
    :func:`seat_actions`, every seat driven) choosing; the final state and the decisions made.

    Every seat must have a player: a -1 (a seat driven elsewhere) is refused with a ``ValueError``
    before any step, as is an index that names no player (:func:`check_drive_args`); :func:`drive`
    is the loop that stops where a seat driven elsewhere is to act."""
    seat_player, players = check_drive_args(state, seat_player, players, every_seat=True)
    decisions = 0
    for turn in _drive(state, seat_player, players, False, None, needs_check(players)):
        decisions += int(turn.live.sum())
        state = turn.after
    return state, decisions
