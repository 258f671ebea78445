"""``doudizhu_env.infos`` refuses what is not a seat, a landlord, a phase or an info (one line naming
the argument), and the PettingZoo env hands out infos that a caller's edits cannot change."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from doudizhu_env import env, info_names  # noqa: E402
from doudizhu_env.infos import batch_info, seat_info  # noqa: E402


@pytest.mark.parametrize("args, error, message", [
    ((3, 0, 2), ValueError, r"seat must be 0\.\.2 \(a seat\), got 3"),
    ((-1, 0, 2), ValueError, r"seat must be 0\.\.2"),
    ((0.5, 0, 2), TypeError, r"seat must be an integer 0\.\.2 \(a seat\), got 0\.5"),
    ((True, 0, 2), TypeError, r"seat must be an integer 0\.\.2"),
    (("1", 0, 2), TypeError, r"seat must be an integer 0\.\.2"),
    ((0, 3, 2), ValueError, r"landlord must be -1\.\.2 \(the landlord's seat, -1 while bidding\), got 3"),
    ((0, -2, 2), ValueError, r"landlord must be -1\.\.2"),
    ((0, None, 2), TypeError, r"landlord must be an integer -1\.\.2"),
    ((0, 0, 9), ValueError,
     r"phase must be 0\.\.3 \(a phase code \(0 bidding, 1 doubling, 2 play, 3 over\)\), got 9"),
    ((0, 0, 2.0), TypeError, r"phase must be an integer 0\.\.3"),
])
def test_seat_info_refuses_what_is_not_a_seat_landlord_or_phase(args, error, message):
    with pytest.raises(error, match=message) as err:
        seat_info(*args)
    assert "\n" not in str(err.value)


def test_seat_info_takes_numpy_integers_and_gives_python_ints():
    info = seat_info(np.int64(2), np.int8(0), np.int32(2))
    assert info == {"seat": 2, "role": 2, "phase": 2} and all(type(v) is int for v in info.values())


@pytest.mark.parametrize("seats, landlord, phase, error, message", [
    ([0, 3], [0, 0], [2, 2], ValueError, r"seats must be 0\.\.2 \(a seat\), got 3"),
    ([0, 0.5], [0, 0], [2, 2], TypeError,
     r"seats must be integers 0\.\.2 \(a seat\), one per game, got \[0, 0\.5\]"),
    ([0, 1], [0, 0], [2, 9], ValueError, r"phase must be 0\.\.3 .*got 9"),
    ([0, 1], [0, 5], [2, 2], ValueError, r"landlord must be -1\.\.2 .*got 5"),
    ([0, 1, 2], [0, 0], [2, 2, 2], ValueError,
     r"seats, landlord and phase must have one entry per game, the same length, got seats 3, landlord 2, "
     r"phase 3"),
    (np.zeros((2, 2), np.int64), [0, 0], [2, 2], TypeError, r"seats must be integers .*got a int64 array "
                                                            r"of shape \(2, 2\)"),
    (None, [0], [2], TypeError, r"seats must be integers"),
])
def test_batch_info_refuses_bad_codes_and_mismatched_lengths(seats, landlord, phase, error, message):
    with pytest.raises(error, match=message) as err:
        batch_info(seats, landlord, phase)
    assert "\n" not in str(err.value)


def test_batch_info_broadcasts_one_seat_over_the_games():
    info = batch_info(1, np.array([-1, 0, 1]), np.array([0, 2, 2]))
    assert info["seat"].tolist() == [1, 1, 1] and info["role"].tolist() == [-1, 1, 0]


@pytest.mark.parametrize("info", [None, [("role", 0)], "role", 3])
def test_info_names_refuses_what_is_not_an_info(info):
    with pytest.raises(TypeError, match=r"info must be a dict, an env's info such as .*got "):
        info_names(info)


def test_the_aec_env_hands_out_infos_a_callers_edits_cannot_change():
    game = env()
    game.reset(seed=0)
    first = game.agent_selection
    kept = game.infos[first]
    expected = dict(kept)
    game.infos[first]["role"] = 99  # a caller's edits of the info it was handed
    game.infos[first]["extra"] = "x"
    del game.infos["player_2"]["phase"]
    game.infos["player_1"] = {"seat": 7}
    mask = game.last()[0]["action_mask"]
    game.step(int(np.flatnonzero(mask)[0]))  # a bid or a pass: the phase and roles may be unchanged
    for i in range(3):
        info = game.infos[f"player_{i}"]
        assert set(info) == {"seat", "role", "phase"} and info["seat"] == i and info["role"] in (-1, 0, 1, 2)
    assert game.infos[first] == expected and game.infos[first] is not kept
    assert kept["role"] == 99  # the caller's own copy, as the caller left it
