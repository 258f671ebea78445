"""The envs' infos (doudizhu_env/infos.py): numbers only, the same three entries in the PettingZoo env,
``DouDizhuEnv`` and the vector env, each the code of the seat's role and the game's phase at that step;
and :func:`doudizhu_env.info_names`, the codes' names."""

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

from doudizhu_env import info_names  # noqa: E402
from doudizhu_env.aec import env  # noqa: E402
from doudizhu_env.engine import OVER, PHASE_NAMES, ROLE_NAMES, role_of  # noqa: E402
from doudizhu_env.gym_env import DouDizhuEnv, DouDizhuVectorEnv  # noqa: E402
from doudizhu_env.infos import INFO_KEYS, NO_ROLE, batch_info, seat_info  # noqa: E402


def assert_codes(info: dict, seat: int, state, game: int = 0) -> None:
    """``info`` holds exactly the Python-int codes of ``seat`` in game ``game`` of ``state``."""
    codes = {k: info[k] for k in INFO_KEYS}
    assert all(type(v) is int for v in codes.values()), codes  # not bool, not numpy, not str, not None
    landlord = int(state.landlord[game])
    assert codes == {"seat": seat, "role": int(role_of(seat, landlord)), "phase": int(state.phase[game])}


def test_the_pettingzoo_infos_are_the_codes_at_every_step():
    game = env()
    for seed in range(3):
        game.reset(seed=seed)
        seen_roles, seen_phases = set(), set()
        for agent in game.agent_iter():
            obs, _, term, trunc, _ = game.last()
            state = game.unwrapped.state
            for i in range(3):
                if f"player_{i}" not in game.agents:  # done with the hand, stepped out
                    continue
                info = game.infos[f"player_{i}"]
                assert set(info) == set(INFO_KEYS)
                assert_codes(info, i, state)
                seen_roles.add(info["role"])
                seen_phases.add(info["phase"])
            game.step(None if term or trunc else game.action_space(agent).sample(obs["action_mask"]))
        assert seen_roles == {NO_ROLE, 0, 1, 2} and {0, 2, OVER} <= seen_phases


def test_the_gymnasium_infos_are_the_codes_at_every_step():
    for seat in range(3):
        single = DouDizhuEnv(seat=seat)
        obs, info = single.reset(seed=seat)
        rng = np.random.default_rng(seat)
        while True:
            assert_codes(info, seat, single.state)
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            obs, _, terminated, truncated, info = single.step(action)
            if terminated or truncated:
                assert_codes(info, seat, single.state)
                assert info["phase"] == OVER
                break


@pytest.mark.parametrize("mask", ["dense", "ids", "bits"])
def test_the_vector_infos_are_the_codes_per_game(mask):
    seats = [0, 1, 2, 0, 1, 2]
    envs = DouDizhuVectorEnv(num_envs=6, seat=seats, mask=mask)
    _, info = envs.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(60):
        s = envs.state
        for key in INFO_KEYS:
            assert info[key].dtype == np.int64 and info[key].shape == (6,)
        np.testing.assert_array_equal(info["seat"], seats)
        np.testing.assert_array_equal(info["role"], role_of(seats, s.landlord))
        np.testing.assert_array_equal(info["phase"], s.phase)
        info["seat"][:] = 7  # the caller's own arrays: the env's seats are unchanged
        np.testing.assert_array_equal(envs.seats, seats)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in _dense_masks(envs)])
        _, _, _, _, info = envs.step(actions)


def _dense_masks(envs):
    from doudizhu_env import engine

    return engine.legal_action_mask(envs.state)


def test_the_vector_infos_split_per_game_with_dict_info_to_list():
    from gymnasium.wrappers.vector import DictInfoToList

    envs = DictInfoToList(DouDizhuVectorEnv(num_envs=3, seat=[2, 0, 1], mask="bits"))
    _, infos = envs.reset(seed=4)
    state = envs.unwrapped.state
    assert [int(i["seat"]) for i in infos] == [2, 0, 1]
    assert [int(i["role"]) for i in infos] == list(role_of([2, 0, 1], state.landlord))
    assert [int(i["phase"]) for i in infos] == list(state.phase)


def test_info_names_names_the_codes():
    assert info_names({"seat": 1, "role": 0, "phase": 2}) == {"seat": 1, "role": "landlord", "phase": "play"}
    assert info_names({"seat": 0, "role": -1, "phase": 0}) == {"seat": 0, "role": None, "phase": "bidding"}
    assert [info_names({"role": r})["role"] for r in range(3)] == list(ROLE_NAMES)
    assert [info_names({"phase": p})["phase"] for p in range(4)] == list(PHASE_NAMES)
    other = {"seat": 2, "role": 1, "phase": 3, "action_mask": np.ones(3), "scores": [1, 2, 3]}
    named = info_names(other)
    assert named["action_mask"] is other["action_mask"] and other["role"] == 1  # a copy; the rest as is
    batch = info_names({"role": np.array([-1, 0, 2]), "phase": np.array([0, 2, 3])})
    assert list(batch["role"]) == [None, "landlord", "landlord_up"]
    assert list(batch["phase"]) == ["bidding", "play", "over"]


@pytest.mark.parametrize("info, message", [
    ({"role": 3}, r"info\['role'\] must hold codes -1..2, got 3"),
    ({"role": -2}, r"info\['role'\] must hold codes -1..2"),
    ({"phase": -1}, r"info\['phase'\] must hold codes 0..3, got -1"),
    ({"phase": "play"}, r"info\['phase'\] must hold codes 0..3, got 'play'"),
    ({"role": np.array([0, 5])}, r"info\['role'\] must hold codes -1..2"),
    ({"role": 1.0}, r"info\['role'\] must hold codes"),
])
def test_info_names_refuses_what_is_not_a_code(info, message):
    with pytest.raises(ValueError, match=message):
        info_names(info)


def test_one_game_and_batch_infos_agree():
    landlord, phase = np.array([-1, 0, 1, 2, 2]), np.array([0, 1, 2, 3, 2])
    seats = np.array([0, 1, 2, 0, 2])
    batch = batch_info(seats, landlord, phase)
    for g in range(5):
        one = seat_info(int(seats[g]), int(landlord[g]), int(phase[g]))
        assert one == {k: int(batch[k][g]) for k in INFO_KEYS}
