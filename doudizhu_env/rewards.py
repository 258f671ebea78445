"""Rewards from a hand's points (``docs/rules.md`` scoring), shared by the environments and training.

- ``"score"``: the points as they are (2:1:1 x base x multiplier);
- ``"win"``: +1 for a win, -1 for a loss (0 for a truncated hand);
- ``"log_score"``: sign x log2(1 + |points|), which keeps the sign and damps big stakes.
"""

from __future__ import annotations

import numpy as np

REWARDS = ("score", "win", "log_score")
#: The training objectives (DouZero's names, ``train.config``), each the reward kind it regresses on.
OBJECTIVES = {"adp": "score", "wp": "win", "logadp": "log_score"}


def shape_reward(points, kind: str) -> np.ndarray:
    """Points (any shape) -> float32 rewards of the given kind."""
    points = np.asarray(points, dtype=np.float32)
    if kind == "score":
        return points
    if kind == "win":
        return np.sign(points)
    if kind == "log_score":
        return (np.sign(points) * np.log2(1.0 + np.abs(points))).astype(np.float32)
    raise ValueError(f"reward must be one of {REWARDS}, got {kind!r}")
