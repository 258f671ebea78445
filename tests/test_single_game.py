"""The single-game path (:mod:`doudizhu_env.game`) against the batched engine, step for step.

Games are played in lockstep on both: B games of one batched state, and B :class:`Game` objects
read from its rows, given the same actions (random legal ones, bidding made shy so that all-pass
redeals and truncations happen). After every step each field of the states, the legal masks, the
three seats' observations and the rewards must be equal. The environments built on the path are
compared with the batched engine's single-seat loop they replaced.
"""

import dataclasses
import pickle

import numpy as np
import pytest
from helpers import sweep
from scripted_deals import BOMB_DEAL, BOMB_POINTS, BOMB_SCRIPT

from doudizhu_env import Rules, action_table, engine
from doudizhu_env.actions import BID0
from doudizhu_env.engine import BIDDING, IllegalActionError
from doudizhu_env.game import Game
from doudizhu_env.observation import observe

#: the first three (the full game, the douzero preset with bidding, a truncating redeal limit) are
#: the lockstep cases of make test, the other two make test-slow's
CONFIGS = {
    "standard": Rules.preset("standard"),
    "douzero_bidding": Rules.preset("douzero", bidding=True),
    "standard_truncating": Rules.preset("standard", redeal_limit=0),  # the second all-pass truncates
    "standard_no_bidding": Rules.preset("standard", bidding=False),
    "douzero": Rules.preset("douzero"),
}
FIELDS = [f.name for f in dataclasses.fields(engine.State) if f.name != "rules"]


def batched(games: list[Game]) -> dict:
    """The fields of the games' one-game states, stacked as a batched state's."""
    states = [g.to_state() for g in games]
    return {name: np.concatenate([getattr(s, name) for s in states]) for name in FIELDS}


def assert_same(games: list[Game], state: engine.State, where: str) -> None:
    """Every field, the legal masks and every seat's observation of ``games`` equal ``state``'s."""
    ours = batched(games)
    for name in FIELDS:
        theirs = getattr(state, name)
        assert ours[name].dtype == theirs.dtype, f"{where}: {name} dtype"
        assert_equal(ours[name], theirs, f"{where}: {name}")
    masks = np.stack([g.legal_mask() for g in games]).view(bool)
    assert_equal(masks, engine.legal_action_mask(state), f"{where}: masks")
    for seat in range(3):
        assert_equal(np.stack([g.observe(seat) for g in games]), observe(state, seat),
                     f"{where}: observations of seat {seat}")


def assert_equal(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    if not np.array_equal(ours, theirs):  # (numpy's assertion, slower, only to describe the difference)
        np.testing.assert_array_equal(ours, theirs, err_msg=what)


def lockstep(rules: Rules, seed: int, num_games: int) -> tuple[list[Game], engine.State, int]:
    """Random play on both paths until every game is over; returns both and the steps made."""
    state = engine.reset(seed, num_games, rules)
    games = [Game(state, i) for i in range(num_games)]
    rng = np.random.default_rng(seed + 1)
    assert_same(games, state, "reset")
    steps = 0
    while not state.done.all():
        shy = rng.random(num_games) < 0.5  # bid nothing half the time: more all-pass redeals
        actions = np.array([BID0 if shy[i] and g.phase == BIDDING else g.sample_legal(rng)
                            for i, g in enumerate(games)])
        for g, a in zip(games, actions, strict=True):
            g.step(int(a))
        state = engine.step(state, actions)
        steps += 1
        assert_same(games, state, f"seed {seed}, step {steps}")
    return games, state, steps


@pytest.mark.parametrize("config", sweep(CONFIGS, default=3))
def test_random_games_match_the_batched_engine_step_for_step(config):
    games, state, steps = lockstep(CONFIGS[config], seed=7, num_games=200)
    assert steps > 60 and state.done.all()
    assert (state.scores.sum(axis=1) == 0).all() and (np.abs(state.scores).sum(axis=1) > 0).any()
    if config == "standard_truncating":
        assert state.truncated.any()
    if CONFIGS[config].bidding:
        assert (state.redeals > 0).any()  # the engine's redeal, taken over by the games


@pytest.mark.slow
@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("seed", [1, 2])
def test_more_random_games_match_the_batched_engine(config, seed):
    lockstep(CONFIGS[config], seed=seed, num_games=600)


@pytest.mark.parametrize("rules", ["standard", "douzero"])
def test_random_play_draws_what_the_engine_draws(rules):
    """``Game.sample_legal`` takes the engine's draw for a one-game state from the same generator."""
    for seed in range(25):
        game, state = Game.new(seed, rules), engine.reset(seed, 1, rules)
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        while not state.done[0]:
            a = game.sample_legal(ours)
            assert a == engine.sample_legal(state, theirs)[0]
            game.step(a)
            state = engine.step(state, np.array([a]))
        assert game.scores == state.scores[0].tolist()
        assert game.sample_legal(ours) == engine.sample_legal(state, theirs)[0] == 0  # over: pass


def test_new_deals_as_the_engine_resets():
    for seed in range(5):
        for rules in ("standard", "douzero"):
            game, state = Game.new(seed, rules), engine.reset(seed, 1, rules)
            assert_same([game], state, f"seed {seed}")
    deal = engine.Deal(**BOMB_DEAL)
    assert_same([Game.new(0, deal=deal)], engine.reset(0, 1, deals=[deal]), "scripted deal")


def assert_same_fields(game: Game, state: engine.State, where: str) -> None:
    """Every field of ``game``'s one-game state equals ``state``'s (dtypes too)."""
    ours = game.to_state()
    for name in FIELDS:
        mine, theirs = getattr(ours, name), getattr(state, name)
        assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs), f"{where}: {name}"


@pytest.mark.parametrize("config", ["standard", "standard_no_bidding", "douzero", "douzero_bidding"])
def test_new_deals_as_the_engine_resets_on_thousands_of_seeds(config):
    """``Game.new`` deals without the engine: the same cards, seats and fields, the same draws taken."""
    rules = CONFIGS[config]
    for seed in range(2000):
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        game, state = Game.new(ours, rules), engine.reset(theirs, 1, rules)
        assert_same_fields(game, state, f"seed {seed}")
        assert ours.random() == theirs.random()  # the generators moved on alike
        if seed % 200 == 0:
            assert_same([game], state, f"seed {seed}")
    for seed in range(50):
        deal = engine.Deal(**{**BOMB_DEAL, "first_bidder": seed % 3})
        assert_same([Game.new(seed, rules, deal=deal)], engine.reset(seed, 1, rules, deals=[deal]),
                    f"scripted deal, seed {seed}")


@pytest.mark.parametrize("config", ["standard", "standard_no_bidding"])
@pytest.mark.parametrize("first_seed", sweep([0, 20, 40], default=1))
def test_next_hands_deal_as_the_engine_on_many_episodes(config, first_seed):
    """Hand after hand (``next_hand`` against ``engine.reset_done``), random play drawn alike:
    20 seeds of 4 hands each per case, the first 20 in ``make test``."""
    rules = CONFIGS[config]
    for seed in range(first_seed, first_seed + 20):
        game, state = Game.new(seed, rules), engine.reset(seed, 1, rules)
        ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
        for episode in range(4):
            while not game.done:
                game.step(game.sample_legal(ours))
                state = engine.step(state, engine.sample_legal(state, theirs))
            game.next_hand()
            state = engine.reset_done(state)
            assert_same_fields(game, state, f"seed {seed}, episode {episode + 1}")


def test_scripted_hand_scores_as_the_rules_say():
    game, table = Game.new(0, deal=BOMB_DEAL), action_table()
    for name in BOMB_SCRIPT:
        assert not game.done
        game.step(table.index(name))
    assert game.done and game.scores == BOMB_POINTS and game.rewards == [float(p) for p in BOMB_POINTS]


def test_next_hand_is_the_engines_reset_done():
    games, state, _ = lockstep(CONFIGS["standard"], seed=3, num_games=20)
    for g in games:
        g.next_hand()
    assert_same(games, engine.reset_done(state), "next hands")


@pytest.mark.parametrize("steps", [0, 4, 20])
def test_illegal_action_raises_the_engines_error_and_changes_nothing(steps):
    game, rng = Game.new(11), np.random.default_rng(0)
    for _ in range(steps):
        game.step(game.sample_legal(rng))
    before = game.to_state()
    illegal = int(np.flatnonzero(game.legal_mask() == 0)[-1])
    for bad in (illegal, -1, game.num_actions):
        with pytest.raises(IllegalActionError):
            game.step(bad)
        assert game.to_state() is before
    with pytest.raises(IllegalActionError, match="is not legal in the"):
        game.step(illegal)


def test_the_legal_mask_is_the_callers_own():
    """Writing into a mask changes neither the game's legality nor the next mask it gives."""
    game, rng = Game.new(5), np.random.default_rng(1)
    for _ in range(6):
        game.step(game.sample_legal(rng))
    ids = game.legal_ids().copy()
    first = game.legal_mask()
    first[:] = 1 - first
    second = game.legal_mask()
    assert second is not first and (np.flatnonzero(second) == ids).all()
    assert (game.legal_ids() == ids).all() and not game.is_legal(int(np.flatnonzero(first)[0]))


def test_bad_arguments_are_refused():
    state = engine.reset(0, 2)
    for game in (2, -1, True, 1.0, "0"):
        with pytest.raises(ValueError, match="game must be an index 0..1 of the state"):
            Game(state, game)
    with pytest.raises(TypeError, match="a Game is read from an engine State"):
        Game(state.hands)
    with pytest.raises(IllegalActionError, match="an action is one integer id"):
        Game(state).step(1.0)


def test_a_pickled_game_plays_on_the_same():
    game, rng = Game.new(5), np.random.default_rng(1)
    for _ in range(25):
        game.step(game.sample_legal(rng))
    copy = pickle.loads(pickle.dumps(game))
    a, b = np.random.default_rng(2), np.random.default_rng(2)
    while not game.done:
        np.testing.assert_array_equal(game.observe(game.to_act), copy.observe(copy.to_act))
        game.step(game.sample_legal(a))
        copy.step(copy.sample_legal(b))
    assert copy.done and copy.scores == game.scores


# ------------------------------------------------------------------ the environments on the path


@pytest.mark.parametrize("rules", ["standard", "douzero", "standard_truncating"])
def test_gym_env_plays_as_the_batched_single_seat_loop(rules):
    """``DouDizhuEnv`` with its default random opponents, against the loop it replaced: the batched
    engine at B = 1, the opponents asked through :mod:`doudizhu_env.driver`, seeded the same way."""
    gymnasium = pytest.importorskip("gymnasium")
    from doudizhu_env.driver import seat_actions
    from doudizhu_env.gym_env import DouDizhuEnv

    def opponents_move(state, seat, seat_player, opponents):
        while not state.done[0] and state.to_act[0] != seat:
            state = engine.step(state, seat_actions(state, seat_player, opponents))
        return state

    for seat in range(3):
        env = DouDizhuEnv(seat=seat, rules=CONFIGS[rules])
        seat_player = np.array([[(s - seat - 1) % 3 if s != seat else -1 for s in range(3)]])
        for seed in range(4):
            obs, _ = env.reset(seed=seed)
            np_random, _ = gymnasium.utils.seeding.np_random(seed)
            opponents = [engine.RandomPolicy(np.random.default_rng(np_random.integers(0, 2**63 - 1)))
                         for _ in range(2)]
            state = opponents_move(engine.reset(np_random, 1, env.rules), seat, seat_player, opponents)
            while state.done[0]:  # over before the learning seat's first decision: dealt again
                state = opponents_move(engine.reset_done(state), seat, seat_player, opponents)
            learner = np.random.default_rng(seed)
            while True:
                np.testing.assert_array_equal(obs["observation"], observe(state, seat)[0])
                np.testing.assert_array_equal(obs["action_mask"], engine.legal_action_mask(state)[0])
                action = int(learner.choice(np.flatnonzero(obs["action_mask"])))
                obs, reward, terminated, truncated, info = env.step(action)
                state = opponents_move(engine.step(state, np.array([action])), seat, seat_player, opponents)
                assert (terminated or truncated) == bool(state.done[0])
                if terminated or truncated:
                    assert reward == state.scores[0, seat] and list(info["scores"]) == list(state.scores[0])
                    np.testing.assert_array_equal(obs["observation"], observe(state, seat)[0])
                    break
                assert reward == 0.0


def test_aec_env_observes_the_engines_state():
    pytest.importorskip("pettingzoo")
    from doudizhu_env.aec import env

    game, rng = env(), np.random.default_rng(0)
    for seed in range(3):
        game.reset(seed=seed)
        assert_same([game.unwrapped.game], engine.reset(np.random.default_rng(seed), 1), f"seed {seed}")
        for agent in game.agent_iter():
            obs, _, term, trunc, _ = game.last()
            state = game.unwrapped.state
            np.testing.assert_array_equal(obs["observation"], observe(state, int(agent[-1]))[0])
            if term or trunc:
                game.step(None)
                continue
            np.testing.assert_array_equal(obs["action_mask"], engine.legal_action_mask(state)[0])
            game.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
