"""Bad input to the rules core, the engine and the environments: one clear error, nothing changed.

Each case is a wrong result that used to be accepted silently: the
error must name what was wrong and what was expected, and the state it was
given must be left as it was.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from doudizhu_env import engine, format_hand, legal_moves, parse_hand
from doudizhu_env.engine import Deal, IllegalActionError


def valid_deal() -> Deal:
    """A legal deal: the 54 cards in rank order, 17 + 17 + 17 + 3."""
    deck = "".join(c * n for c, n in zip("3456789TJQKA2XD", [4] * 13 + [1, 1], strict=True))
    return Deal((deck[:17], deck[17:34], deck[34:51]), deck[51:])


# -- card counts never wrap round -------------------------------------------------


@pytest.mark.parametrize("n", [5, 255, 256, 260, 513])
def test_more_of_a_rank_than_the_deck_is_an_error(n):
    with pytest.raises(ValueError, match=f"{n} x 3, a deck holds 4"):
        parse_hand("3" * n)
    with pytest.raises(ValueError, match=f"{n} x 3, a deck holds 4"):
        legal_moves("3" * n)


# -- a position no deal gives: the hand and the combination to beat exceed one deck -----


@pytest.mark.parametrize(
    "hand, last, rank, together, deck",
    [
        ("D", "XD", "D", 2, 1),  # one big joker, in the hand and in the rocket on the table
        ("X", "X", "X", 2, 1),
        ("33", "333", "3", 5, 4),
        ("3333", "3333", "3", 8, 4),
        ("4445553+6", "333444+X+D", "4", 6, 4),
        ("2222XD", "XD", "X", 2, 1),
        ("7777", "777+33", "7", 7, 4),
    ],
)
def test_an_impossible_position_is_an_error(hand, last, rank, together, deck):
    message = (f"impossible count in the hand {hand!r} and the combination to beat {last!r} together: "
               f"{together} x {rank}, a deck holds {deck}")
    with pytest.raises(ValueError, match=re.escape(message)):
        legal_moves(hand, last)


@pytest.mark.parametrize("hand, last, expected", [("D", "X", ["pass", "D"]), ("333", "3", ["pass"]),
                                                  ("3", "333+4", ["pass"]), ("2222", "XD", ["pass"])])
def test_a_position_one_deck_holds_is_answered(hand, last, expected):
    # at the limit: the hand and the table together hold all of a rank
    assert legal_moves(hand, last) == expected


def test_format_hand_refuses_counts_no_deck_holds():
    counts = np.zeros(15, dtype=np.int64)
    counts[0] = 256
    with pytest.raises(ValueError, match="256 x 3, a deck holds 4"):
        format_hand(counts)
    counts[0] = -1
    with pytest.raises(ValueError, match="-1 x 3"):
        format_hand(counts)
    assert format_hand(parse_hand("3333")) == "3333"


def test_a_deal_with_too_many_of_a_rank_is_refused():
    deal = valid_deal()
    bad = Deal(("3" * 256 + deal.hands[0], deal.hands[1], deal.hands[2]), deal.hole)  # wrapped to 4 threes
    with pytest.raises(ValueError, match="260 x 3, a deck holds 4"):
        engine.reset(0, 1, deals=[bad])
    ok = engine.reset(0, 1, deals=[deal])
    assert ok.hands.sum() + ok.hole.sum() == 54


# -- characters that are not cards ------------------------------------------------


@pytest.mark.parametrize("text, char, pos", [("ǰ3", "ǰ", 0), ("ẗ", "ẗ", 0), ("ẚ", "ẚ", 0), ("3ǰ4", "ǰ", 1),
                                             ("33ſ", "ſ", 2)])
def test_characters_whose_upper_case_is_longer_are_named(text, char, pos):
    with pytest.raises(ValueError, match=re.escape(f"bad card character {char!r} at position {pos}")) as info:
        parse_hand(text)
    assert "expected one of 3 4 5 6 7 8 9 T J Q K A 2 X D" in str(info.value)


def test_lower_case_and_ten_still_parse():
    assert format_hand(parse_hand("10jqka x d")) == "TJQKAXD"


# -- the engine's arguments ---------------------------------------------------------


@pytest.fixture
def state():
    return engine.reset(0, 3)


@pytest.mark.parametrize("seats", [[0.9, -1, -1], [0.0, -1, -1], [True, False, False], ["0", "-1", "-1"],
                                   [3, -1, -1], [-2, -1, -1], [0, -1]])
def test_escape_takes_integer_seats_only(state, seats):
    with pytest.raises(ValueError, match=r"seats must be 3 integers in -1\.\.2"):
        engine.escape(state, seats)
    assert not state.done.any() and (state.escaped == -1).all()


def test_escape_with_integer_seats_works(state):
    after = engine.escape(state, np.array([1, -1, -1]))
    assert after.escaped.tolist() == [1, -1, -1] and after.done.tolist() == [True, False, False]


@pytest.mark.parametrize("games, message", [([-1], r"in 0\.\.2"), ([3], r"in 0\.\.2"), ([0.5], "integer"),
                                            ([True], "integer"), ([[0]], "integer"), (1, "integer")])
def test_take_refuses_what_is_not_an_index(state, games, message):
    with pytest.raises(ValueError, match=message):
        engine.take(state, games)


def test_take_keeps_the_order_asked(state):
    sub = engine.take(state, [2, 0])
    assert sub.key.tolist() == [state.key[2], state.key[0]]
    assert engine.take(state, []).num_games == 0


# -- the environments' arguments and actions ----------------------------------------


BAD_ACTIONS = ["2", 3.9, np.float64(2.0), True, np.bool_(True), None, [1], np.array([1, 2])]


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_raw_aec_env_takes_integer_actions_only(action):
    pytest.importorskip("pettingzoo")
    from doudizhu_env import raw_env

    game = raw_env()
    game.reset(seed=0)
    before, agent = game.state, game.agent_selection
    with pytest.raises(IllegalActionError, match="an action is one integer id 0..13556"):
        game.step(action)
    assert game.state is before and game.agent_selection == agent


def test_wrapped_aec_env_refuses_a_bool():
    pytest.importorskip("pettingzoo")
    from doudizhu_env import env

    game = env()
    game.reset(seed=0)
    before = game.unwrapped.state
    with pytest.raises(IllegalActionError, match="got bool True"):
        game.step(True)
    assert game.unwrapped.state is before
    game.step(np.int64(1))  # bid0, an integer id: still taken
    after = game.unwrapped.state
    assert after.history_len[0] == before.history_len[0] + 1 and after.history[0, before.history_len[0]] == 1


@pytest.mark.parametrize("perspective", [True, False, 1.0, "1", 3, -1])
def test_aec_perspective_is_a_seat(perspective):
    pytest.importorskip("pettingzoo")
    from doudizhu_env import env

    with pytest.raises(ValueError, match="perspective must be a seat 0..2 or None"):
        env(perspective=perspective)


@pytest.mark.parametrize("seat", [True, 1.0, 1.7, "1", 3])
def test_gym_seat_is_a_seat(seat):
    pytest.importorskip("gymnasium")
    from doudizhu_env.gym_env import DouDizhuEnv

    with pytest.raises(ValueError, match="seat must be 0, 1 or 2"):
        DouDizhuEnv(seat=seat)


@pytest.mark.parametrize("seat", [1.7, 1.0, True, [0, 1.5], [0, 1, 2], "1"])
def test_vector_env_seats_are_integer_seats(seat):
    gymnasium = pytest.importorskip("gymnasium")

    with pytest.raises(ValueError, match="seat must be an int 0..2 or a sequence of 2 of them"):
        gymnasium.make_vec("doudizhu_env.gym_env:DouDizhu-v0", num_envs=2, seat=seat)
    envs = gymnasium.make_vec("doudizhu_env.gym_env:DouDizhu-v0", num_envs=2, seat=[2, 0])
    assert envs.unwrapped.seats.tolist() == [2, 0]


@pytest.mark.parametrize("action", BAD_ACTIONS, ids=repr)
def test_gym_env_takes_integer_actions_only(action):
    pytest.importorskip("gymnasium")
    from doudizhu_env.gym_env import DouDizhuEnv

    game = DouDizhuEnv()
    game.reset(seed=0)
    before = game.state
    with pytest.raises(IllegalActionError, match="an action is one integer id"):
        game.step(action)
    assert game.state is before


# -- deals, seats, the one-game path, reward settings and what opponents return ------------------


def test_a_deal_without_hole_cards_names_the_key():
    from doudizhu_env.game import Game

    hands = [valid_deal().hands[k] for k in range(3)]
    with pytest.raises(ValueError, match="a deal needs 'hands' and 'hole'; this one has no 'hole'"):
        engine.reset(0, 1, deals=[{"hands": hands}])
    with pytest.raises(ValueError, match="this one has no 'hole'"):
        Game.new(0, deal={"hands": hands})


@pytest.mark.parametrize("seats", [-1, 3, 1.5, "0", [0, 1, 2], True])
def test_seats_out_of_range_are_refused(seats):
    from doudizhu_env.observation import observe, seat_view

    state = engine.reset(0, 2)
    with pytest.raises(ValueError, match="seats must be"):
        observe(state, seats=seats)
    with pytest.raises(ValueError, match="seats must be"):
        seat_view(state, seats=seats)


@pytest.mark.parametrize("seat", [3, -1, 1.0, None])
def test_one_game_observe_takes_a_seat(seat):
    from doudizhu_env.game import Game

    with pytest.raises(ValueError, match="seat must be 0, 1 or 2"):
        Game.new(0).observe(seat)


def test_one_game_step_with_a_huge_id_is_illegal():
    from doudizhu_env.game import Game

    game = Game.new(0)
    before = game.to_state()
    with pytest.raises(IllegalActionError, match="out of range 0..13556"):
        game.step(2**70)
    assert (game.to_state().history == before.history).all()


def test_redeal_limit_is_bounded():
    from doudizhu_env.rules import MAX_REDEAL_LIMIT, Rules

    Rules(redeal_limit=MAX_REDEAL_LIMIT)
    with pytest.raises(ValueError, match="redeal_limit must be in 0..1000, got 40000"):
        Rules(redeal_limit=40000)


@pytest.mark.parametrize("counts", [[0.5] + [0] * 14, [True] + [False] * 14])
def test_format_hand_wants_whole_counts(counts):
    with pytest.raises(ValueError, match="whole numbers of cards"):
        format_hand(counts)


@pytest.mark.parametrize("value", ["abc", float("nan"), float("inf"), True, None])
def test_illegal_reward_is_a_finite_number(value):
    gym = pytest.importorskip("gymnasium")
    pytest.importorskip("pettingzoo")
    from doudizhu_env.aec import env

    with pytest.raises(ValueError, match="illegal_reward must be a finite number"):
        gym.make("doudizhu_env.gym_env:DouDizhu-v0", illegal_reward=value)
    with pytest.raises(ValueError, match="illegal_reward must be a finite number"):
        env(illegal_action="penalty", illegal_reward=value)


class _Returns:
    name = "liar"

    def __init__(self, value):
        self.value = value

    def act(self, view):
        return self.value


@pytest.mark.parametrize("value", [[], None, "bid1", [2.5], [[1]]])
def test_an_opponent_returning_nonsense_is_named(value):
    gym = pytest.importorskip("gymnasium")
    import doudizhu_env  # noqa: F401
    from doudizhu_env.driver import play_out

    env = gym.make("DouDizhu-v0", seat=1, opponents=[_Returns(value), _Returns(value)])
    with pytest.raises(ValueError, match=r"liar returned .* for 1 game\(s\); expected 1 integer action"):
        env.reset(seed=0)
    state = engine.reset(0, 4)
    with pytest.raises(ValueError, match=r"liar returned .* for 4 game\(s\); expected 4 integer"):
        play_out(state, np.zeros((4, 3), np.int64), [_Returns(value)])


def test_vector_env_opponent_of_the_wrong_length():
    pytest.importorskip("gymnasium")
    import doudizhu_env  # noqa: F401
    from doudizhu_env.gym_env import DouDizhuVectorEnv

    env = DouDizhuVectorEnv(8, seat=1, opponents=[_Returns([1] * 100), _Returns([1] * 100)])
    with pytest.raises(ValueError, match="liar returned"):
        env.reset(seed=0)
