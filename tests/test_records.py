"""Game records: random games replay to the same final state, bad records say what is wrong, the CLIs."""

import copy
import json

import numpy as np
import pytest
from helpers import random_states, sweep

from doudizhu_arena.arena import run_arena
from doudizhu_env import engine, records
from doudizhu_env.rules import Rules
from doudizhu_table import replay

#: Fields a replay reproduces exactly. Not compared: the shuffle key and the episode counter (engine
#: bookkeeping a record does not hold), and rewards / ended (they describe the batch's last step).
COMPARED = [f for f in engine._FIELDS if f not in ("rules", "key", "episode", "rewards", "ended")]

#: in the order of the replay sweep: make test replays the first two, make test-slow the others
RULES = {
    "standard": Rules.preset("standard"),
    "douzero": Rules.preset("douzero"),
    "standard-no-bidding": Rules.preset("standard", bidding=False),
    "douzero-bidding": Rules.preset("douzero", bidding=True),
}


def random_games(rules, n, seed, steps=None):
    """``n`` games of uniformly random legal play, to the end (or ``steps`` decisions)."""
    *_, state = random_states(rules, seed, n, None if steps is None else steps + 1)
    return state


def assert_same_game(replayed, state, game):
    for name in COMPARED:
        np.testing.assert_array_equal(getattr(replayed, name)[0], getattr(state, name)[game], err_msg=name)


@pytest.mark.parametrize("name", sweep(RULES, default=2))
def test_random_games_replay_exactly(name, tmp_path):
    state = random_games(RULES[name], 120, seed=7)
    path = tmp_path / "games.jsonl"
    assert records.save_records(records.records_from_state(state), path) == 120
    loaded = records.load_records(path)
    assert len(loaded) == 120
    for g, rec in enumerate(loaded):
        assert rec["version"] == records.VERSION and rec["rules"] == RULES[name].to_dict()
        assert_same_game(records.replay(rec), state, g)
    if RULES[name].bidding:  # some deals were passed out and dealt again: the records hold the hand played
        assert state.redeals.max() > 0
        assert max(r["redeals"] for r in loaded) == state.redeals.max()


def test_record_holds_the_deal_with_suits_and_result():
    state = random_games("standard", 3, seed=1)
    rec = records.record_from_state(state, 1, players=["a", "b", "c"], meta={"note": "x"})
    dealt = [records.parse_card(c) for hand in rec["deal"]["hands"] for c in hand]
    dealt += [records.parse_card(c) for c in rec["deal"]["hole"]]
    assert dealt == state.deal[1].tolist()
    assert rec["first_bidder"] == int(state.first_bidder[1])
    assert rec["result"]["scores"] == state.scores[1].tolist()
    assert rec["result"]["multiplier"] == int(state.multiplier[1])
    assert rec["result"]["landlord"] == int(state.landlord[1])
    assert sum(rec["result"]["scores"]) == 0
    assert rec["players"] == ["a", "b", "c"] and rec["meta"] == {"note": "x"}
    assert all(isinstance(seat, int) and isinstance(action, str) for seat, action in rec["moves"])


def test_truncated_and_escaped_hands_replay():
    state = random_games(Rules.preset("standard", redeal_limit=0), 200, seed=3)
    truncated = np.flatnonzero(state.truncated)
    assert len(truncated) > 0
    for g in truncated[:5]:
        rec = records.record_from_state(state, int(g))
        assert rec["result"]["truncated"] and rec["redeals"] == 0
        assert_same_game(records.replay(rec), state, int(g))
    midway = random_games("standard", 4, seed=5, steps=12)
    left = engine.escape(midway, np.array([0, 1, 2, -1]))
    for g in range(3):
        rec = records.record_from_state(left, g)
        assert rec["escaped"] == g and rec["result"]["scores"][g] < 0
        assert_same_game(records.replay(rec), left, g)
    with pytest.raises(ValueError, match="not over"):
        records.record_from_state(left, 3)


def test_arena_records_every_game_without_changing_results(tmp_path):
    path = tmp_path / "arena.jsonl"
    lineup = ["rule", "random", "random"]
    plain = run_arena(lineup, 5, "standard", seed=2, chunk_size=3)
    recorded = run_arena(lineup, 5, "standard", seed=2, chunk_size=3, record=str(path))
    assert recorded["agents"] == plain["agents"]
    recs = records.load_records(path)
    assert len(recs) == 15  # 5 deals x 3 rotations
    assert sorted((r["meta"]["deal"], r["meta"]["seating"]) for r in recs) == [(d, s) for d in range(5)
                                                                               for s in range(3)]
    for rec in recs:
        assert sorted(rec["players"]) == sorted(lineup)
        final = records.replay(rec)
        assert final.scores[0].tolist() == rec["result"]["scores"]


def test_evaluate_command_line_records(tmp_path, capsys):
    from doudizhu_arena import evaluate

    path = tmp_path / "eval.jsonl"
    evaluate.main(["--seats", "rule", "random", "random", "--games", "2", "--rules", "douzero",
                   "--no-progress", "--record", str(path)])
    recs = records.load_records(path)
    assert len(recs) == 6 and all(r["rules"] == Rules.preset("douzero").to_dict() for r in recs)
    for rec in recs:
        records.replay(rec)


# ----------------------------------------------------------------------------
# malformed records
# ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def good():
    return records.record_from_state(random_games("standard", 1, seed=11), 0)


def _edit(rec, fn):
    rec = copy.deepcopy(rec)
    fn(rec)
    return rec


def _first_play(rec):
    return next(i for i, (_, a) in enumerate(rec["moves"]) if not a.startswith(("bid", "double", "no_")))


BAD = {
    "wrong format": (lambda r: r.update(format="other"), "not a game record"),
    "future version": (lambda r: r.update(version=99), "unsupported record version 99"),
    "missing moves": (lambda r: r.pop("moves"), r"missing field\(s\) \['moves'\]"),
    "bad rules": (lambda r: r["rules"].update(jokers=True), "bad 'rules'"),
    "bad card": (lambda r: r["deal"]["hands"][0].__setitem__(0, "1Z"), "bad card '1Z'"),
    "card twice": (lambda r: r["deal"]["hole"].__setitem__(0, r["deal"]["hands"][0][0]), "not one deck"),
    "short hand": (lambda r: r["deal"]["hands"][1].pop(), "got sizes"),
    "bad seat": (lambda r: r.update(first_bidder=3), "first_bidder must be 0, 1 or 2, got 3"),
    "move shape": (lambda r: r["moves"].__setitem__(0, "bid1"), r"move 0: expected \[seat, action name\]"),
    "wrong turn": (lambda r: r["moves"][0].__setitem__(0, (r["moves"][0][0] + 1) % 3), "move 0 .* turn"),
    "unknown action": (lambda r: r["moves"][_first_play(r)].__setitem__(1, "3334"), "not a canonical action"),
    "illegal action": (lambda r: r["moves"][_first_play(r)].__setitem__(1, "pass"), "is illegal"),
    "cut short": (lambda r: r.update(moves=r["moves"][:-1]), "before the hand is over"),
    "extra move": (lambda r: r["moves"].append([0, "pass"]), "already over"),
    "wrong scores": (lambda r: r["result"].update(scores=[0, 0, 0]), "do not give the recorded result"),
    "scores not ints": (lambda r: r["result"].update(scores=["1", 2, 3]), "'result' must be an object"),
    # fields no game could have written: a bool or float version, too many redeals, wrong players, an escape
    # after the end
    "version true": (lambda r: r.update(version=True), "unsupported record version True"),
    "version float": (lambda r: r.update(version=1.0), "unsupported record version 1.0"),
    "redeals too many": (lambda r: r.update(redeals=40000), r"'redeals' must be an int 0..100 \(the rules'"),
    "players five": (lambda r: r.update(players=5), "'players' must be a list of 3 names"),
    "players dict": (lambda r: r.update(players={"a": 1}), "'players' must be a list of 3 names"),
    "escaped but finished": (lambda r: r.update(escaped=0), "the moves finish the hand, but the record says"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_malformed_records_raise_clear_errors(good, case):
    fn, message = BAD[case]
    with pytest.raises(records.RecordError, match=message):
        records.replay(_edit(good, fn))


@pytest.mark.parametrize("content, message", [
    ("\xff\xfe{}".encode("latin-1"), "is not UTF-8 text"),
    ('{"a": 1}'.encode("utf-16"), "is not UTF-8 text"),
    (b"[" * 100_000, "nested too deeply"),
    (b'{"redeals": ' + b"9" * 5000 + b"}", "line 1: Exceeds the limit"),
])
def test_hostile_files_are_one_error(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(records.RecordError, match=message):
        records.load_records(path)


def test_malformed_files_name_the_line(good, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(good) + "\n\n{not json\n")
    with pytest.raises(records.RecordError, match="line 3: not JSON"):
        records.load_records(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps([1, 2]) + "\n")
    with pytest.raises(records.RecordError, match="line 2: a record is a JSON object"):
        records.load_records(path)


# ----------------------------------------------------------------------------
# the replay printer
# ----------------------------------------------------------------------------


def test_replay_prints_a_game_move_by_move(tmp_path, capsys):
    state = random_games("standard", 2, seed=4)
    path = tmp_path / "g.jsonl"
    records.save_records(records.records_from_state(state, players=["me", "rule", "random"]), path)
    assert replay.main([str(path), "--game", "1", "--no-color"]) == 0
    out = capsys.readouterr().out
    rec = records.load_records(path)[1]
    assert out.startswith("game 1: rules standard")
    assert "seat 0 (me)" in out and "hole: " in out and "\x1b[" not in out
    assert out.count("\n    ") >= 6  # the deal, and all hands again once the landlord takes the hole cards
    for n, (seat, action) in enumerate(rec["moves"], 1):
        assert f"{n:>3}. seat {seat}" in out and action in out
    assert f"points: seat 0 (me) {rec['result']['scores'][0]:+d}" in out
    assert replay.main([str(path), "--list"]) == 0
    assert capsys.readouterr().out.count("game ") == 2


def test_replay_reports_bad_input(tmp_path, capsys):
    state = random_games("douzero", 1, seed=4)
    path = tmp_path / "g.jsonl"
    rec = records.record_from_state(state, 0)
    records.save_records([rec], path)
    assert replay.main([str(path), "--game", "5"]) == 1
    assert "no game 5" in capsys.readouterr().err
    rec["result"]["scores"] = [9, 9, -18]
    records.save_records([rec], path)
    assert replay.main([str(path)]) == 1
    assert "game 0: the moves do not give the recorded result" in capsys.readouterr().err
    assert replay.main([str(tmp_path / "missing.jsonl")]) == 1
    assert "error:" in capsys.readouterr().err
    assert replay.main([str(path), "--list"]) == 1  # the summary of a lying record is an error too
    assert "do not give the recorded result" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for argv in ([str(empty)], [str(empty), "--game", "0"]):
        assert replay.main(argv) == 1
        assert "holds no game records" in capsys.readouterr().err


def test_replay_shows_control_characters_in_names_harmlessly(tmp_path, capsys):
    path = tmp_path / "g.jsonl"
    state = random_games("standard", 1, seed=2)
    names = ["\x1b]0;pwned\x07evil", "\x1b[31mred", "x" * 500]
    records.save_records(records.records_from_state(state, players=names), path)
    for argv in ([str(path), "--no-color"], [str(path), "--list"]):
        assert replay.main(argv) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "?]0;pwned?evil" in out
        assert "x" * 41 not in out
