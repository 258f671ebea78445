"""From stepped games to Monte-Carlo samples, with bounded memory.

:class:`EpisodeRecorder` keeps every decision of the hands in progress in a
ring of rows (observation as packed bits, action, network, game, seat, and
with ``hidden_hands`` the two hidden hands at that decision). When a hand
ends, all its rows become samples (:class:`train.samples.Samples`) whose
target is the final result of the seat that made the decision
(``objective_targets``), and the rows are freed. Everything is array
operations over the batch; nothing loops per sample (but for the legal sets
below, one small array per decision).

With ``trajectories`` (the policy learner, :mod:`train.ppo`) the recorder also
keeps each decision's legal actions, whether the warm-start agent made it and
the log-probability of the action under the policy that drew it, and a
finished hand's samples come as whole trajectories: each seat's decisions
together, in the order they were made, ``steps_left`` counting the seat's
decisions after each one in that hand (0 at its last). A chunk of finished
hands can then be cut only between hands, never inside one
(:meth:`SampleBuffer.take_whole`).

:class:`SampleBuffer` is the learner's bounded FIFO of samples.
"""

from __future__ import annotations

import numpy as np

from doudizhu_env.cards import NUM_RANKS
from doudizhu_env.engine import MAX_HISTORY
from doudizhu_env.rewards import OBJECTIVES, shape_reward

from .samples import OBS_BYTES, Samples, pack_obs


def objective_targets(points: np.ndarray, objective: str) -> np.ndarray:
    """Monte-Carlo targets from final points: ``adp`` points, ``wp`` +1/-1, ``logadp`` sign x log2(1+|p|).

    The objectives are DouZero's names for the environments' reward kinds
    (:func:`doudizhu_env.rewards.shape_reward`).
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {tuple(OBJECTIVES)}, got {objective!r}")
    return shape_reward(points, OBJECTIVES[objective])


class EpisodeRecorder:
    """Decisions of ``num_games`` hands in progress; see the module docstring."""

    def __init__(self, num_games: int, objective: str = "adp", hidden_hands: bool = False,
                 trajectories: bool = False):
        # a hand has at most 3 * (redeals + 1) + MAX_HISTORY decisions; a ring of
        # num_games * 2 * MAX_HISTORY rows is never overrun in practice, and checked
        self.capacity = num_games * 2 * MAX_HISTORY
        self.objective = objective
        self.obs = np.zeros((self.capacity, OBS_BYTES), dtype=np.uint8)
        self.action = np.zeros(self.capacity, dtype=np.int64)
        self.network = np.zeros(self.capacity, dtype=np.int8)
        self.game = np.full(self.capacity, -1, dtype=np.int64)
        self.seat = np.zeros(self.capacity, dtype=np.int8)
        self.hidden_hands = np.zeros((self.capacity, 2, NUM_RANKS), dtype=np.int8) if hidden_hands else None
        self.legal = np.empty(self.capacity, dtype=object) if trajectories else None
        self.warm_start = np.zeros(self.capacity, dtype=bool)
        self.log_prob = np.zeros(self.capacity, dtype=np.float32)
        self.log_pi = np.zeros(self.capacity, dtype=np.float32)
        self.time = np.zeros(self.capacity, dtype=np.int64)  # decisions recorded before this one
        self.recorded = 0
        self.head = 0

    def record(self, games: np.ndarray, seats, networks, actions, obs: np.ndarray,
               hidden: np.ndarray | None = None, legal: tuple[np.ndarray, np.ndarray] | None = None,
               warm_start: bool = False, log_prob: np.ndarray | None = None,
               log_pi: np.ndarray | None = None) -> None:
        """Append one decision for each of ``games``; ``hidden`` (``(n, 2, NUM_RANKS)``: the next
        seat's hand and the one after it) is required by a recorder with ``hidden_hands``, ``legal``
        (``(ids, offsets)`` of the legal actions of each decision) by one with ``trajectories``;
        ``warm_start``: the actions are the warm-start agent's; ``log_prob`` and ``log_pi``: of each
        action under what drew it (exploration included) and under the policy alone (a recorder with
        ``trajectories`` needs both unless ``warm_start``)."""
        self._check_record(hidden, legal, warm_start, log_prob, log_pi)  # before anything is written
        n = len(games)
        rows = (self.head + np.arange(n)) % self.capacity
        if np.any(self.game[rows] >= 0):
            raise RuntimeError("episode recorder overrun: a hand in progress is longer than the ring allows")
        self.obs[rows] = pack_obs(obs)
        self.action[rows], self.network[rows] = actions, networks
        self.game[rows], self.seat[rows] = games, seats
        if self.hidden_hands is not None:
            assert hidden is not None  # _check_record
            self.hidden_hands[rows] = hidden
        if self.legal is not None:
            assert legal is not None  # _check_record
            ids, offsets = legal
            for row, start, stop in zip(rows, offsets[:-1], offsets[1:], strict=True):
                self.legal[row] = ids[start:stop].astype(np.int32)
            self.log_prob[rows] = 0.0 if warm_start or log_prob is None else log_prob
            self.log_pi[rows] = 0.0 if warm_start or log_pi is None else log_pi
        self.warm_start[rows] = warm_start
        self.time[rows] = self.recorded + np.arange(n)
        self.recorded += n
        self.head = int((self.head + n) % self.capacity)

    def _check_record(self, hidden, legal, warm_start: bool, log_prob, log_pi) -> None:
        """ValueError naming what :meth:`record` lacks for this recorder's fields."""
        if self.hidden_hands is not None and hidden is None:
            raise ValueError("this recorder keeps the hidden hands (hidden_hands=True): pass `hidden`")
        if self.legal is not None and legal is None:
            raise ValueError("this recorder keeps the legal actions (trajectories=True): pass `legal`")
        if self.legal is not None and not warm_start and (log_prob is None or log_pi is None):
            raise ValueError("this recorder keeps the policy's log-probabilities (trajectories=True): "
                             "pass `log_prob` and `log_pi`")

    def finish(self, games: np.ndarray, points: np.ndarray) -> Samples:
        """Samples of every recorded decision of the ended ``games`` (``points``: ``(len(games), 3)``)."""
        slot = np.full(max(int(self.game.max(initial=-1)), int(np.max(games, initial=-1))) + 2, -1)
        slot[games] = np.arange(len(games))
        rows = np.flatnonzero((self.game >= 0) & (slot[self.game] >= 0))
        if self.legal is not None:  # each seat's decisions together, in order (module docstring)
            rows = rows[np.lexsort((self.time[rows], self.seat[rows], self.game[rows]))]
        targets = objective_targets(points[slot[self.game[rows]], self.seat[rows]], self.objective)
        hidden = None if self.hidden_hands is None else self.hidden_hands[rows]
        trajectories = self._trajectory_fields(rows) if self.legal is not None else {}
        out = Samples(obs=self.obs[rows], action=self.action[rows], network=self.network[rows],
                      target=targets, hidden_hands=hidden, **trajectories)
        if self.legal is not None:
            self.legal[rows] = None
        self.game[rows] = -1
        return out

    def _trajectory_fields(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The trajectory fields (:data:`train.samples.TRAJECTORY`) of ``rows`` (sorted by game, seat
        and time)."""
        assert self.legal is not None, "trajectory fields of a recorder made without trajectories"
        legal = list(self.legal[rows])
        key = self.game[rows] * 3 + self.seat[rows]
        last = np.r_[key[1:] != key[:-1], True]  # the last row of each trajectory
        ends = np.flatnonzero(last)
        end_of_row = ends[np.searchsorted(ends, np.arange(len(rows)))]
        return {"legal": np.concatenate(legal) if legal else np.zeros(0, np.int32),
                "legal_count": np.array([len(a) for a in legal], np.int32),
                "steps_left": (end_of_row - np.arange(len(rows))).astype(np.int16),
                "warm_start": self.warm_start[rows], "log_prob": self.log_prob[rows],
                "log_pi": self.log_pi[rows]}


class SampleBuffer:
    """A bounded FIFO of samples: ``put`` chunks, ``take`` batches of a fixed size."""

    def __init__(self, max_size: int):
        self.max_size = max_size
        self.parts: list[Samples] = []
        self.size = 0
        self.dropped = 0

    def put(self, chunk: Samples) -> None:
        """Append ``chunk``; a chunk of no samples (an actor stopped before its first) is not kept, so
        every part held has the fields of the samples (``hidden_hands`` included where recorded)."""
        if not len(chunk):
            return
        self.parts.append(chunk)
        self.size += len(chunk)
        while self.size - len(self.parts[0]) >= self.max_size:
            old = self.parts.pop(0)
            self.size -= len(old)
            self.dropped += len(old)

    def _oldest(self, n: int) -> tuple[int, int]:
        """How many of the oldest chunks hold ``n`` samples or more, and how many samples they hold."""
        used, count = 0, 0
        while count < n:
            count += len(self.parts[used])
            used += 1
        return used, count

    def take(self, n: int) -> Samples | None:
        """The ``n`` oldest samples (removed), or None when fewer are held."""
        if self.size < n:
            return None
        used, count = self._oldest(n)
        joined = Samples.concat(self.parts[:used])
        self.parts = ([joined.rows(n, count)] if count > n else []) + self.parts[used:]
        self.size -= n
        return joined.rows(0, n)

    def take_whole(self, n: int) -> Samples | None:
        """The oldest chunks, whole, as one (removed): as few as hold ``n`` samples or more; None when
        all of them hold fewer. Chunks of whole hands give whole hands (the policy learner's)."""
        if self.size < n:
            return None
        used, count = self._oldest(n)
        joined = Samples.concat(self.parts[:used])
        self.parts = self.parts[used:]
        self.size -= count
        return joined
