"""The Gymnasium environments: ``DouDizhu-v0`` (one learning seat) and its vector env."""

import dataclasses
import subprocess
import sys
import warnings

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils import env_checker  # noqa: E402
from gymnasium.utils.passive_env_checker import env_reset_passive_checker, env_step_passive_checker  # noqa: E402
from scripted_deals import BOMB  # noqa: E402

import doudizhu_env  # noqa: E402
from doudizhu_env import action_table, engine, format_hand, info_names, parse_hand  # noqa: E402
from doudizhu_env.driver import legal_by_construction  # noqa: E402
from doudizhu_env.engine import IllegalActionError  # noqa: E402
from doudizhu_env.gym_env import DouDizhuEnv, DouDizhuVectorEnv  # noqa: E402


class ScriptedAgent:
    """Plays a scripted hand: the move after ``history_len`` moves is ``script[history_len]``."""

    def __init__(self, script):
        table = action_table()
        self.ids = np.array([table.index(name) for name in script])
        self.views = []

    def act(self, view):
        self.views.append(view)
        return self.ids[view.history_len.astype(np.int64)]


def masked_sample(env, obs):
    return env.action_space.sample(obs["action_mask"])


# ------------------------------------------------------------------ the single-seat env


def test_default_env_passes_gymnasiums_check_env():
    """Gymnasium's check_env steps ``action_space.sample()``, unmasked: almost always illegal. The default
    ``illegal_action="penalty"`` ends the hand on it, so the env as constructed passes."""
    env = gymnasium.make("DouDizhu-v0")
    assert env.unwrapped.illegal_action == "penalty"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env_checker.check_env(env.unwrapped)
    assert not caught, [str(w.message) for w in caught]


def test_default_env_passes_stable_baselines3s_check_env():
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = gymnasium.make("DouDizhu-v0")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sb3_checker.check_env(env)  # the Dict of a float Box and an int8 Box mask: supported, no warning
        sb3_checker.check_env(env.unwrapped)
    assert not caught, [str(w.message) for w in caught]


def test_raise_variant_passes_the_checks_that_use_legal_actions():
    env = gymnasium.make("DouDizhu-v0", illegal_action="raise").unwrapped
    env_checker.check_reset_return_type(env)
    env_checker.check_reset_seed_determinism(env)
    env_checker.check_reset_options(env)
    obs, _ = env_reset_passive_checker(env)
    env_step_passive_checker(env, masked_sample(env, obs))
    env.action_space.seed(0)
    with pytest.raises(IllegalActionError):  # what the unmasked check_env would meet
        env_checker.check_env(env)


def test_make_and_make_vec():
    env = gymnasium.make("DouDizhu-v0", seat=2, reward="win")
    assert isinstance(env.unwrapped, DouDizhuEnv) and env.unwrapped.seat == 2
    envs = gymnasium.make_vec("DouDizhu-v0", num_envs=5, seat=1)
    assert isinstance(envs, DouDizhuVectorEnv) and envs.num_envs == 5 and list(envs.seats) == [1] * 5
    obs, info = envs.reset(seed=0)
    assert obs["observation"].shape == (5, envs.single_observation_space["observation"].shape[0])
    assert obs["action_mask"].shape == info["action_mask"].shape == (5, len(action_table()))
    doudizhu_env.register_envs()  # idempotent
    assert gymnasium.spec("DouDizhu-v0").vector_entry_point == "doudizhu_env.gym_env:DouDizhuVectorEnv"


def in_a_fresh_process(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


MADE = ("envs = gymnasium.make_vec({id!r}, num_envs=2)\n"
        "print(type(gymnasium.make({id!r}).unwrapped).__name__, type(envs).__name__)\n")


@pytest.mark.parametrize("imports, env_id", [
    # Gymnasium's module:id form imports the env module first, in any order
    ("import gymnasium", "doudizhu_env.gym_env:DouDizhu-v0"),
    ("import doudizhu_env, gymnasium", "doudizhu_env.gym_env:DouDizhu-v0"),
    ("import gymnasium", "doudizhu_env:DouDizhu-v0"),
    ("import gymnasium, doudizhu_env", "DouDizhu-v0"),  # gymnasium first: import doudizhu_env registers
    ("import doudizhu_env.gym_env, gymnasium", "DouDizhu-v0"),  # the env module registers its id
    ("import doudizhu_env, gymnasium; doudizhu_env.register_envs()", "DouDizhu-v0"),
])
def test_the_id_is_registered_by_the_documented_forms(imports, env_id):
    assert in_a_fresh_process(f"{imports}\n" + MADE.format(id=env_id)) == "DouDizhuEnv DouDizhuVectorEnv"


def test_no_import_hook_and_no_registration_without_gymnasium():
    """``import doudizhu_env`` adds no finder to ``sys.meta_path``; imported before gymnasium, it leaves
    the short id unregistered (gymnasium says so), as the docs say."""
    code = ("import sys\nbefore = list(sys.meta_path)\nimport doudizhu_env, gymnasium\n"
            "assert sys.meta_path == before, sys.meta_path\n"
            "try:\n    gymnasium.make('DouDizhu-v0')\n"
            "except gymnasium.error.NameNotFound:\n    print('unknown')\n")
    assert in_a_fresh_process(code) == "unknown"


def test_making_the_env_does_not_load_pettingzoo():
    code = ("import sys, gymnasium\n"
            "env = gymnasium.make('doudizhu_env.gym_env:DouDizhu-v0')\n"
            "assert 'pettingzoo' not in sys.modules\n"
            "env.reset(seed=0); print('ok')\n")
    assert in_a_fresh_process(code) == "ok"


def test_import_loads_neither_gymnasium_nor_pettingzoo():
    code = (
        "import sys, doudizhu_env\n"
        "from doudizhu_env import engine, observation, rewards, legal_moves, action_table\n"
        "print(sorted(m for m in ('gymnasium', 'pettingzoo') if m in sys.modules))\n"
    )
    assert in_a_fresh_process(code) == "[]"


def run_episode(env, seed):
    """One hand with masked random actions; the trajectory (observations, rewards, infos)."""
    env.action_space.seed(seed)
    obs, info = env.reset(seed=seed)
    traj = [(obs["observation"].copy(), 0.0)]
    while True:
        assert obs["action_mask"].any() and np.array_equal(obs["action_mask"], info["action_mask"])
        assert env.observation_space.contains(obs)
        obs, reward, terminated, truncated, info = env.step(masked_sample(env, obs))
        traj.append((obs["observation"].copy(), reward))
        if terminated or truncated:
            assert not obs["action_mask"].any() and info["phase"] == engine.OVER
            return traj, info


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_random_hands_are_zero_sum_and_deterministic(seat):
    env = DouDizhuEnv(seat=seat)
    for seed in range(5):
        traj, info = run_episode(env, seed)
        again, info2 = run_episode(env, seed)
        assert len(traj) == len(again)
        for (o1, r1), (o2, r2) in zip(traj, again, strict=True):
            np.testing.assert_array_equal(o1, o2)
            assert r1 == r2
        assert traj[-1][1] == info["scores"][seat] and info["scores"].sum() == 0
        assert all(r == 0 for _, r in traj[:-1])


def test_every_observation_is_the_learning_seats_turn():
    env = DouDizhuEnv(seat=1)
    obs, _ = env.reset(seed=3)
    for _ in range(200):
        state = env.unwrapped.state
        assert state.to_act[0] == 1 and not state.done[0]
        obs, _, terminated, truncated, _ = env.step(masked_sample(env, obs))
        if terminated or truncated:
            obs, _ = env.reset()


def test_scripted_hand_through_the_single_env():
    """BOMB.deal: the learning seat is the landlord (seat 1); scripted opponents see only their views."""
    opponents = [ScriptedAgent(BOMB.script), ScriptedAgent(BOMB.script)]
    env = DouDizhuEnv(seat=1, opponents=opponents)
    obs, info = env.reset(options={"deal": BOMB.deal})
    ids = ScriptedAgent(BOMB.script).ids
    while True:
        action = ids[env.state.history_len[0]]
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated:
            break
        assert reward == 0 and info["role"] == 0 and info_names(info)["role"] == "landlord"
    assert reward == 384 and list(info["scores"]) == BOMB.points
    for opp in opponents:  # each saw only its own hand
        for view in opp.views:
            seat = view.to_act[0]
            assert view.hands[0].sum(axis=1)[seat] > 0
            assert all(view.hands[0, s].sum() == 0 for s in range(3) if s != seat)
            assert np.all(view.deal == -1) and not view.key.any()
    win = DouDizhuEnv(seat=0, opponents=[ScriptedAgent(BOMB.script)] * 2, reward="win")
    win.reset(options={"deal": BOMB.deal})
    terminated = False
    while not terminated:
        _, reward, terminated, _, _ = win.step(ids[win.state.history_len[0]])
    assert reward == -1.0


def test_illegal_action_raises_and_changes_nothing():
    env = DouDizhuEnv(illegal_action="raise")
    obs, _ = env.reset(seed=0)
    before = {f.name: getattr(env.state, f.name) for f in dataclasses.fields(env.state)}
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[-1])
    obs["action_mask"][illegal] = 1  # writing into the observation does not make an action legal
    with pytest.raises(IllegalActionError):
        env.step(illegal)
    for name, value in before.items():
        if name != "rules":
            np.testing.assert_array_equal(getattr(env.state, name), value, err_msg=name)
    obs["action_mask"][illegal] = 0
    obs, reward, terminated, truncated, _ = env.step(masked_sample(env, obs))
    with pytest.raises(IllegalActionError):
        env.step(1.5)


@pytest.mark.parametrize("kwargs", [{}, {"illegal_action": "penalty", "illegal_reward": -3}])
def test_penalty_ends_the_hand_by_default(kwargs):
    env = DouDizhuEnv(**kwargs)
    penalty = float(kwargs.get("illegal_reward", -1.0))
    obs, _ = env.reset(seed=0)
    before = env.state
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[-1])
    obs["action_mask"][illegal] = 1  # writing into the observation does not make an action legal
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (penalty, True, False, True)
    assert env.state is before  # nothing was played
    assert not obs["action_mask"].any() and not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=1)
    for bad in (1.5, True, "0", env.action_space.n, -1):  # not an id of the action space: raises, no penalty
        with pytest.raises(IllegalActionError):
            env.step(bad)
    assert env.action_masks().any()  # the hand goes on: nothing was played, no penalty


def test_action_masks_method_is_the_observations_mask():
    env = gymnasium.make("DouDizhu-v0")
    assert not env.unwrapped.action_masks().any()  # before reset: nothing is legal
    obs, info = env.reset(seed=2)
    for _ in range(300):
        masks = env.get_wrapper_attr("action_masks")()  # how sb3-contrib reaches it through wrappers
        assert masks.dtype == bool
        np.testing.assert_array_equal(masks, obs["action_mask"].astype(bool))
        obs, reward, terminated, truncated, info = env.step(masked_sample(env.unwrapped, obs))
        assert "illegal_action" not in info
        if terminated or truncated:
            assert not env.get_wrapper_attr("action_masks")().any()
            obs, info = env.reset()


def test_render_shows_only_the_learning_seats_hand():
    env = DouDizhuEnv(seat=0, render_mode="ansi")
    env.reset(seed=0, options={"deal": BOMB.deal})
    text = env.render()
    hands = [format_hand(parse_hand(h)) for h in BOMB.deal["hands"]]
    if env.state.phase[0] == engine.BIDDING:  # seat 0 bids second
        assert "hole: ???" in text
    assert hands[0] in text and hands[1] not in text and hands[2] not in text


def test_bad_arguments():
    for kwargs in ({"seat": 3}, {"reward": "x"}, {"illegal_action": "x"}, {"opponents": [object()]}):
        with pytest.raises(ValueError):
            DouDizhuEnv(**kwargs)
    with pytest.raises(ValueError):
        DouDizhuVectorEnv(4, seat=[0, 1, 2])


# ------------------------------------------------------------------ the vector env


def random_masked(mask, rng):
    """One uniformly random legal action per row of a (B, A) mask."""
    noise = rng.random(mask.shape, dtype=np.float32)
    return np.argmax(np.where(mask > 0, noise, -1.0), axis=1)


def test_vector_env_random_play_with_autoreset():
    n = 64
    envs = DouDizhuVectorEnv(n, seat=np.arange(n) % 3)
    obs, info = envs.reset(seed=1)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(120):
        assert envs.observation_space.contains(obs)
        assert np.all(envs.state.to_act == envs.seats) and not envs.state.done.any()
        assert np.all(obs["action_mask"].sum(axis=1) > 0)
        np.testing.assert_array_equal(obs["observation"], doudizhu_env.observation.observe(envs.state,
                                                                                         envs.seats))
        obs, rewards, terminated, truncated, info = envs.step(random_masked(obs["action_mask"], rng))
        assert rewards.shape == (n,) and rewards.dtype == np.float32
        done = terminated | truncated
        assert np.all(rewards[~done] == 0)
        if done.any():
            ended += int(done.sum())
            np.testing.assert_array_equal(info["_final_obs"], done)
            scores = info["final_info"]["scores"]
            np.testing.assert_array_equal(rewards[done], scores[done, envs.seats[done]])
            assert np.all(scores[done].sum(axis=1) == 0)
            for j in np.flatnonzero(done):
                final = info["final_obs"][j]
                assert not final["action_mask"].any()
                assert envs.single_observation_space.contains(final)
            # the hands that ended were dealt anew: the new hand starts with at most a few moves
            assert np.all(envs.state.history_len[done] <= 4)
    assert ended > n  # every game finished about two hands


def test_vector_env_never_modifies_a_state_it_returned():
    """Engine states share arrays (copy on write): the env must not write into them."""
    envs = DouDizhuVectorEnv(24, seat=np.arange(24) % 3)
    obs, _ = envs.reset(seed=4)
    rng = np.random.default_rng(4)
    held = []
    for _ in range(30):
        held.append((envs.state, {f.name: np.copy(getattr(envs.state, f.name))
                                  for f in dataclasses.fields(envs.state) if f.name != "rules"}))
        obs, *_ = envs.step(random_masked(obs["action_mask"], rng))
    for state, snapshot in held:
        for name, value in snapshot.items():
            np.testing.assert_array_equal(getattr(state, name), value, err_msg=name)


def test_vector_env_is_deterministic_by_seed():
    def run(seed):
        envs = gymnasium.make_vec("DouDizhu-v0", num_envs=16)
        obs, _ = envs.reset(seed=seed)
        rng = np.random.default_rng(seed)
        out = [obs["observation"].copy()]
        for _ in range(40):
            obs, rewards, *_ = envs.step(random_masked(obs["action_mask"], rng))
            out += [obs["observation"].copy(), rewards]
        return out

    a, b, c = run(7), run(7), run(8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))


def test_vector_env_scripted_deals_in_every_seat(scripted_hand):
    """One scripted hand in 6 games, learning seats 0, 1, 2, 0, 1, 2: each ends with its seat's points."""
    _, deal, script, points = scripted_hand
    seats = np.arange(6) % 3
    opponents = ScriptedAgent(script)
    envs = DouDizhuVectorEnv(6, seat=seats, opponents=[opponents, opponents])
    envs.reset(seed=0, options={"deals": [deal] * 6})
    ids = ScriptedAgent(script).ids
    got = np.full(6, np.nan)
    for _ in range(len(script)):
        if not np.isnan(got).any():
            break
        _, rewards, terminated, truncated, info = envs.step(ids[envs.state.history_len])
        first = terminated & np.isnan(got)
        got[first] = rewards[first]
        assert not truncated.any()
    np.testing.assert_array_equal(got, np.array(points)[seats])
    for view in opponents.views:  # views hide the other hands
        others = np.arange(3)[None, :] != view.to_act[:, None]
        assert not view.hands.sum(axis=2)[others].any()


def test_vector_env_illegal_action_raises_and_changes_nothing():
    envs = DouDizhuVectorEnv(8)
    obs, _ = envs.reset(seed=0)
    state = envs.state
    actions = random_masked(obs["action_mask"], np.random.default_rng(0))
    actions[3] = np.flatnonzero(obs["action_mask"][3] == 0)[-1]
    with pytest.raises(IllegalActionError, match="game 3"):
        envs.step(actions)
    assert envs.state is state
    with pytest.raises(IllegalActionError):
        envs.step(actions[:4])


def test_vector_env_reward_kinds():
    envs = DouDizhuVectorEnv(32, reward="log_score")
    obs, _ = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(80):
        obs, rewards, terminated, truncated, info = envs.step(random_masked(obs["action_mask"], rng))
        if terminated.any():
            pts = info["final_info"]["scores"][terminated, 0].astype(np.float64)
            expected = np.sign(pts) * np.log2(1 + np.abs(pts))
            np.testing.assert_allclose(rewards[terminated], expected, rtol=1e-6)


def test_random_opponents_views():
    """The default opponents are ``engine.RandomPolicy`` and get the games as they are; a ``RandomAgent``
    (an agent, possibly subclassed to read its view) gets seat views, and with the same seeds plays the
    same hands."""
    from agents.base import RandomAgent

    class Spy(RandomAgent):
        def __init__(self, seed):
            super().__init__(seed)
            self.views = []

        def act(self, view):
            self.views.append(view)
            return super().act(view)

    env = DouDizhuEnv()
    assert all(type(o) is engine.RandomPolicy and legal_by_construction(o) for o in env.opponents)

    def hands(opponents, seed):
        env = DouDizhuEnv(seat=1, opponents=opponents)
        obs, info = env.reset(seed=seed)
        env.action_space.seed(seed)
        names = []
        while True:
            action = int(masked_sample(env, obs))
            names.append(action)
            obs, reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                return names, reward

    for seed in range(3):
        spies = [Spy(seed), Spy(seed + 10)]
        assert hands(spies, seed) == hands([engine.RandomPolicy(seed), engine.RandomPolicy(seed + 10)], seed)
        views = [v for spy in spies for v in spy.views]
        assert views
        for view in views:
            for i in range(view.num_games):
                others = [s for s in range(3) if s != view.to_act[i]]
                assert not view.hands[i, others].any()  # the hidden hands are blanked
