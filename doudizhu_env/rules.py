"""The rule configuration: a frozen, hashable :class:`Rules` and its presets.

Every switchable decision of the rules page (``docs/rules.md``) is a field.
Two presets exist:

``standard`` (the default)
    bidding, doubling, spring and reverse spring, distinct single kickers,
    the two jokers allowed as the two single kickers of one combination.
``douzero``
    the rules of the DouZero papers and code: no bidding (landlord given or
    drawn, base 1), no doubling, no spring, single kickers may repeat a rank.

``Rules`` is hashable, so tables built from it (the action table) are cached
per configuration.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .checks import is_int

#: The largest ``redeal_limit``: the engine counts redeals in 16 bits, and a hand redealt a thousand
#: times (every seat passing each time) is already a broken bidding policy.
MAX_REDEAL_LIMIT = 1000
#: Rules configurations whose tables (actions, legal moves, agents' features) are kept built at
#: once; tables of others are built again when needed (each table set is several MB).
TABLES_KEPT = 8


@dataclass(frozen=True)
class Rules:
    """A rule configuration. Build one with :meth:`Rules.preset` or directly."""

    distinct_kickers: bool = True
    """Single kickers of one combination have pairwise different ranks."""
    rocket_as_kickers: bool = True
    """Both jokers may be the single kickers of one combination (``7777+X+D``)."""
    bidding: bool = True
    """Seats bid 0-3 for the landlord; off: landlord given or drawn, base 1."""
    doubling: bool = True
    """Farmers may double after the hole cards are shown, the landlord redouble."""
    spring: bool = True
    """Spring and reverse spring double the stake."""
    redeal_limit: int = 100
    """An episode that redeals more than this many times (all seats passed) is truncated
    (at most :data:`MAX_REDEAL_LIMIT`)."""

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.type in ("bool", bool) and not isinstance(value, bool):
                raise TypeError(f"Rules.{f.name} must be a bool, got {value!r}")
        if not is_int(self.redeal_limit):
            raise TypeError(f"Rules.redeal_limit must be an int, got {self.redeal_limit!r}")
        object.__setattr__(self, "redeal_limit", int(self.redeal_limit))  # a numpy integer is kept as an int
        if not 0 <= self.redeal_limit <= MAX_REDEAL_LIMIT:
            raise ValueError(f"Rules.redeal_limit must be in 0..{MAX_REDEAL_LIMIT}, got {self.redeal_limit}")

    @staticmethod
    def preset(name: str = "standard", **overrides) -> Rules:
        """The named preset (one of :data:`PRESET_NAMES`), with optional field overrides."""
        if name not in PRESETS:
            raise ValueError(f"unknown rules preset {name!r}; expected one of {sorted(PRESETS)}")
        known = {f.name for f in dataclasses.fields(Rules)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"unknown Rules field(s) {unknown}; expected some of {sorted(known)}")
        return dataclasses.replace(PRESETS[name], **overrides)

    def to_dict(self) -> dict:
        """Plain dict of the fields (for configs and checkpoints)."""
        return dataclasses.asdict(self)

    @staticmethod
    def from_dict(data: dict) -> Rules:
        """Inverse of :meth:`to_dict`; unknown keys raise ``ValueError``."""
        return Rules.preset("standard", **data)


#: The rule presets by name (the one place they are written; see the module docstring).
PRESETS = {
    "standard": Rules(),
    "douzero": Rules(distinct_kickers=False, bidding=False, doubling=False, spring=False),
}
#: The presets' names, the default first: what a ``rules`` setting or option may name.
PRESET_NAMES: tuple[str, ...] = tuple(PRESETS)


def resolve_rules(rules: Rules | str | None) -> Rules:
    """Accept a :class:`Rules`, a preset name, or ``None`` (standard)."""
    if rules is None:
        return PRESETS["standard"]
    if isinstance(rules, str):
        return Rules.preset(rules)
    if isinstance(rules, Rules):
        return rules
    raise TypeError(f"rules must be a Rules, a preset name or None, got {type(rules).__name__}")
