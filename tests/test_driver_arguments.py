"""``doudizhu_env.driver.drive``/``play_out``/``seat_actions`` refuse bad arguments before any step:
one-line ``TypeError``/``ValueError`` naming the argument and what was expected."""

from __future__ import annotations

import numpy as np
import pytest

from doudizhu_env import engine
from doudizhu_env.driver import drive, play_out, seat_actions


class Counting:
    """Legal by construction (so nothing but the driver's checks stands between it and the engine);
    counts the games it was asked about."""

    legal_by_construction = True
    needs_view = False

    def __init__(self):
        self.asked = 0
        self.random = engine.RandomPolicy(0)

    def act(self, view):
        self.asked += view.num_games
        return self.random.act(view)


def one_line(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert "\n" not in message and len(message) < 300, message
    return message


@pytest.mark.parametrize("seat_player, message", [
    ([[0, 5, 0]] * 4, r"seat_player\[0, 1\] is 5, not a player: expected 0\.\.0"),
    ([[0, -2, 0]] * 4, r"seat_player\[0, 1\] is -2, not a player"),
    ([[0, 0]] * 4, r"seat_player must have shape \(4, 3\).*got shape \(4, 2\)"),
    ([[0, 0, 0]] * 3, r"seat_player must have shape \(4, 3\).*got shape \(3, 3\)"),
    ([0, 0, 0], r"seat_player must have shape \(4, 3\)"),
    (np.zeros((4, 3)), r"seat_player must be integers.*got a float64 array of shape \(4, 3\)"),
    (np.zeros((4, 3), bool), r"seat_player must be integers"),
    ([["a", "b", "c"]] * 4, r"seat_player must be integers"),
    (None, r"seat_player must be integers"),
    ([[0, 0, 0], [0]], r"seat_player must be integers"),
])
def test_drive_and_play_out_refuse_a_seat_player_that_names_no_player(seat_player, message):
    state = engine.reset(0, 4)
    player = Counting()
    for call in (lambda: drive(state, seat_player, [player]), lambda: play_out(state, seat_player, [player]),
                 lambda: seat_actions(state, seat_player, [player])):
        with pytest.raises((ValueError, TypeError), match=message) as err:
            call()
        one_line(err)
    assert player.asked == 0


def test_a_seat_naming_player_5_is_refused_not_stepped_as_action_0():
    """Before: the seat's turns were stepped unchecked as action 0 and games ended scored with a seat
    still holding 17 cards."""
    state = engine.reset(1, 8)
    seat_player = np.zeros((8, 3), np.int64)
    seat_player[:, 2] = 5
    with pytest.raises(ValueError, match=r"seat_player\[0, 2\] is 5, not a player: expected 0\.\.0 or -1 "
                                         r"\(a seat driven elsewhere\), one index into the 1 player\(s\)"):
        drive(state, seat_player, [Counting()])
    with pytest.raises(ValueError, match=r"seat_player\[0, 2\] is 5, not a player: expected 0\.\.0, one "
                                         r"index into the 1 player\(s\)"):
        play_out(state, seat_player, [Counting()])


@pytest.mark.parametrize("elsewhere", [-1, -2])
def test_play_out_never_returns_games_unfinished(elsewhere):
    state = engine.reset(2, 4)
    seat_player = np.zeros((4, 3), np.int64)
    seat_player[3, 1] = elsewhere
    player = Counting()
    with pytest.raises(ValueError, match=r"seat_player\[3, 1\] is " + str(elsewhere)) as err:
        play_out(state, seat_player, [player])
    if elsewhere == -1:
        assert "play_out plays every game to its end" in one_line(err) and "use drive()" in one_line(err)
    assert player.asked == 0


def test_drive_still_leaves_a_seat_of_minus_1_to_the_caller():
    state = engine.reset(2, 4)
    seat_player = np.zeros((4, 3), np.int64)
    seat_player[:, 1] = -1
    final = state
    for turn in drive(state, seat_player, [Counting()]):
        final = turn.after
    assert ((final.to_act == 1) | final.done).all() and not final.done.all()


@pytest.mark.parametrize("players, error, message", [
    ([], ValueError, r"players must hold at least one player \(an object with act\(view\)\), got an "
                     r"empty list"),
    (None, TypeError, r"players must be a list of players .*got None"),
    ("rule", TypeError, r"players must be a list of players .*got 'rule'"),
    ([None], TypeError, r"players\[0\] must be a player, an object with act\(view\) -> action ids; got None"),
    ([Counting(), 3], TypeError, r"players\[1\] must be a player"),
])
def test_drive_and_play_out_refuse_what_is_not_a_list_of_players(players, error, message):
    state = engine.reset(0, 4)
    for call in (drive, play_out):
        with pytest.raises(error, match=message) as err:
            call(state, np.zeros((4, 3), np.int64), players)
        one_line(err)


@pytest.mark.parametrize("kwargs, message", [
    ({"max_steps": -1}, r"max_steps must be None or an integer of at least 0, got -1"),
    ({"max_steps": 2.5}, r"max_steps must be None or an integer of at least 0, got 2\.5"),
    ({"auto_reset": "yes", "max_steps": 3}, r"auto_reset must be True or False, got 'yes'"),
    ({"check": 1}, r"check must be True or False or None, got 1"),
])
def test_drive_refuses_bad_options_when_called(kwargs, message):
    state = engine.reset(0, 4)
    with pytest.raises((ValueError, TypeError), match=message):
        drive(state, np.zeros((4, 3), np.int64), [Counting()], **kwargs)  # no next(): at the call


def test_drive_refuses_what_is_not_a_state():
    with pytest.raises(TypeError, match=r"state must be a doudizhu_env.engine.State .*got None"):
        play_out(None, np.zeros((4, 3), np.int64), [Counting()])


def test_seat_actions_refuses_a_live_mask_of_the_wrong_shape():
    state = engine.reset(0, 4)
    with pytest.raises(ValueError, match=r"live must be a bool mask of shape \(4,\)"):
        seat_actions(state, np.zeros((4, 3), np.int64), [Counting()], live=np.ones(3, bool))


def test_valid_arguments_play_every_game_to_its_end():
    state = engine.reset(3, 6)
    final, decisions = play_out(state, [[0, 1, 1]] * 6, (Counting(), Counting()))  # lists and tuples too
    assert final.done.all() and decisions > 0 and (final.hands.sum(axis=(1, 2)) < 54).all()


@pytest.mark.parametrize("seat_player", [[0, 5, 0], [0, -2, 0], [0, 0], [0, 0.0, 0], [None, 0, 0]])
def test_drive_game_refuses_a_seat_player_that_names_no_player(seat_player):
    from doudizhu_env.driver import drive_game
    from doudizhu_env.game import Game

    game = Game.new(0)
    with pytest.raises(ValueError, match=r"seat_player must be 3 indices into the 1 player\(s\) \(-1 for a "
                                         r"seat driven elsewhere\), one per seat, got "):
        drive_game(game, seat_player, [Counting()])
    np.testing.assert_array_equal(game.to_state().history, Game.new(0).to_state().history)  # unstepped
