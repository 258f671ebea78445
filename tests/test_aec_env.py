"""The PettingZoo AEC env ``doudizhu_v0``: PettingZoo's conformance tests, illegal actions,
pickling, rendering, and scripted hands ending in the points of docs/rules.md ("Scoring")."""

import dataclasses
import math
import pickle
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, render_test, seed_test  # noqa: E402
from scripted_deals import BOMB  # noqa: E402

import doudizhu_env  # noqa: E402
from doudizhu_env import action_table, format_hand, info_names, parse_hand  # noqa: E402
from doudizhu_env.aec import env, raw_env  # noqa: E402
from doudizhu_env.engine import IllegalActionError  # noqa: E402


def play_script(game, deal, script, seed=0):
    """Play ``script`` through the AEC API; return each agent's reward as ``last()`` reports it at the end."""
    table = action_table()
    game.reset(seed=seed, options={"deal": deal})
    moves = iter(script)
    final = {}
    for agent in game.agent_iter():
        obs, reward, termination, truncation, info = game.last()
        if termination or truncation:
            final[agent] = reward
            game.step(None)
            continue
        name = next(moves)
        action = table.index(name)
        assert obs["action_mask"][action] == 1, f"{name!r} is not legal for {agent}"
        game.step(action)
    assert next(moves, None) is None, "the hand ended before the script did"
    return [final[f"player_{i}"] for i in range(3)]


def test_scripted_hands_score_as_the_rules_say(scripted_hand):
    _, deal, script, points = scripted_hand
    game = env()
    assert play_script(game, deal, script) == points
    state = game.unwrapped.state
    assert list(state.scores[0]) == points and sum(points) == 0
    # reward kinds: win is the sign, log_score is sign x log2(1 + |points|)
    assert play_script(env(reward="win"), deal, script) == [float(np.sign(p)) for p in points]
    logs = play_script(env(reward="log_score"), deal, script)
    assert logs == pytest.approx([math.copysign(math.log2(1 + abs(p)), p) for p in points])


def test_scripted_doubling_order_and_roles():
    """BOMB.deal: bidding from seat 2; doubling asks farmer 2, farmer 0, then the landlord 1."""
    game = env()
    game.reset(options={"deal": BOMB.deal})
    table = action_table()
    order = []
    for name in BOMB.script[:7]:
        order.append(game.agent_selection)
        game.step(table.index(name))
    assert order == ["player_2", "player_0", "player_1", "player_2", "player_0", "player_1", "player_1"]
    assert [game.infos[f"player_{i}"] for i in range(3)] == [  # numbers only: codes of doudizhu_env.infos
        {"seat": 0, "role": 2, "phase": 2}, {"seat": 1, "role": 0, "phase": 2},
        {"seat": 2, "role": 1, "phase": 2}]
    roles = [info_names(game.infos[f"player_{i}"])["role"] for i in range(3)]
    assert roles == ["landlord_up", "landlord", "landlord_down"]
    assert info_names(game.infos["player_0"])["phase"] == "play"


# ------------------------------------------------------------------ PettingZoo's tests


API_WARNINGS = [  # dict observations with an action mask, as PettingZoo's own classic games have
    "ignore:Observation space for each agent probably should be",
    "ignore:Observation is not a NumPy array",
]


@pytest.mark.filterwarnings(*API_WARNINGS)
def test_api():
    api_test(env(), num_cycles=300)


@pytest.mark.filterwarnings(*API_WARNINGS)
def test_api_douzero_rules():
    api_test(env(rules="douzero"), num_cycles=100)


def test_seed():
    seed_test(env, num_cycles=300)


def test_render(capsys):
    render_test(lambda render_mode=None: env(render_mode=render_mode))
    capsys.readouterr()


def test_lazy_exports():
    assert doudizhu_env.env is env and doudizhu_env.raw_env is raw_env
    with pytest.raises(AttributeError):
        doudizhu_env.no_such_name  # noqa: B018


def random_actions(game, rng, steps):
    """Take ``steps`` random legal steps (fewer if the hand ends); return the actions."""
    taken = []
    for _ in range(steps):
        obs, _, term, trunc, _ = game.last()
        if term or trunc:
            break
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        game.step(action)
        taken.append(action)
    return taken


def play_out(game, rng):
    """Play random legal actions to the end; return the observations and rewards seen."""
    seen = []
    for agent in game.agent_iter():
        obs, reward, term, trunc, _ = game.last()
        seen.append((agent, obs["observation"].copy(), obs["action_mask"].copy(), reward))
        game.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return seen


def test_pickle_round_trip_mid_game():
    game = env()
    game.reset(seed=5)
    random_actions(game, np.random.default_rng(1), 20)
    copy = pickle.loads(pickle.dumps(game))
    a = play_out(game, np.random.default_rng(2))
    b = play_out(copy, np.random.default_rng(2))
    assert len(a) == len(b) > 3
    for (agent_a, obs_a, mask_a, r_a), (agent_b, obs_b, mask_b, r_b) in zip(a, b, strict=True):
        assert agent_a == agent_b and r_a == r_b
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(mask_a, mask_b)


def _fields(state):
    return {f.name: getattr(state, f.name) for f in dataclasses.fields(state) if f.name != "rules"}


@pytest.mark.parametrize("steps", [0, 4, 12])
def test_illegal_action_raises_and_changes_nothing(steps):
    game = env()
    game.reset(seed=11)
    random_actions(game, np.random.default_rng(0), steps)
    agent = game.agent_selection
    before = _fields(game.unwrapped.state)
    obs = game.observe(agent)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[-1])
    with pytest.raises(IllegalActionError, match="not legal"):
        game.step(illegal)
    for name, value in _fields(game.unwrapped.state).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)
    assert game.agent_selection == agent
    np.testing.assert_array_equal(game.observe(agent)["observation"], obs["observation"])
    assert not any(game.terminations.values())
    play_out(game, np.random.default_rng(3))  # the game goes on normally
    assert game.unwrapped.state.done[0]


def test_out_of_range_action_is_refused():
    game = env()
    game.reset(seed=0)
    with pytest.raises(AssertionError):
        game.step(len(action_table()))
    with pytest.raises(IllegalActionError):
        game.unwrapped.step(-1)


def test_penalty_option_terminates_with_the_illegal_reward():
    game = env(illegal_action="penalty", illegal_reward=-5.0)
    game.reset(seed=2)
    random_actions(game, np.random.default_rng(0), 5)
    offender = game.agent_selection
    illegal = int(np.flatnonzero(game.observe(offender)["action_mask"] == 0)[-1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game.step(illegal)
    final = {}
    for agent in game.agent_iter():
        _, reward, term, trunc, _ = game.last()
        assert term or trunc
        final[agent] = reward
        game.step(None)
    assert final == {a: (-5.0 if a == offender else 0.0) for a in game.possible_agents}


def test_unknown_arguments_are_refused():
    for kwargs in ({"reward": "points"}, {"illegal_action": "ignore"}, {"perspective": 3},
                   {"render_mode": "rgb_array"}):
        with pytest.raises(ValueError):
            raw_env(**kwargs)


def test_perspective_rendering_hides_other_hands():
    game = env(render_mode="ansi", perspective=1)
    game.reset(options={"deal": BOMB.deal})
    text = game.render()
    hands = [format_hand(parse_hand(h)) for h in BOMB.deal["hands"]]
    assert hands[1] in text
    assert hands[0] not in text and hands[2] not in text
    assert "hole: ???" in text  # hidden while bidding
    assert "?" * 17 in text
    full = env(render_mode="ansi")
    full.reset(options={"deal": BOMB.deal})
    assert all(h in full.render() for h in hands)
    table = action_table()
    for name in BOMB.script[:3]:  # bidding over: the hole cards are public
        game.step(table.index(name))
    assert "hole: " + format_hand(parse_hand("JJX")) in game.render()


def test_observation_stays_in_its_space_through_a_bomb_heavy_hand():
    game = env()
    play_script(game, BOMB.deal, BOMB.script)
    for agent in game.possible_agents:
        assert game.observation_space(agent).contains(game.unwrapped.observe(agent))
