"""The rule configuration (docs/rules.md, "Presets" and every *(flag)*)."""

import dataclasses

import numpy as np
import pytest

from doudizhu_env import Rules, action_table
from doudizhu_env.rules import PRESET_NAMES, PRESETS

FIELDS = {"distinct_kickers", "rocket_as_kickers", "bidding", "doubling", "spring", "redeal_limit"}


def test_fields():
    assert {f.name for f in dataclasses.fields(Rules)} == FIELDS


PRESET_FIELDS = {
    # docs/rules.md: doubling on by default, distinct_kickers on, rocket_as_kickers on,
    # bidding and spring part of "everything above", redeal bound default 100.
    "standard": {"distinct_kickers": True, "rocket_as_kickers": True, "bidding": True, "doubling": True,
                 "spring": True, "redeal_limit": 100},
    # docs/rules.md: no bidding, no doubling, no spring / reverse spring, single kickers
    # may repeat ranks (distinct_kickers off), the rest as above.
    "douzero": {"distinct_kickers": False, "rocket_as_kickers": True, "bidding": False, "doubling": False,
                "spring": False, "redeal_limit": 100},
}


@pytest.mark.parametrize("name", PRESET_FIELDS)
def test_preset_fields(name):
    r = Rules.preset(name)
    assert {f: getattr(r, f) for f in FIELDS} == PRESET_FIELDS[name]
    assert all(type(getattr(r, f)) is type(v) for f, v in PRESET_FIELDS[name].items())


def test_default_preset_and_constructor_are_standard():
    assert Rules.preset() == Rules.preset("standard") == Rules()


def test_presets_differ():
    assert Rules.preset("standard") != Rules.preset("douzero")


@pytest.mark.parametrize(
    "name, overrides",
    [
        ("standard", {"rocket_as_kickers": False}),
        ("standard", {"distinct_kickers": False}),
        ("standard", {"doubling": False, "spring": False}),
        ("standard", {"redeal_limit": 0}),
        ("standard", {"redeal_limit": 5}),
        ("douzero", {"doubling": True}),
        ("douzero", {"distinct_kickers": True}),
    ],
)
def test_overrides(name, overrides):
    r = Rules.preset(name, **overrides)
    base = Rules.preset(name)
    for f in FIELDS:
        assert getattr(r, f) == overrides.get(f, getattr(base, f))


def test_overrides_do_not_change_the_preset():
    Rules.preset("standard", rocket_as_kickers=False)
    assert Rules.preset("standard").rocket_as_kickers is True


def test_unknown_preset():
    with pytest.raises(ValueError, match="nope"):
        Rules.preset("nope")


def test_unknown_field():
    with pytest.raises((ValueError, TypeError), match="colour"):
        Rules.preset("standard", colour=True)


@pytest.mark.parametrize(
    "overrides",
    [
        {"distinct_kickers": 1},
        {"rocket_as_kickers": "yes"},
        {"bidding": None},
        {"doubling": 0},
        {"spring": 1.0},
        {"redeal_limit": 1.5},
        {"redeal_limit": "100"},
        {"redeal_limit": True},
    ],
)
def test_wrong_types(overrides):
    with pytest.raises(TypeError):
        Rules.preset("standard", **overrides)
    with pytest.raises(TypeError):
        Rules(**overrides)


def test_numpy_integer_redeal_limit_is_kept_as_an_int():
    rules = Rules(redeal_limit=np.int64(5))
    assert type(rules.redeal_limit) is int and rules == Rules(redeal_limit=5)
    assert hash(rules) == hash(Rules(redeal_limit=5))


def test_preset_names():
    assert PRESET_NAMES == ("standard", "douzero") == tuple(PRESETS)
    assert all(Rules.preset(name) == PRESETS[name] for name in PRESET_NAMES)


def test_negative_redeal_limit():
    with pytest.raises(ValueError):
        Rules.preset("standard", redeal_limit=-1)
    with pytest.raises(ValueError):
        Rules(redeal_limit=-1)


def test_frozen():
    r = Rules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.bidding = False


def test_hashable_and_equal_by_value():
    a = Rules.preset("standard", rocket_as_kickers=False)
    b = Rules(rocket_as_kickers=False)
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b, Rules(), Rules.preset("douzero")}) == 3
    assert {a: 1}[b] == 1


def test_action_table_cached_per_configuration():
    assert action_table(Rules()) is action_table(Rules.preset("standard"))
    assert action_table() is action_table("standard")
    assert action_table("douzero") is action_table(Rules.preset("douzero"))
    assert action_table("douzero") is not action_table("standard")


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules.preset("douzero"),
        Rules.preset("standard", rocket_as_kickers=False, redeal_limit=3),
        Rules.preset("douzero", spring=True),
    ],
)
def test_dict_round_trip(rules):
    d = rules.to_dict()
    assert d == {f: getattr(rules, f) for f in FIELDS}
    assert Rules.from_dict(d) == rules
    assert hash(Rules.from_dict(dict(d))) == hash(rules)  # equal rules share the cached tables


def test_from_dict_partial_defaults_to_standard():
    assert Rules.from_dict({"bidding": False}) == Rules(bidding=False)
    assert Rules.from_dict({}) == Rules()


def test_from_dict_unknown_key():
    with pytest.raises(ValueError, match="colour"):
        Rules.from_dict({"colour": 1})


def test_from_dict_wrong_type():
    with pytest.raises(TypeError):
        Rules.from_dict({"spring": "no"})
