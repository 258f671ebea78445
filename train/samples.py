"""The sample schema: what the actors record and the learners read, in one place.

A :class:`Samples` is a batch of the model's decisions, one row each, as
arrays (batch axis first). Four fields are always there; the others exist
only where the learner asks the recorder for them (:class:`train.learner.Recording`)
and are ``None`` otherwise::

    field           shape, dtype               what
    obs             (N, OBS_BYTES) uint8       the seat's observation, as packed bits (pack_obs)
    action          (N,) int64                 the action id chosen (doudizhu_env.actions)
    network         (N,) int8                  which of the five networks decided (agents.dmc.NETWORKS)
    target          (N,) float32               the seat's result of the hand, shaped by the objective
    -- hidden_hands (the hand head's labels, or the critic's input)
    hidden_hands    (N, 2, NUM_RANKS) int8     the hands of the next seat and of the one after it
    -- trajectories (the policy learner's: whole hands, each seat's decisions in order)
    legal           (sum(legal_count),) int32  every row's legal action ids, one row after the other
    legal_count     (N,) int32                 how many legal actions each row has
    steps_left      (N,) int16                 the seat's decisions after this one in the hand (0: its last)
    warm_start      (N,) bool                  the action is the warm-start agent's (cloned, not reinforced)
    log_prob        (N,) float32               log-probability of the action under what drew it (exploring)
    log_pi          (N,) float32               log-probability of the action under the acting policy alone

Rows with trajectories are laid out hand by hand, and a batch of them is cut
only between hands (:meth:`train.buffer.SampleBuffer.take_whole`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from doudizhu_env.observation import OBS_SIZE

#: Bytes of one packed observation (``obs``).
OBS_BYTES = -(-OBS_SIZE // 8)
#: The fields every :class:`Samples` has.
REQUIRED = ("obs", "action", "network", "target")
#: The fields of trajectories (present together or not at all).
TRAJECTORY = ("legal", "legal_count", "steps_left", "warm_start", "log_prob", "log_pi")


def pack_obs(obs: np.ndarray) -> np.ndarray:
    """``(N, OBS_SIZE)`` 0/1 floats -> ``(N, OBS_BYTES)`` uint8."""
    return np.packbits(obs.astype(bool), axis=1)


def unpack_obs(bits: np.ndarray) -> np.ndarray:
    """Inverse of :func:`pack_obs`, as float32."""
    return np.unpackbits(bits, axis=1, count=OBS_SIZE).astype(np.float32)


@dataclass(frozen=True)
class Samples:
    """A batch of decisions; the module docstring lists the fields."""

    obs: np.ndarray
    action: np.ndarray
    network: np.ndarray
    target: np.ndarray
    hidden_hands: np.ndarray | None = None
    legal: np.ndarray | None = None
    legal_count: np.ndarray | None = None
    steps_left: np.ndarray | None = None
    warm_start: np.ndarray | None = None
    log_prob: np.ndarray | None = None
    log_pi: np.ndarray | None = None

    def __post_init__(self):
        n = len(self.target)
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name != "legal" and value is not None and len(value) != n:
                raise ValueError(f"Samples.{f.name} has {len(value)} rows, expected {n} (one per sample)")
        given = [name for name in TRAJECTORY if getattr(self, name) is not None]
        if given and len(given) != len(TRAJECTORY):
            raise ValueError(f"Samples: trajectory fields {given} without the others; expected all of "
                             f"{TRAJECTORY} or none")
        legal, counts = self.legal, self.legal_count
        if legal is not None and counts is not None and counts.sum() != len(legal):
            raise ValueError(f"Samples.legal has {len(legal)} ids, expected sum(legal_count) = "
                             f"{int(counts.sum())}")

    def __len__(self) -> int:
        return len(self.target)

    @property
    def trajectories(self) -> bool:
        """Whether these samples carry the trajectory fields."""
        return self.legal_count is not None

    @classmethod
    def empty(cls) -> Samples:
        """No samples (what an actor stopped before its first decision returns)."""
        return cls(obs=np.zeros((0, OBS_BYTES), np.uint8), action=np.zeros(0, np.int64),
                   network=np.zeros(0, np.int8), target=np.zeros(0, np.float32))

    @classmethod
    def concat(cls, parts: list[Samples]) -> Samples:
        """One batch of several with the same fields, in order (of none: :meth:`empty`)."""
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]
        fields: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            values = [getattr(p, f.name) for p in parts]
            if any((v is None) != (values[0] is None) for v in values):
                raise ValueError(f"Samples.concat: {f.name} is in some parts and not in others")
            fields[f.name] = None if values[0] is None else np.concatenate(values)
        return cls(**fields)

    def rows(self, start: int, stop: int) -> Samples:
        """The samples ``start:stop`` (their legal actions with them)."""
        fields: dict[str, Any] = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name, value in fields.items():
            if name != "legal" and value is not None:
                fields[name] = value[start:stop]
        if self.legal is not None and self.legal_count is not None:
            ends = np.cumsum(self.legal_count, dtype=np.int64)
            first = int(ends[start - 1]) if start > 0 else 0
            last = int(ends[min(stop, len(self)) - 1]) if min(stop, len(self)) > 0 else 0
            fields["legal"] = self.legal[first:max(last, first)]
        return Samples(**fields)

    def observations(self) -> np.ndarray:
        """``(N, OBS_SIZE)`` float32: the observations unpacked."""
        return unpack_obs(self.obs)
