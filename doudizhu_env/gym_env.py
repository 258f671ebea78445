"""Dou Dizhu as Gymnasium environments: ``DouDizhu-v0``, one learning seat against fixed opponents.

::

    import gymnasium as gym
    import doudizhu_env  # registers DouDizhu-v0

    env = gym.make("DouDizhu-v0", seat=0)             # opponents: two uniform random players
    obs, info = env.reset(seed=42)
    while True:
        action = env.action_space.sample(obs["action_mask"])
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break

    envs = gym.make_vec("DouDizhu-v0", num_envs=1024)  # DouDizhuVectorEnv: the batched engine

**Episodes.** One episode is one hand, deal to score (redeals after three
passes included). The learning seat ``seat`` (0, 1 or 2) makes every
decision of its seat: bids, doubling and card play. Between two of its
decisions the other two seats act at once, inside :meth:`~DouDizhuEnv.step`
(and inside :meth:`~DouDizhuEnv.reset` before its first decision), so every
observation is one where the learning seat is to act, or the last one of
the hand.

**One game, no batch.** ``DouDizhuEnv`` steps its hand on the single-game
path (:mod:`doudizhu_env.game`): the batched engine's deals (the same seed
gives the same cards), legal actions, observations and points, without its
per-call overhead. ``env.game`` is the :class:`~doudizhu_env.game.Game`;
``env.state`` is the one-game :class:`~doudizhu_env.engine.State` it stands
at (built when asked for).

**Opponents.** ``opponents`` is a list of two :class:`agents.base.Agent`-like
objects (anything with ``act(view) -> actions``): ``opponents[0]`` plays the
seat after the learner, ``opponents[1]`` the seat before it. They are asked
as everywhere else (:mod:`doudizhu_env.driver`, the arena's driver too):
each is called with the *seat view* (:func:`doudizhu_env.observation.seat_view`)
of the games where its seat is to act (a one-game state in ``DouDizhuEnv``),
so it cannot see hidden cards, and its actions are checked (an illegal one
raises, and in ``DouDizhuEnv`` the learner's action before it is undone too),
unless it declares otherwise (``needs_view``, ``legal_by_construction``,
``act_game``). The default is two uniform random players
(:class:`~doudizhu_env.engine.RandomPolicy`, which declares all three: in
``DouDizhuEnv`` they draw from the game's legal actions directly, the very
draws they would make from its state), built by the env and seeded from the
reset seed; opponents you pass keep their own randomness.

**Actions** ``Discrete(A)``: the ids of :func:`doudizhu_env.action_table` for the
rules in use (13,557 for ``standard``); bids, doubling and pass are ids 0..6.

**Illegal actions.** By default (``illegal_action="penalty"``) an action
outside the mask ends the hand at once: ``terminated`` is true, the reward
is ``illegal_reward`` (default -1.0), ``info["illegal_action"] = True``, the
mask of the last observation is all zeros, and nothing is played. This is
the default because generic tools sample ``action_space.sample()`` without
the mask: with it ``gym.make("DouDizhu-v0")`` passes
``gymnasium.utils.env_checker.check_env`` and Stable-Baselines3's
``stable_baselines3.common.env_checker.check_env`` as constructed. A
learner that follows the mask never sees the penalty. With
``illegal_action="raise"`` an action outside the mask raises
:class:`~doudizhu_env.engine.IllegalActionError` instead and changes nothing
(the PettingZoo env :mod:`doudizhu_env.aec` and :class:`DouDizhuVectorEnv`
always default to raising). Ids outside ``0..A-1`` and non-integers raise
in both modes.

**Observations** a dict: ``"observation"`` float32 ``(OBS_SIZE,)`` of 0/1 entries, the pieces of
:data:`doudizhu_env.observation.PIECES` for the learning seat (never anything it
cannot see), and ``"action_mask"`` int8 ``(A,)``, ones at its legal actions
(all zeros once the hand is over). ``info["action_mask"]`` is the same mask.
``info`` also has the numbers-only entries of every env (:mod:`doudizhu_env.infos`):
``"seat"``, ``"role"`` (-1 while bidding, then 0 landlord, 1 landlord_down, 2 landlord_up) and
``"phase"`` (0 bidding, 1 doubling, 2 play, 3 over), ints (:func:`doudizhu_env.info_names` gives
the names), and ``"scores"`` (the points of the three seats) at the end of a hand.

**Rewards** at the end of the hand, for the learning seat, per ``reward=``:
``"score"`` (default: the points of ``docs/rules.md``, 2:1:1 x base x
multiplier), ``"win"`` (+1 / -1), ``"log_score"`` (sign x log2(1 + |points|)).
A hand cut after too many redeals is *truncated* with reward 0.

**Arguments** ``seat``, ``opponents``, ``rules`` (a :class:`~doudizhu_env.Rules`
or preset name), ``reward``, ``render_mode`` (``"ansi"`` or ``"human"``: the table
as the learning seat sees it), ``illegal_action``, ``illegal_reward``. A bad
value raises ``ValueError`` naming the argument; the checks and the spaces
are those of the PettingZoo env too (:mod:`doudizhu_env.spaces`).

**Scripted deals** ``reset(seed=..., options={"deal": {"hands": [h0, h1, h2],
"hole": "...", "first_bidder": 0}})`` (a :class:`~doudizhu_env.engine.Deal` or its dict).

**RL libraries.** sb3-contrib's ``MaskablePPO`` trains on it as constructed
(extra ``rl``): the env's :meth:`~DouDizhuEnv.action_masks` gives the masks
and ``"MultiInputPolicy"`` reads the dict observation::

    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MultiInputPolicy", gym.make("DouDizhu-v0", reward="log_score"))
    model.learn(total_timesteps=100_000)
    model.save("ppo_doudizhu.zip")  # then in the arena: the agent spec "sb3:ppo_doudizhu.zip"

:class:`agents.sb3_adapter.SB3Agent` plays such a model in the arena from
seat views. The PettingZoo env trains the way PettingZoo's SB3
action-masking tutorial trains its classic envs: a wrapper around the AEC
env makes it one single-agent Gymnasium env with ``action_masks()``, one
policy in every seat. Both are in the tests (``tests/test_rl_clients.py``)
and in the README.

**Vector environment.** :class:`DouDizhuVectorEnv` (``gym.make_vec("DouDizhu-v0",
num_envs=B)``) runs B hands on the batched engine, one learning seat per game
(``seat``: one seat for all games, or a sequence of B seats) against
opponents, random by default (vectorized, and called once per decision round
with all the games where their seat is to act: nothing loops over games in
Python). Observations are ``{"observation": (B, OBS_SIZE) float32, "action_mask":
(B, A) int8}`` (the mask in compact form instead with ``mask=``: below),
rewards ``(B,)`` float32. ``info`` holds ``"seat"``, ``"role"`` and ``"phase"`` as int64 arrays
``(B,)``, the codes of :mod:`doudizhu_env.infos`, for each game's learning seat. It resets
finished hands in the same step (``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``): the
step that ends a hand returns ``terminated`` (or ``truncated``), its reward,
and already the first observation of the next hand; the last observation of
the ended hand is in ``info["final_obs"]`` (an object array, entries ``None``
for games that go on; mask ``info["_final_obs"]``) and the seats' points in
``info["final_info"]["scores"]``. For self-play (every seat learning), use the
PettingZoo environment :mod:`doudizhu_env.aec` or the engine directly.

**Compact masks** (vector env only). At large B the dense ``(B, A)`` mask is
most of the cost of a step (13,557 bytes per game, rebuilt every step), so
``mask=`` (``gym.make_vec("DouDizhu-v0", num_envs=B, mask="ids")``) chooses the
form of the legal actions. The compact forms are in ``info`` (under the same
keys after :meth:`~DouDizhuVectorEnv.reset` and every
:meth:`~DouDizhuVectorEnv.step`), and the observation is then
``{"observation": (B, OBS_SIZE)}`` only, as ``observation_space`` says (the
final observations in ``info["final_obs"]`` too):

- ``"dense"`` (default): ``obs["action_mask"]`` and ``info["action_mask"]``,
  ``(B, A)`` int8, as above.
- ``"ids"``: ``info["legal_ids"]`` int64 ``(N,)`` and ``info["legal_offsets"]``
  int64 ``(B + 1,)``: the legal ids of game ``i`` are
  ``legal_ids[legal_offsets[i]:legal_offsets[i + 1]]``, ascending (the form of
  :func:`doudizhu_env.legal.bits_to_ids`). These two are batch-level entries,
  not one per game (their length is not B), so Gymnasium's ``DictInfoToList``
  cannot split them; use ``"bits"`` with it.
- ``"bits"``: ``info["legal_bits"]`` uint8 ``(B, ceil(A / 8))``, bit ``a % 8``
  (least significant first) of byte ``a // 8`` set when action ``a`` is legal:
  ``np.packbits(mask, axis=1, bitorder="little")``, so
  ``np.unpackbits(legal_bits, axis=1, count=A, bitorder="little")`` is the dense mask.
  Its bytes are the engine's uint64 words (:func:`doudizhu_env.engine.legal_bits`)
  as little-endian bytes.

One uniformly random legal action per game from the ids, vectorized::

    ids, offsets = info["legal_ids"], info["legal_offsets"]
    counts = np.diff(offsets)
    actions = ids[offsets[:-1] + (rng.random(B) * counts).astype(np.int64)]
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import engine, register_envs
from .checks import check_seat, is_int
from .driver import drive, drive_game, needs_check
from .engine import Deal, IllegalActionError, RandomPolicy
from .game import Game
from .infos import batch_info, seat_info
from .legal import bits_to_ids
from .observation import OBS_SIZE, observe
from .render import emit, render_text
from .rewards import REWARDS, shape_reward
from .rules import resolve_rules
from .spaces import (  # noqa: F401  (ILLEGAL_ACTIONS, observation_box: re-exported)
    ILLEGAL_ACTIONS,
    RENDER_MODES,
    action_space,
    check_choice,
    check_common,
    observation_box,
    observation_space,
)

MASKS = ("dense", "ids", "bits")  # the forms of the vector env's legal actions (its ``mask=``)


# ----------------------------------------------------------------------------
# The shared driver: B games, one learning seat each, opponents in the other seats
# ----------------------------------------------------------------------------


def _checked_opponents(opponents) -> list:
    """``opponents`` as a list of two objects with an ``act(view)`` method, or ``ValueError``."""
    opponents = list(opponents)
    if len(opponents) != 2 or not all(callable(getattr(o, "act", None)) for o in opponents):
        raise ValueError("opponents must be two objects with an act(view) method (the seat after "
                         "the learning seat, then the seat before it)")
    return opponents


def _seeded_random(rng: np.random.Generator) -> RandomPolicy:
    """A default opponent: a random player with a generator seeded from the env's ``rng``."""
    return RandomPolicy(np.random.default_rng(rng.integers(0, 2**63 - 1)))


class _Driver:
    """Advances B games until each one's learning seat is to act, recording the hands that end."""

    def __init__(self, seats: np.ndarray, opponents):
        self.seats = seats
        self.opponents = _checked_opponents(opponents)
        # one call per distinct opponent: the seat after each learning seat, then the seat before it
        self.players = [self.opponents[0]] + ([] if self.opponents[1] is self.opponents[0]
                                              else [self.opponents[1]])
        rows = np.arange(len(seats))
        self.seat_player = np.full((len(seats), 3), -1, dtype=np.int64)
        self.seat_player[rows, (seats + 1) % 3] = 0
        self.seat_player[rows, (seats + 2) % 3] = len(self.players) - 1

    def advance(self, state: engine.State, out: dict | None, autoreset: bool) -> engine.State:
        """Let the opponents act until the learning seat is to act in every game (or its hand is over).

        The first end of each game's hand is recorded in ``out`` (``ended``,
        ``truncated``, ``points`` (B, 3), ``final`` observations), if given.
        With ``autoreset`` the hands that end are dealt anew (and played on
        to the learning seat's turn); without it they stay over. No state is
        modified: the result is a new one.
        """
        rows = np.arange(state.num_games)
        if state.done.any():
            state = self._end(state, rows, out, autoreset)
        while True:  # the driver steps the opponents' games; a hand that ends is recorded first
            for turn in drive(state, self.seat_player, self.players):
                state = turn.after
                if (turn.live & state.done).any():
                    state = self._end(state, rows, out, autoreset)
                    break
            else:
                return state

    def _end(self, sub: engine.State, rows: np.ndarray, out: dict | None, autoreset: bool) -> engine.State:
        """Record the hands of ``sub`` (rows ``rows`` of the batch) that are over; deal them anew if asked."""
        done = np.flatnonzero(sub.done)
        if out is not None:
            first = done[~out["ended"][rows[done]]]  # a game's first end in this step only
            if len(first):
                g = rows[first]
                out["ended"][g] = True
                out["truncated"][g] = sub.truncated[first]
                out["points"][g] = sub.scores[first]
                out["final"][g] = observe(engine.take(sub, first), self.seats[g])
        return engine.reset_done(sub) if autoreset else sub


def _new_out(n: int) -> dict:
    return {"ended": np.zeros(n, bool), "truncated": np.zeros(n, bool), "points": np.zeros((n, 3), np.int32),
            "final": np.zeros((n, OBS_SIZE), np.float32)}


# ----------------------------------------------------------------------------
# The single-game environment
# ----------------------------------------------------------------------------


class DouDizhuEnv(gymnasium.Env):
    """One learning seat against two opponents, on the single-game path; see the module docstring."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(self, seat: int = 0, opponents: Sequence | None = None, rules=None, reward: str = "score",
                 render_mode: str | None = None, illegal_action: str = "penalty",
                 illegal_reward: float = -1.0):
        check_seat("seat", seat)
        illegal_reward = check_common(reward, render_mode, illegal_action, illegal_reward)
        self.seat = int(seat)
        self.rules = resolve_rules(rules)
        self.reward_kind, self.render_mode = reward, render_mode
        self.illegal_action, self.illegal_reward = illegal_action, illegal_reward
        self._default_opponents = opponents is None
        self._driver = _GameOpponents(self.seat, [RandomPolicy(), RandomPolicy()] if opponents is None
                                         else opponents)
        self.action_space = action_space(self.rules)
        self.observation_space = observation_space(self.rules)
        self.game: Game | None = None
        self._hand_over = True

    @property
    def opponents(self) -> list:
        return self._driver.opponents

    @property
    def state(self) -> engine.State | None:
        """The game as a one-game engine :class:`~doudizhu_env.engine.State` (None before reset)."""
        return None if self.game is None else self.game.to_state()

    def action_masks(self) -> np.ndarray:
        """``(A,)`` bool: the legal actions now (the observation's mask), for sb3-contrib's MaskablePPO."""
        if self.game is None or self._hand_over:
            return np.zeros(int(self.action_space.n), bool)  # type: ignore[attr-defined]  # a Discrete space
        return self.game.legal_mask().view(bool)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if self._default_opponents and (seed is not None or self.game is None):
            # the env's own random players, seeded from the env's seed (a user's opponents are left alone)
            self._driver = _GameOpponents(self.seat, [_seeded_random(self.np_random) for _ in range(2)])
        deal = Deal.coerce(options["deal"]) if options and "deal" in options else None
        game = Game.new(self.np_random, self.rules, deal=deal)
        self._driver.advance(game)
        while game.done:  # over before the learning seat's first decision: the next hand is dealt
            game.next_hand()
            self._driver.advance(game)
        self.game, self._hand_over = game, False
        if self.render_mode == "human":
            self.render()
        return self._obs_info()

    def step(self, action):
        if self.game is None or self._hand_over:
            raise RuntimeError("the hand is over: call reset() before step()")
        # an int id in range, nothing else (raises in both modes); the game's bitset answers "legal?"
        n = self.action_space.n
        a = action if type(action) is int and 0 <= action < n else engine.action_id(action, n)
        known_legal = self.game.is_legal(a)
        if self.illegal_action == "penalty" and not known_legal:
            self._hand_over = True
            obs, info = self._obs_info()
            info["illegal_action"] = True
            return obs, self.illegal_reward, True, False, info
        game = self.game
        # the engine's own check names an illegal action; it raises, leaving everything as it was
        before = game.to_state() if self._driver.check or not known_legal else None
        game.step(a, check=not known_legal)
        try:
            self._driver.advance(game)
        except IllegalActionError:  # an opponent's: nothing was played
            self.game = Game(before)
            raise
        reward, terminated, truncated = 0.0, False, False
        if game.done:
            self._hand_over = True
            truncated = game.truncated
            terminated = not truncated
            reward = float(shape_reward(game.scores[self.seat], self.reward_kind))
        obs, info = self._obs_info()
        if self._hand_over:
            info["scores"] = np.array(game.scores, np.int32)
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, truncated, info

    def _obs_info(self):
        """Observation and info of the learning seat."""
        game = self.game
        mask = np.zeros(self.action_space.n, np.int8) if self._hand_over else game.legal_mask()
        info = {"action_mask": mask.copy(), **seat_info(self.seat, game.landlord, game.phase)}
        # fresh arrays: a caller writing into the observation changes nothing here
        return {"observation": game.observe(self.seat), "action_mask": mask}, info

    def render(self):
        if self.render_mode is None or self.game is None:
            return None
        return emit(render_text(self.state, self.seat), self.render_mode)

    def close(self):
        pass


class _GameOpponents:
    """The two opponents of a learning seat in one :class:`~doudizhu_env.game.Game`.

    Each is asked as :mod:`doudizhu_env.driver` says: on the game itself when it offers
    ``act_game`` (the default random players do: the very draws they would make from the
    one-game state), else on the one-game state, as on the batched engine.
    """

    def __init__(self, seat: int, opponents):
        self.seat = seat
        self.opponents = _checked_opponents(opponents)
        self.check = needs_check(self.opponents)
        # 0: the seat after the learning seat, 1: the seat before; -1: the learning seat
        self.seat_player = [-1, -1, -1]
        self.seat_player[(seat + 1) % 3], self.seat_player[(seat + 2) % 3] = 0, 1

    def advance(self, game: Game) -> None:
        """The opponents act until the learning seat is to act or the hand is over."""
        drive_game(game, self.seat_player, self.opponents)


# ----------------------------------------------------------------------------
# The vector environment
# ----------------------------------------------------------------------------


class DouDizhuVectorEnv(VectorEnv):
    """B games on the batched engine, one learning seat each; see the module docstring."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int = 1, seat: int | Sequence[int] = 0, opponents: Sequence | None = None,
                 rules=None, reward: str = "score", render_mode: str | None = None, mask: str = "dense"):
        if not is_int(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        check_choice("reward", reward, REWARDS)
        check_choice("mask", mask, MASKS)
        self.mask = mask
        if render_mode is not None:
            raise ValueError("the vector environment does not render; use DouDizhuEnv or the PettingZoo env")
        given = np.asarray(seat)
        if (not np.issubdtype(given.dtype, np.integer) or given.shape not in ((), (num_envs,))
                or np.any((given < 0) | (given > 2))):
            raise ValueError(f"seat must be an int 0..2 or a sequence of {num_envs} of them, got {seat!r}")
        seats = np.broadcast_to(given.astype(np.int64), (num_envs,)).copy()
        self.num_envs = int(num_envs)
        self.seats = seats
        self.rules = resolve_rules(rules)
        self.reward_kind, self.render_mode = reward, None
        self._default_opponents = opponents is None
        if opponents is None:
            policy = RandomPolicy()
            opponents = [policy, policy]
        self._driver = _Driver(seats, opponents)
        self.single_action_space = action_space(self.rules)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, self.single_action_space.n))
        if mask == "dense":
            self.single_observation_space = observation_space(self.rules)
        else:  # the legal actions are in info, in compact form: the observation has no mask
            self.single_observation_space = spaces.Dict({"observation": observation_box()})
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.state: engine.State | None = None

    @property
    def opponents(self) -> list:
        return self._driver.opponents

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal B new hands (``options={"deals": [...]}``: one scripted deal per game)."""
        if seed is not None or self._np_random is None:
            if seed is not None and not isinstance(seed, (int, np.integer)):
                raise TypeError(f"seed must be an int or None, got {seed!r}")
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)
            if self._default_opponents:  # the env's own random player, one for both seats, seeded anew
                policy = _seeded_random(self._np_random)
                self._driver = _Driver(self.seats, [policy, policy])
        deals = options.get("deals") if options else None
        state = engine.reset(self._np_random, self.num_envs, self.rules, deals=deals)
        self.state = self._driver.advance(state, None, autoreset=True)
        return self._obs_info()

    def step(self, actions):
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise IllegalActionError(f"actions must be {self.num_envs} integer ids, got {actions.dtype} "
                                     f"{actions.shape}")
        state = engine.step(self.state, actions.astype(np.int64))  # raises if one is illegal; nothing changed
        out = _new_out(self.num_envs)
        self.state = self._driver.advance(state, out, autoreset=True)
        points = out["points"][np.arange(self.num_envs), self.seats]
        rewards = shape_reward(points, self.reward_kind).astype(np.float32)
        truncated = out["truncated"]
        terminated = out["ended"] & ~truncated
        obs, info = self._obs_info()
        ended = np.flatnonzero(out["ended"])
        if len(ended):
            final = np.full(self.num_envs, None, dtype=object)
            empty = np.zeros(self.single_action_space.n, np.int8)
            for j in ended:  # only the few games that ended: their last observations, one object each
                final[j] = {"observation": out["final"][j]}
                if self.mask == "dense":
                    final[j]["action_mask"] = empty.copy()
            info["final_obs"], info["_final_obs"] = final, out["ended"].copy()
            info["final_info"] = {"scores": out["points"], "_scores": out["ended"].copy()}
            info["_final_info"] = out["ended"]
        return obs, rewards, terminated, truncated, info

    def _obs_info(self) -> tuple[dict, dict]:
        """The observations; the infos: the legal actions in the form of ``mask``, seat, role, phase."""
        s = self.state
        assert s is not None, "the observations of a vector env that was never reset"
        obs = {"observation": observe(s, self.seats)}
        info = batch_info(self.seats, s.landlord, s.phase)
        if self.mask == "dense":
            mask = engine.legal_action_mask(s).view(np.int8)  # bool -> int8 without a copy
            obs["action_mask"] = mask
            return obs, {"action_mask": mask, **info}
        bits = engine.legal_bits(s)  # (B, W) uint64, bit a % 64 of word a // 64: the engine's own form
        if self.mask == "ids":
            ids, offsets = bits_to_ids(bits)
            return obs, {"legal_ids": ids, "legal_offsets": offsets, **info}
        # the words' bytes, little-endian, are np.packbits(mask, axis=1, bitorder="little") padded to W * 8
        as_bytes = bits.astype("<u8", copy=False).view(np.uint8)
        return obs, {"legal_bits": np.ascontiguousarray(as_bytes[:, : -(-int(s.num_actions) // 8)]), **info}

    def close_extras(self, **kwargs):
        pass


register_envs()  # importing the env module registers its id (gymnasium is imported by now)
