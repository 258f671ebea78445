"""SearchAgent: perfect-information Monte Carlo search over sampled worlds, on the batched engine.

At each card-play decision the agent plans with the engine, for every game of
its batch at once::

    view --sample--> S worlds (hidden hands consistent with the view)
         --infer---> keep the W worlds whose replayed history the rollout
                     policy reproduces best (the other seats' actual moves)
         --expand--> W worlds x C candidate moves
         --rollout-> every (world, candidate) game played to its end by the
                     rollout policy, one batched engine step (and one batched
                     policy call per agent) for all of them at once
         --choose--> the candidate with the best mean result for the seat
                     (ties: the base agent's own choice)

**Worlds.** The seat sees its own hand, every card played, each seat's cards
left and, once a landlord exists, the hole cards. A world gives the two hidden
seats hands that agree with all of it: the hole cards the landlord has not
played yet (per rank, ``max(0, hole - played by the landlord)``) are in the
landlord's hand; the other unseen cards are shuffled (as cards, so every
split is as likely as under a uniform deal) and dealt to the hidden seats by
their cards left (:func:`sample_worlds`).

**Inference** (``inference="moves"``). Uniform worlds ignore what the other
seats did. Each sampled world is replayed from the start of the play phase
(its opening hands are the world's hands plus the cards each seat played),
and at each of the other seats' past decisions (the last ``inference_moves``
of them, or all) the rollout policy of that seat is asked what it would have
played there; the worlds with the fewest disagreements are kept (ties in
sampling order, so uniformly). Against a player the rollout policy models
well this removes most impossible worlds, the inference that made DeltaDou
strong (Jiang et al., IJCAI 2019).
``inference="all"`` replays each world from its deal instead and checks the
other seats' bids and doublings too. ``inference="none"`` keeps the first W
samples (uniform worlds).

**Candidates.** All legal moves when there are at most ``candidates``;
otherwise the base agent's choice, ``pass`` where legal, and the best of the
rest by the base agent's own scores (Q-values for a DMC agent, else fewest
plays left in the hand, :func:`agents.rule.hand_cost`).

A move that empties the hand is always taken (a certain win), without search.

**Rollouts** play every seat, the searching seat's later moves included, with
the rollout policy of its role (the base agent unless ``rollout`` names
others). Bidding and doubling are the base agent's decisions (not searched).

**No peeking.** :meth:`SearchAgent.act` first blanks what the acting seat
cannot see (:func:`doudizhu_env.observation.seat_view`), so its decision is a
function of the seat's view and its own generator alone; the tests give it
full states and states with the hidden hands swapped and check it decides the
same. Deterministic for a seed, unless ``time_limit`` is set (then the number
of worlds rolled out depends on the clock).

**Threads.** An agent draws its worlds from its own generator: give each thread
(each game) its own agent. What agents share, RuleAgent's caches and a DMC
model, is safe to share; ``tests/test_shared_agents.py`` plays seeded hands in
threads and finds one thread's moves.

Agent specs (:func:`agents.registry.make_agent`): ``search:BASE`` with
options after commas, e.g. ``search:rule``, ``search:pretrained,rollout=rule``,
``search:rule,worlds=32,candidates=12,samples=128,inference=none,time=0.5``
(``docs/search.md``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from doudizhu_env import engine
from doudizhu_env.actions import BID0, NO_DOUBLE, PASS, action_table
from doudizhu_env.cards import DECK_COUNTS, NUM_RANKS
from doudizhu_env.driver import play_out, seat_actions
from doudizhu_env.engine import PLAY, role_of
from doudizhu_env.observation import cards_left, seat_view
from doudizhu_env.rewards import OBJECTIVES, shape_reward

from .base import Agent

INFERENCE_MODES = ("moves", "all", "none")
#: Most games the agent steps in one batch (rollouts of the decisions searched together, plus their
#: sampled worlds): decisions beyond it are searched in turn, so memory stays bounded (~100 MB).
MAX_BATCH = 65_536
#: Worlds of the first round under a time limit; later rounds are sized by the time left.
FIRST_ROUND = 2


class SearchConfigError(ValueError):
    """A search budget or option that is not valid."""


@dataclass(frozen=True)
class SearchConfig:
    """The budget and options of a :class:`SearchAgent` (the ``search:`` spec's ``key=value`` options)."""

    worlds: int = 16
    """Worlds rolled out per decision (``worlds``)."""
    candidates: int = 8
    """Moves compared per decision, at most (``candidates``); every legal move when there are fewer."""
    samples: int = 64
    """Worlds sampled before inference keeps the ``worlds`` most consistent ones (``samples``, >= worlds)."""
    inference: str = "moves"
    """``moves``: keep the worlds whose play the rollout policy reproduces best; ``all``: their bids and
    doublings too; ``none``: uniform worlds."""
    inference_moves: int = 0
    """How many of the other seats' latest play decisions inference checks (0: all of them)."""
    objective: str = "adp"
    """``adp``: best mean points for the seat; ``wp``: best share of rollouts won."""
    time_limit: float = 0.0
    """Seconds per decision (0: none). Worlds are rolled out in rounds, each sized by the time left at
    the pace of the round before, until the time is spent (at least one world is rolled out)."""

    def __post_init__(self):
        for name in ("worlds", "candidates", "samples"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4096:
                raise SearchConfigError(f"search option {name} must be an integer in 1..4096, got {value!r}")
        if isinstance(self.inference_moves, bool) or not isinstance(self.inference_moves, int) \
                or self.inference_moves < 0:
            raise SearchConfigError(f"search option inference_moves must be an integer >= 0, "
                                    f"got {self.inference_moves!r}")
        if self.worlds * self.candidates > MAX_BATCH:
            raise SearchConfigError(f"worlds x candidates is {self.worlds * self.candidates:,} rollouts a "
                                    f"decision; at most {MAX_BATCH:,} are allowed")
        if self.samples < self.worlds:
            raise SearchConfigError(f"search option samples ({self.samples}) must be at least worlds "
                                    f"({self.worlds}): inference keeps worlds out of samples")
        if self.inference not in INFERENCE_MODES:
            raise SearchConfigError(f"search option inference must be one of {list(INFERENCE_MODES)}, "
                                    f"got {self.inference!r}")
        if self.objective not in tuple(OBJECTIVES):  # a tuple: an unhashable value is refused, no TypeError
            raise SearchConfigError(f"search option objective must be one of {list(OBJECTIVES)}, "
                                    f"got {self.objective!r}")
        limit = self.time_limit
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 <= limit < 3600:
            raise SearchConfigError(f"search option time must be a number of seconds in [0, 3600), "
                                    f"got {limit!r}")


# ----------------------------------------------------------------------------
# worlds
# ----------------------------------------------------------------------------


def hidden_cards(view: engine.State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the acting seat of each game of ``view`` does not see, from public facts and its own hand.

    Returns ``(pool, forced, need)``: ``pool`` ``(N, 15)`` the unseen cards to deal out,
    ``forced`` ``(N, 3, 15)`` cards known to be in a seat's hand (the landlord's unplayed
    hole cards, for a seat that is not the landlord), ``need`` ``(N, 3)`` how many pool
    cards each seat holds (0 for the acting seat).
    """
    n = view.num_games
    rows, seat = np.arange(n), view.to_act.astype(np.int64)
    own = view.hands[rows, seat].astype(np.int64)
    played = view.played.astype(np.int64)
    landlord = view.landlord.astype(np.int64)
    if n and landlord.min() < 0:  # before a landlord exists the hole cards are hidden too
        raise ValueError("worlds are sampled in the play phase (a landlord exists); got a game in bidding")
    forced = np.zeros((n, 3, NUM_RANKS), np.int64)
    other = np.flatnonzero((landlord >= 0) & (landlord != seat))
    unplayed_hole = view.hole[other].astype(np.int64) - played[other, landlord[other]]
    forced[other, landlord[other]] = np.maximum(unplayed_hole, 0)
    pool = DECK_COUNTS.astype(np.int64) - own - played.sum(axis=1) - forced.sum(axis=1)
    need = cards_left(view) - forced.sum(axis=2)
    need[rows, seat] = 0
    return pool, forced, need


def sample_worlds(view: engine.State, num: int, rng: np.random.Generator) -> np.ndarray:
    """``(N, num, 3, 15)`` hands of every seat in ``num`` worlds per game of ``view`` (play phase).

    The acting seat's hand is its own; the two hidden seats get the forced cards of
    :func:`hidden_cards` and a uniformly shuffled share of the pool, by their cards left.
    """
    pool, forced, need = hidden_cards(view)
    n = view.num_games
    size = pool.sum(axis=1)
    width = int(size.max()) if n else 0
    cards = np.full((n, max(width, 1)), NUM_RANKS, np.int64)  # padding: an extra "rank" dropped below
    flat = np.repeat(np.tile(np.arange(NUM_RANKS), n), pool.ravel())
    game = np.repeat(np.arange(n), size)
    cards[game, np.arange(len(flat)) - np.repeat(np.cumsum(size) - size, size)] = flat
    keys = rng.random((n, num, cards.shape[1]))
    keys[np.broadcast_to(cards[:, None, :] == NUM_RANKS, keys.shape)] = 2.0
    shuffled = np.argsort(keys, axis=2)
    dealt = np.take_along_axis(np.broadcast_to(cards[:, None, :], keys.shape), shuffled, axis=2)
    seat = view.to_act.astype(np.int64)
    first, second = (seat + 1) % 3, (seat + 2) % 3
    slot = np.arange(cards.shape[1])[None, None, :]
    to_first = slot < need[np.arange(n), first][:, None, None]
    hands = np.zeros((n, num, 3, NUM_RANKS + 1), np.int64)
    rows = np.arange(n)[:, None, None]
    np.add.at(hands, (np.broadcast_to(rows, dealt.shape), np.arange(num)[None, :, None],
                      np.where(to_first, first[:, None, None], second[:, None, None]), dealt), 1)
    hands = hands[..., :NUM_RANKS] + forced[:, None]
    hands[np.arange(n), :, seat] = view.hands[np.arange(n), seat][:, None, :]
    return hands.astype(np.int8)


def with_hands(view: engine.State, rows: np.ndarray, hands: np.ndarray) -> engine.State:
    """Games ``rows`` of ``view`` (repeats allowed) with every seat's hand set to ``hands`` ``(M, 3, 15)``."""
    return dataclasses.replace(engine.take(view, rows), hands=np.asarray(hands, np.int8))


# ----------------------------------------------------------------------------
# inference: replay each world's history under the rollout policy
# ----------------------------------------------------------------------------


def opening_states(worlds: engine.State) -> tuple[engine.State, np.ndarray]:
    """Each world at the start of its play phase, and the index in ``history`` of its first play move."""
    special = (worlds.history >= BID0) & (worlds.history <= NO_DOUBLE)
    valid = np.arange(worlds.history.shape[1])[None, :] < worlds.history_len[:, None]
    first = (special & valid).sum(axis=1).astype(np.int16)
    keep = np.arange(worlds.history.shape[1])[None, :] < first[:, None]
    n = worlds.num_games
    opening = dataclasses.replace(
        worlds,
        hands=(worlds.hands + worlds.played).astype(np.int8), played=np.zeros_like(worlds.played),
        num_plays=np.zeros_like(worlds.num_plays), phase=np.full(n, PLAY, np.int8),
        to_act=worlds.landlord.copy(), to_beat=np.full(n, -1, np.int32),
        to_beat_seat=np.full(n, -1, np.int8), passes=np.zeros(n, np.int8), bombs=np.zeros(n, np.int8),
        rocket=np.zeros(n, bool), spring=np.zeros(n, np.int8),
        history=np.where(keep, worlds.history, -1).astype(np.int16),
        history_seat=np.where(keep, worlds.history_seat, -1).astype(np.int8), history_len=first,
    )
    return opening, first.astype(np.int64)


def dealt_states(worlds: engine.State) -> engine.State:
    """Each world as it was dealt (before the first bid; with a fixed landlord, before doubling)."""
    return engine.reset(0, worlds.num_games, worlds.rules, deals=engine.deals_of(worlds))


def _checked_moves(worlds: engine.State, first: np.ndarray, seat: np.ndarray, last: int) -> np.ndarray:
    """``(M, H)`` bool: history entries inference checks (other seats' play moves; the latest ``last``)."""
    h = np.arange(worlds.history.shape[1])[None, :]
    other = (h >= first[:, None]) & (h < worlds.history_len[:, None]) & (worlds.history_seat != seat[:, None])
    if last:
        from_end = np.cumsum(other[:, ::-1], axis=1)[:, ::-1]  # 1 for the latest checked move
        other &= from_end <= last
    return other


def replay_mismatches(worlds: engine.State, seat: np.ndarray, policies: Sequence[Agent],
                      last: int = 0, start: str = "play") -> np.ndarray:
    """``(M,)`` how many of the other seats' past moves the rollout policies would not have made.

    ``worlds`` are full states (every hand set), ``seat`` the searching seat of each,
    ``policies`` the agent of each (final) role. Every world is replayed with the engine from
    the start of its play phase (``start="play"``: play moves are checked) or from its deal
    (``"deal"``: bids and doublings too); the replay of a world is exactly its history, so
    it ends in the world itself.
    """
    if start == "deal":
        state, first = dealt_states(worlds), np.zeros(worlds.num_games, np.int64)
    else:
        state, first = opening_states(worlds)
    checked = _checked_moves(worlds, first, seat, last)
    moves = worlds.history_len.astype(np.int64) - first
    order = np.argsort(-moves, kind="stable")  # longest first: the live games are always a prefix
    state = engine.take(state, order)
    moves, first, checked = moves[order], first[order], checked[order]
    history, landlord = worlds.history[order].astype(np.int64), worlds.landlord[order]
    wrong = np.zeros(len(order), np.int64)
    for t in range(int(moves.max()) if len(moves) else 0):
        live = int((moves > t).sum())
        if live < state.num_games:
            state = engine.take(state, np.arange(live))
        rows = np.arange(live)
        actual = history[rows, first[:live] + t]
        ask = np.flatnonzero(checked[rows, first[:live] + t])
        if len(ask):
            wrong[ask] += _policy_actions(state, ask, policies, landlord[ask]) != actual[ask]
        # the recorded moves of a world's own history: legal by construction; unchecked, since the
        # check more than doubles a step of a large batch (B=4096: 2.4 ms with it, 1.0 ms without)
        state = engine.step(state, actual, check=False)
    out = np.empty_like(wrong)
    out[order] = wrong
    return out


def _policy_actions(state: engine.State, games: np.ndarray, policies: Sequence[Agent],
                    landlord: np.ndarray) -> np.ndarray:
    """What the acting seat of games ``games`` would play under the policy of its role (given the
    games' ``landlord``: during bidding, the seat the bidding made landlord)."""
    agents, role_agent = _distinct(policies)
    seat_player = role_agent[role_of(np.arange(3)[None, :], landlord[:, None])]
    return seat_actions(engine.take(state, games), seat_player, agents)


def _distinct(policies: Sequence[Agent]) -> tuple[list[Agent], np.ndarray]:
    """The distinct agents of ``policies`` (one per role; one object may play several roles) and,
    per role, the index of its agent among them: who plays each role, for the driver."""
    agents: list[Agent] = []
    for a in policies:
        if not any(a is b for b in agents):
            agents.append(a)
    return agents, np.array([next(j for j, a in enumerate(agents) if a is p) for p in policies])


# ----------------------------------------------------------------------------
# candidates and rollouts
# ----------------------------------------------------------------------------


def base_scores(base: Agent, view: engine.State, ids: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """A score per flat legal action (higher: the base agent likes it more), for ranking candidates.

    The base agent's ``action_values`` where it has one (Q-values of a DMC agent); else
    minus the plays left in the hand after the move (:func:`agents.rule.hand_cost`).
    """
    if hasattr(base, "action_values"):
        return np.asarray(base.action_values(view, ids, offsets), np.float64)
    from .rule import hand_codes, hand_costs

    seg = np.repeat(np.arange(view.num_games), np.diff(offsets))
    own = view.hands[seg, view.to_act[seg]].astype(np.int64)
    return -hand_costs(hand_codes(own - action_table(view.rules).counts[ids])).astype(np.float64)


def choose_candidates(view: engine.State, chosen: np.ndarray, scores: np.ndarray, ids: np.ndarray,
                      offsets: np.ndarray, k: int) -> list[np.ndarray]:
    """Per game: the base agent's ``chosen`` move first, then ``pass`` (if legal), then the best scored."""
    out = []
    for i in range(view.num_games):
        legal, score = ids[offsets[i] : offsets[i + 1]], scores[offsets[i] : offsets[i + 1]]
        rank = np.where(legal == chosen[i], -2, np.where(legal == PASS, -1, 0))
        order = np.lexsort((-score, rank))
        out.append(legal[order[:k]])
    return out


def rollout_values(view: engine.State, hands: np.ndarray, cands: list[np.ndarray],
                   policies: Sequence[Agent], objective: str = "adp") -> list[np.ndarray]:
    """Mean result for the acting seat of every candidate of every game over its worlds ``hands``.

    ``hands`` is ``(N, W, 3, 15)``; every (world, candidate) pair of every game is one game of
    a single batch, stepped to its end with the rollout policies of each role.
    """
    n, w = hands.shape[:2]
    sizes = np.array([len(c) for c in cands])
    game = np.repeat(np.arange(n), sizes * w)
    world = np.concatenate([np.repeat(np.arange(w), s) for s in sizes])
    first = np.concatenate([np.tile(c, w) for c in cands])
    # candidates are legal actions of the view, and every world keeps the searching seat's hand, so
    # they are legal there too; unchecked as in the replay (the check doubles a large batch's step)
    state = engine.step(with_hands(view, game, hands[game, world]), first, check=False)
    agents, role_agent = _distinct(policies)
    state, _ = play_out(state, role_agent[role_of(np.arange(3)[None, :], state.landlord[:, None])], agents)
    seat = view.to_act.astype(np.int64)[game]
    points = state.scores[np.arange(len(game)), seat].astype(np.float64)
    value = shape_reward(points, OBJECTIVES[objective]).astype(np.float64)
    out, start = [], 0
    for s in sizes:
        out.append(value[start : start + s * w].reshape(w, s).mean(axis=0))
        start += s * w
    return out


# ----------------------------------------------------------------------------
# the agent
# ----------------------------------------------------------------------------


class SearchAgent(Agent):
    """Plays by Monte Carlo search over sampled worlds (see the module docstring).

    ``base`` decides bidding and doubling, names the candidates and breaks ties;
    ``rollout`` plays the rollouts: one agent for every seat, or three by role
    (landlord, landlord_down, landlord_up); default the base.
    """

    name = "search"

    def __init__(self, base: Agent, config: SearchConfig | None = None,
                 rollout: Agent | Sequence[Agent] | None = None, seed=0):
        self.base = base
        self.config = config or SearchConfig()
        if rollout is None:
            rollout = base
        self.policies = tuple(rollout) if isinstance(rollout, (list, tuple)) else (rollout,) * 3
        if len(self.policies) != 3:
            raise SearchConfigError(f"rollout takes one agent or three (by role), got {len(self.policies)}")
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.searched = 0
        """Decisions searched so far (the others were forced, certain wins, or the base agent's)."""
        self.worlds_rolled = 0
        """Worlds rolled out over those decisions (below ``searched * worlds`` when a time limit cut in)."""

    def reset(self) -> None:
        for a in _distinct((self.base, *self.policies))[0]:
            a.reset()

    def act(self, view: engine.State) -> np.ndarray:
        view = seat_view(view)  # whatever it is given, it decides from the acting seat's view only
        chosen = np.asarray(self.base.act(view), np.int64)
        out = chosen.copy()
        ids, offsets = engine.legal_actions(view)
        seg = np.repeat(np.arange(view.num_games), np.diff(offsets))
        own = view.hands[seg, view.to_act[seg]].sum(axis=1)
        out_ids = np.flatnonzero(action_table(view.rules).num_cards[ids] == own)
        winners, first = np.unique(seg[out_ids], return_index=True)
        out[winners] = ids[out_ids[first]]  # a certain win is taken (the first such move)
        going_out = np.zeros(view.num_games, bool)
        going_out[winners] = True
        games = np.flatnonzero((view.phase == PLAY) & (np.diff(offsets) > 1) & ~going_out)
        if len(games):
            per_game = self.config.worlds * self.config.candidates + self.config.samples
            step = max(1, MAX_BATCH // per_game)  # games searched together: at most MAX_BATCH at a time
            for k in range(0, len(games), step):
                part = games[k : k + step]
                out[part] = self._search(engine.take(view, part), chosen[part])
        return out

    def _search(self, view: engine.State, chosen: np.ndarray) -> np.ndarray:
        """Best candidate per game of ``view`` (play phase, more than one legal move)."""
        cfg, start = self.config, time.perf_counter()
        ids, offsets = engine.legal_actions(view)
        cands = choose_candidates(view, chosen, base_scores(self.base, view, ids, offsets), ids, offsets,
                                  cfg.candidates)
        hands = self._worlds(view)
        totals = [np.zeros(len(c)) for c in cands]
        budget = cfg.time_limit * view.num_games
        done, step = 0, min(cfg.worlds, FIRST_ROUND) if cfg.time_limit else cfg.worlds
        while done < cfg.worlds and step >= 1:
            part, round_start = hands[:, done : done + step], time.perf_counter()
            values = rollout_values(view, part, cands, self.policies, cfg.objective)
            for t, v in zip(totals, values, strict=True):
                t += v * part.shape[1]
            done += part.shape[1]
            if cfg.time_limit:  # the next round is what the time left allows at this round's pace
                now = time.perf_counter()
                per_world = (now - round_start) / part.shape[1]
                step = min(int((budget - (now - start)) / max(per_world, 1e-9)), cfg.worlds - done)
        self.searched += view.num_games
        self.worlds_rolled += done * view.num_games
        return np.array([c[int(np.argmax(t))] for c, t in zip(cands, totals, strict=True)], np.int64)

    def _worlds(self, view: engine.State) -> np.ndarray:
        """``(N, worlds, 3, 15)``: sampled worlds, the most consistent with the other seats' moves first."""
        cfg = self.config
        sampled = cfg.samples if cfg.inference != "none" else cfg.worlds
        hands = sample_worlds(view, sampled, self.rng)
        if cfg.inference == "none":
            return hands
        n = view.num_games
        rows = np.repeat(np.arange(n), sampled)
        worlds = with_hands(view, rows, hands.reshape(n * sampled, 3, NUM_RANKS))
        wrong = replay_mismatches(worlds, view.to_act.astype(np.int64)[rows], self.policies,
                                  cfg.inference_moves, "deal" if cfg.inference == "all" else "play")
        wrong = wrong.reshape(n, sampled)
        keep = np.argsort(wrong, axis=1, kind="stable")[:, : cfg.worlds]
        return np.take_along_axis(hands, keep[:, :, None, None], axis=1)


# ----------------------------------------------------------------------------
# the spec
# ----------------------------------------------------------------------------

_OPTION_NAMES = {"worlds": "worlds", "candidates": "candidates", "samples": "samples",
                 "inference": "inference", "inference_moves": "inference_moves", "objective": "objective",
                 "time": "time_limit"}


def parse_spec(spec: str) -> tuple[str, str | None, SearchConfig]:
    """``search:BASE[,key=value...]`` -> (base spec, rollout spec or None, config)."""
    body = spec.removeprefix("search:")
    base, *options = body.split(",")
    if not base:
        raise SearchConfigError(f"{spec!r} names no base agent; expected search:BASE[,key=value...], "
                                "e.g. search:rule or search:pretrained,rollout=rule")
    values: dict = {}
    rollout = None
    seen: set = set()
    for opt in options:
        key, eq, value = opt.partition("=")
        if not eq or not value:
            raise SearchConfigError(f"search option {opt!r} in {spec!r} is not key=value")
        if key in seen:
            raise SearchConfigError(f"search option {key!r} is given twice in {spec!r}; expected each "
                                    "option once")
        seen.add(key)
        if key == "rollout":
            rollout = value
        elif key in _OPTION_NAMES:
            values[_OPTION_NAMES[key]] = _option_value(key, value)
        else:
            raise SearchConfigError(f"unknown search option {key!r} in {spec!r}; expected one of "
                                    f"{sorted([*_OPTION_NAMES, 'rollout'])}")
    return base, rollout, SearchConfig(**values)


def _option_value(key: str, value: str):
    if key in ("inference", "objective"):
        return value
    try:
        return float(value) if key == "time" else int(value)
    except ValueError:
        kind = "a number of seconds" if key == "time" else "an integer"
        raise SearchConfigError(f"search option {key} must be {kind}, got {value[:40]!r}") from None


__all__ = ["SearchAgent", "SearchConfig", "SearchConfigError", "sample_worlds", "hidden_cards",
           "replay_mismatches", "rollout_values", "parse_spec"]
