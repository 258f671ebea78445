"""``doudizhu_env.driver``: how every driver asks its agents for moves (what each is given, checked)."""

from __future__ import annotations

import numpy as np
import pytest

from doudizhu_env import engine
from doudizhu_env.driver import (
    decide,
    decide_in_game,
    drive,
    legal_by_construction,
    needs_view,
    play_out,
    seat_actions,
)


class Recorder:
    """Plays the first legal action, keeping every view it was given and each call's size."""

    def __init__(self, **declared):
        self.__dict__.update(declared)
        self.views, self.calls = [], []

    def act(self, view):
        self.views.append(view)
        self.calls.append(view.num_games)
        ids, offsets = engine.legal_actions(view)
        return ids[offsets[:-1]]


def hidden_blanked(view) -> bool:
    seats = view.to_act
    others = [view.hands[i, s].sum() for i in range(view.num_games) for s in range(3) if s != seats[i]]
    return not any(others)


def test_players_get_seat_views_unless_they_declare_otherwise():
    state = engine.reset(0, 8)
    games = np.array([1, 4, 6])
    viewer, plain = Recorder(), Recorder(needs_view=False)
    assert needs_view(viewer) and not needs_view(plain) and not legal_by_construction(viewer)
    decide(viewer, state, games)
    decide(plain, state, games)
    assert hidden_blanked(viewer.views[0]) and not hidden_blanked(plain.views[0])
    np.testing.assert_array_equal(plain.views[0].hands, state.hands[games])
    decide(plain, state, np.arange(8))
    assert plain.views[-1] is state  # all the games, nothing hidden to blank: the state itself


@pytest.mark.parametrize("answer, message", [
    (np.zeros(2, np.int64), r"wrong returned .* for 3 game\(s\); expected 3 integer action id"),
    (np.full(3, 1.5), r"wrong returned .*1\.5.* for 3 game\(s\)"),
])
def test_a_wrong_answer_is_named(answer, message):
    class Wrong:
        name = "wrong"

        def act(self, view):
            return answer

    with pytest.raises(ValueError, match=message):
        decide(Wrong(), engine.reset(0, 3), np.arange(3))


def test_seat_actions_call_each_player_once_for_its_games():
    state = engine.reset(1, 30)
    a, b = Recorder(), Recorder()
    seat_player = np.tile([0, 1, 0], (30, 1))
    seat_player[::3] = [-1, -1, -1]  # games driven elsewhere: 0, nobody asked
    actions = seat_actions(state, seat_player, [a, b])
    actor = seat_player[np.arange(30), state.to_act]
    assert a.calls == [int((actor == 0).sum())] and b.calls == [int((actor == 1).sum())]
    assert (actions[actor == -1] == 0).all()
    ids, offsets = engine.legal_actions(state)
    first = ids[offsets[:-1]]
    assert (actions[actor >= 0] == first[actor >= 0]).all()


def test_play_out_is_the_loop_it_names():
    """Every game played to its end, the decisions counted, the same as stepping the engine by hand."""
    state = engine.reset(2, 16)
    seat_player = np.tile([0, 1, 0], (16, 1))
    final, decisions = play_out(state, seat_player, [engine.RandomPolicy(0), Recorder()])
    by_hand, counted, rng, first = state, 0, np.random.default_rng(0), Recorder()
    while not by_hand.done.all():
        live = ~by_hand.done
        actor = np.where(live, seat_player[np.arange(16), by_hand.to_act], -1)
        actions = np.zeros(16, np.int64)
        if (actor == 0).any():
            actions[actor == 0] = engine.sample_legal(engine.take(by_hand, np.flatnonzero(actor == 0)), rng)
        if (actor == 1).any():
            actions[actor == 1] = first.act(engine.take(by_hand, np.flatnonzero(actor == 1)))
        counted += int(live.sum())
        by_hand = engine.step(by_hand, actions)
    assert final.done.all() and decisions == counted > 16
    np.testing.assert_array_equal(final.scores, by_hand.scores)
    np.testing.assert_array_equal(final.history, by_hand.history)


def test_in_one_game_a_player_is_asked_on_the_game_or_on_its_state():
    """``act_game`` when offered (the random player: the draw ``sample_legal`` makes on the state),
    else the one-game state's seat view."""
    from doudizhu_env.game import Game

    game, state = Game.new(4), engine.reset(4, 1)
    drawn = engine.sample_legal(state, np.random.default_rng(9))
    assert decide_in_game(engine.RandomPolicy(9), game) == int(drawn[0])
    viewer = Recorder()
    assert decide_in_game(viewer, game) == int(engine.legal_actions(state)[0][0])
    assert hidden_blanked(viewer.views[0]) and viewer.calls == [1]


def test_drive_yields_every_step_and_play_out_is_its_end():
    """The turns of drive are the engine's steps with the players' actions; play_out ends where they end."""
    state = engine.reset(3, 6)
    seat_player = np.array([[0, 1, 1]] * 6)
    players = [engine.RandomPolicy(1), engine.RandomPolicy(2)]
    turns = list(drive(state, seat_player, players))
    assert turns[0].before is state and turns[-1].after.done.all()
    for turn in turns:
        assert np.array_equal(turn.live, ~turn.before.done)
        assert (turn.actions[~turn.live] == 0).all()
        stepped = engine.step(turn.before, turn.actions)
        assert np.array_equal(stepped.history, turn.after.history)
    final, decisions = play_out(state, seat_player, [engine.RandomPolicy(1), engine.RandomPolicy(2)])
    assert np.array_equal(final.scores, turns[-1].after.scores)
    assert decisions == sum(int(t.live.sum()) for t in turns)


def test_drive_with_auto_reset_runs_its_steps_and_needs_a_bound():
    state = engine.reset(0, 4)
    turns = list(drive(state, np.zeros((4, 3), np.int64), [engine.RandomPolicy(0)], auto_reset=True,
                       max_steps=120))
    assert len(turns) == 120 and turns[-1].after.episode.max() > 0  # hands ended and were dealt again
    with pytest.raises(ValueError, match="give max_steps"):
        next(drive(state, np.zeros((4, 3), np.int64), [engine.RandomPolicy(0)], auto_reset=True))


def test_a_seat_driven_elsewhere_makes_its_games_wait():
    """Player -1: a person's or a learning seat. drive steps the other games and stops when every
    game is over or waiting for such a seat, which it never asks."""
    state = engine.reset(4, 5)
    seat_player = np.zeros((5, 3), np.int64)
    seat_player[:, 1] = -1  # seat 1 is driven elsewhere in every game
    asked = Recorder()
    turns = list(drive(state, seat_player, [asked]))
    final = turns[-1].after if turns else state
    waiting = ~final.done
    assert waiting.any() and (final.to_act[waiting] == 1).all()
    assert all((v.to_act != 1).all() for v in asked.views)  # seat 1 was never asked
    for turn in turns:  # the games that waited are unchanged by the step
        still = ~turn.live
        assert np.array_equal(turn.after.history[still], turn.before.history[still])
