"""The vector env's compact masks (``mask="ids"`` and ``mask="bits"``) against its dense mask."""

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from helpers import sweep  # noqa: E402

from doudizhu_env import action_table, engine  # noqa: E402
from doudizhu_env.gym_env import MASKS, DouDizhuVectorEnv  # noqa: E402
from doudizhu_env.legal import sample_bits  # noqa: E402
from doudizhu_env.rules import resolve_rules  # noqa: E402


def decode_ids(info, num_envs, num_actions):
    """The dense (B, A) bool mask of ``legal_ids`` / ``legal_offsets`` of ``info``, checking the layout."""
    ids, offsets = info["legal_ids"], info["legal_offsets"]
    assert ids.dtype == np.int64 and offsets.dtype == np.int64
    assert offsets.shape == (num_envs + 1,) and offsets[0] == 0 and offsets[-1] == len(ids)
    assert np.all(np.diff(offsets) >= 0)
    mask = np.zeros((num_envs, num_actions), bool)
    for i in range(num_envs):
        row = ids[offsets[i]:offsets[i + 1]]
        assert np.all(np.diff(row) > 0)  # ascending, no repeats
        mask[i, row] = True
    return mask


def decode_bits(info, num_envs, num_actions):
    """The dense (B, A) bool mask of ``info["legal_bits"]`` as documented (np.unpackbits, little order)."""
    bits = info["legal_bits"]
    assert bits.dtype == np.uint8 and bits.shape == (num_envs, -(-num_actions // 8))
    return np.unpackbits(bits, axis=1, count=num_actions, bitorder="little").astype(bool)


def sample_from_ids(info, rng):
    ids, offsets = info["legal_ids"], info["legal_offsets"]
    counts = np.diff(offsets)
    return ids[offsets[:-1] + (rng.random(len(counts)) * counts).astype(np.int64)]


def sample_from_bits(info, rng):
    """Sample from the packed bytes directly: padded to whole uint64 words, they are the engine's bitsets."""
    bits = info["legal_bits"]
    padded = np.zeros((len(bits), -(-bits.shape[1] // 8) * 8), np.uint8)
    padded[:, : bits.shape[1]] = bits
    return sample_bits(padded.view("<u8").astype(np.uint64), rng)


@pytest.mark.parametrize("rules", sweep(["standard", "douzero"], default=1))
def test_compact_masks_decode_to_the_dense_mask_over_random_games(rules):
    """Three envs, one per mask form, same seed, stepped in lockstep with actions drawn from the compact
    forms: the same games, and at every step the compact forms decode to exactly the dense mask."""
    n = 40
    seats = np.arange(n) % 3
    num_actions = len(action_table(resolve_rules(rules)))
    envs = {m: DouDizhuVectorEnv(n, seat=seats, rules=rules, mask=m) for m in MASKS}
    out = {m: envs[m].reset(seed=3) for m in MASKS}
    rng = np.random.default_rng(3)
    ended = 0
    for t in range(150):
        dense = out["dense"][0]["action_mask"]
        assert dense.shape == (n, num_actions) and dense.any(axis=1).all()
        np.testing.assert_array_equal(dense, engine.legal_action_mask(envs["ids"].state))
        np.testing.assert_array_equal(decode_ids(out["ids"][1], n, num_actions), dense.astype(bool))
        np.testing.assert_array_equal(decode_bits(out["bits"][1], n, num_actions), dense.astype(bool))
        # bit for bit the bytes of np.packbits, padding bits of the last byte zero
        np.testing.assert_array_equal(out["bits"][1]["legal_bits"],
                                      np.packbits(dense.astype(bool), axis=1, bitorder="little"))
        for m in ("ids", "bits"):
            assert "action_mask" not in out[m][0] and "action_mask" not in out[m][1]
            np.testing.assert_array_equal(out[m][0]["observation"], out["dense"][0]["observation"])
            assert envs[m].observation_space.contains(out[m][0])
        actions = sample_from_ids(out["ids"][1], rng) if t % 2 else sample_from_bits(out["bits"][1], rng)
        assert dense[np.arange(n), actions].all()  # legal
        results = {m: envs[m].step(actions) for m in MASKS}
        for m in ("ids", "bits"):
            for k in (1, 2, 3):  # rewards, terminated, truncated
                np.testing.assert_array_equal(results[m][k], results["dense"][k])
        out = {m: (r[0], r[4]) for m, r in results.items()}
        done = results["dense"][2] | results["dense"][3]
        if done.any():
            ended += int(done.sum())
            for m in ("ids", "bits"):
                info = out[m][1]
                np.testing.assert_array_equal(info["_final_obs"], done)
                for j in np.flatnonzero(done):
                    final = info["final_obs"][j]
                    assert set(final) == {"observation"}
                    assert envs[m].single_observation_space.contains(final)
                    np.testing.assert_array_equal(final["observation"],
                                                  out["dense"][1]["final_obs"][j]["observation"])
    assert ended > n  # hands ended and were dealt anew, in every form alike


@pytest.mark.parametrize("mask", ["ids", "bits"])
def test_compact_mask_play_alone_through_make_vec(mask):
    """A compact env on its own (``gym.make_vec``): actions from its compact form are always accepted, and the
    form agrees with the engine's legal actions of the state it describes."""
    n = 32
    envs = gymnasium.make_vec("DouDizhu-v0", num_envs=n, mask=mask)
    assert isinstance(envs, DouDizhuVectorEnv) and envs.mask == mask
    assert set(envs.single_observation_space.spaces) == {"observation"}
    num_actions = envs.single_action_space.n
    obs, info = envs.reset(seed=11)
    rng = np.random.default_rng(11)
    sample, decode = (sample_from_ids, decode_ids) if mask == "ids" else (sample_from_bits, decode_bits)
    hands = 0
    for _ in range(200):
        np.testing.assert_array_equal(decode(info, n, num_actions), engine.legal_action_mask(envs.state))
        obs, rewards, terminated, truncated, info = envs.step(sample(info, rng))  # raises if one is illegal
        assert envs.observation_space.contains(obs)
        hands += int((terminated | truncated).sum())
    assert hands > n


def test_the_default_is_dense_and_a_bad_mask_raises():
    envs = DouDizhuVectorEnv(2)
    obs, info = envs.reset(seed=0)
    assert envs.mask == "dense" and set(info) == {"action_mask", "seat", "role", "phase"}
    assert set(obs) == set(envs.single_observation_space.spaces) == {"observation", "action_mask"}
    with pytest.raises(ValueError, match="mask"):
        DouDizhuVectorEnv(2, mask="sparse")


def test_bits_split_per_game_by_dict_info_to_list():
    """``legal_bits`` is a per-game info entry (length B), so Gymnasium's DictInfoToList splits it by game."""
    from gymnasium.wrappers.vector import DictInfoToList

    n = 6
    plain, listed = DouDizhuVectorEnv(n, mask="bits"), DictInfoToList(DouDizhuVectorEnv(n, mask="bits"))
    (_, info), (_, infos) = plain.reset(seed=5), listed.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(60):
        assert len(infos) == n
        np.testing.assert_array_equal(np.stack([i["legal_bits"] for i in infos]), info["legal_bits"])
        actions = sample_from_bits(info, rng)
        (*_, info), (*_, infos) = plain.step(actions), listed.step(actions)
