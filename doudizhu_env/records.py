"""Game records: one finished hand as a JSON object, many as JSON Lines (``docs/records.md``).

A record holds everything needed to replay a hand through the engine: the
rules, the deal with its suits, the first bidder, every action with its seat,
and the result (scores, spring, multiplier). Build records from engine games,
write and read them, and replay them::

    from doudizhu_env import engine, records

    state = ...                                      # engine games, played to the end
    recs = records.records_from_state(state, players=["rule", "random", "random"])
    records.save_records(recs, "games.jsonl")
    for rec in records.load_records("games.jsonl"):
        final = records.replay(rec)                  # the same final state and scores

A malformed record (missing or mistyped fields, unknown actions, moves the
rules forbid, a result the moves do not give) raises :class:`RecordError`
saying what and where. ``python -m doudizhu_table.replay FILE`` prints records
move by move.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from . import engine
from .actions import action_table
from .cards import (
    DECK_SIZE,
    HAND_SIZE,
    HOLE_SIZE,
    NUM_RANKS,
    RANK_INDEX,
    SMALL_JOKER,
    SUIT_CHARS,
    card_name,
    card_rank,
    format_hand,
)
from .checks import check_seat, is_int, short
from .files import InputPathError, append_text, atomic_write, check_input
from .rules import Rules

FORMAT = "doudizhu-record"
VERSION = 1
SPRING_NAMES = ("none", "spring", "reverse_spring")
_KEYS = ("format", "version", "rules", "deal", "first_bidder", "redeals", "moves", "escaped", "result")


class RecordError(ValueError):
    """A record that is not a valid game record of this format (the message says why)."""


# ----------------------------------------------------------------------------
# building records
# ----------------------------------------------------------------------------


def records_from_state(state: engine.State, games: Sequence[int] | None = None,
                       players: Sequence | None = None,
                       meta: dict | Sequence[dict] | None = None) -> list[dict]:
    """Records of finished games of ``state`` (default: all of them).

    ``players``: three names (one per seat) for every game, or one such list
    per game. ``meta``: a dict stored with every record, or one per game.
    """
    games = range(state.num_games) if games is None else games
    out = []
    for k, g in enumerate(games):
        who = players[k] if players is not None and not isinstance(players[0], str) else players
        info = meta[k] if isinstance(meta, Sequence) else meta
        out.append(record_from_state(state, int(g), who, info))
    return out


def record_from_state(state: engine.State, game: int = 0, players: Sequence[str] | None = None,
                      meta: dict | None = None) -> dict:
    """The record of game ``game`` of ``state``, which must be over."""
    if not state.done[game]:
        raise ValueError(f"game {game} is not over; only finished hands can be recorded")
    table = action_table(state.rules)
    n = int(state.history_len[game])
    moves = [[int(state.history_seat[game, i]), table.names[int(state.history[game, i])]] for i in range(n)]
    ids = state.deal[game]
    rec = {
        "format": FORMAT,
        "version": VERSION,
        "rules": state.rules.to_dict(),
        "deal": {"hands": [[card_name(c) for c in ids[s * HAND_SIZE:(s + 1) * HAND_SIZE]] for s in range(3)],
                 "hole": [card_name(c) for c in ids[3 * HAND_SIZE:]],
                 "landlord": None if state.rules.bidding else int(state.landlord[game])},
        "first_bidder": int(state.first_bidder[game]),
        "redeals": int(state.redeals[game]) - int(state.truncated[game]),
        "moves": moves,
        "escaped": None if state.escaped[game] < 0 else int(state.escaped[game]),
        "result": result_of(state, game),
    }
    if players is not None:
        rec["players"] = [str(p) for p in players]
    if meta:
        rec["meta"] = dict(meta)
    return rec


def result_of(state: engine.State, game: int = 0) -> dict:
    """The result part of a record: landlord, winner, base, multiplier and its parts, scores."""
    scores = [int(x) for x in state.scores[game]]
    landlord = int(state.landlord[game])
    finished = bool(state.done[game] and not state.truncated[game] and state.escaped[game] < 0)
    winner = None
    if finished:
        winner = next(s for s in range(3) if state.hands[game, s].sum() == 0)
    return {
        "landlord": landlord if landlord >= 0 else None,
        "winner": winner,
        "base": int(state.base[game]),
        "multiplier": int(state.multiplier[game]),
        "bombs": int(state.bombs[game]),
        "rocket": bool(state.rocket[game]),
        "doubles": [int(d) for d in state.doubles[game]],
        "spring": SPRING_NAMES[int(state.spring[game])],
        "truncated": bool(state.truncated[game]),
        "scores": scores,
    }


# ----------------------------------------------------------------------------
# reading and writing JSON Lines
# ----------------------------------------------------------------------------


def _plain(value):
    """JSON for the numpy scalars and arrays a record's metadata may hold."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"a record holds {type(value).__name__} {str(value)[:40]!r}, which is not JSON")


def save_records(recs: Iterable[dict], path: str | os.PathLike, append: bool = False) -> int:
    """Write records to ``path``, one JSON object per line; returns how many were written.

    Every record is turned into JSON before the file is touched, so a record that cannot be
    written leaves the file as it was. ``append=False`` replaces the file atomically;
    ``append=True`` adds the lines in one write, on a fresh line (:mod:`doudizhu_env.files`).
    """
    lines = [json.dumps(rec, separators=(",", ":"), default=_plain) + "\n" for rec in recs]
    text = "".join(lines)
    if append:
        if text:
            append_text(path, text)
    else:
        atomic_write(path, text)
    return len(lines)


#: The longest line of a records file read (a record takes a few KB): ``/dev/zero`` or a stream of
#: one endless line is refused once this much of it is read.
MAX_LINE_BYTES = 2**20


def _lines(f, path) -> Iterator[str]:
    """The lines of a text file opened as UTF-8, each at most :data:`MAX_LINE_BYTES` characters; a file
    that is not UTF-8, or holds a longer line, is a :class:`RecordError`."""
    try:
        for number, line in enumerate(iter(lambda: f.readline(MAX_LINE_BYTES + 1), ""), 1):
            if len(line) > MAX_LINE_BYTES:
                raise RecordError(f"{path}, line {number}: longer than {MAX_LINE_BYTES:,} characters; a "
                                  "record takes a few thousand")
            yield line
    except UnicodeDecodeError as e:
        raise RecordError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start}); records are JSON "
                          "Lines in UTF-8") from None


def iter_records(path: str | os.PathLike) -> Iterator[dict]:
    """The records of a JSON Lines file (or a pipe: ``<(cat games.jsonl)``), checked one by one (blank
    lines are skipped); a path that is a folder or a device is refused before it is opened."""
    try:
        check_input(path, "records file", streams=True)
    except InputPathError as e:
        raise RecordError(str(e)) from None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(_lines(f, path), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise RecordError(f"{path}, line {number}: not JSON ({e.msg} at column {e.colno})") from None
            except RecursionError:
                raise RecordError(f"{path}, line {number}: the JSON is nested too deeply") from None
            except ValueError as e:  # an integer of more than 4,300 digits
                raise RecordError(f"{path}, line {number}: {str(e)[:100]}") from None
            try:
                check_record(rec)
            except RecordError as e:
                raise RecordError(f"{path}, line {number}: {e}") from None
            yield rec


#: The most records :func:`load_records` keeps in memory (a record parsed takes about 16 KB: some
#: 1.6 GB); :func:`iter_records` reads any number, one at a time.
MAX_LOADED_RECORDS = 100_000


def _records_in(path, most: int) -> int:
    """An upper bound on the records of the file ``path`` (its lines that are not blank), counted in
    its bytes without parsing; the count stops once it passes ``most``. A pipe is not read (0)."""
    if not os.path.isfile(path):
        return 0
    count = 0
    with open(path, "rb") as f:
        newlines = 0
        for chunk in iter(lambda: f.read(2**23), b""):
            newlines += chunk.count(b"\n")
        if newlines + 1 <= most:  # few enough even if no line is blank: nothing more to count
            return newlines + 1
        f.seek(0)
        for line in iter(lambda: f.readline(MAX_LINE_BYTES + 1), b""):
            count += bool(line.strip())
            if count > most:
                break
    return count


def load_records(path: str | os.PathLike, max_records: int | None = None) -> list[dict]:
    """Every record of a JSON Lines file (see :func:`iter_records`), at most ``max_records`` of them
    (default :data:`MAX_LOADED_RECORDS`): a file of more is a :class:`RecordError` in one line, before
    any is parsed (a pipe's, once it has given that many)."""
    max_records = MAX_LOADED_RECORDS if max_records is None else max_records
    try:
        check_input(path, "records file", streams=True)
    except InputPathError as e:
        raise RecordError(str(e)) from None
    too_many = (f"{os.fspath(path)} holds more than {max_records:,} records, the most load_records keeps in "
                "memory; read them one at a time with doudizhu_env.records.iter_records, or split the file")
    if _records_in(path, max_records) > max_records:
        raise RecordError(too_many)
    recs: list[dict] = []
    for rec in iter_records(path):
        if len(recs) == max_records:
            raise RecordError(too_many)
        recs.append(rec)
    return recs


# ----------------------------------------------------------------------------
# checking
# ----------------------------------------------------------------------------


def check_record(rec) -> None:
    """Raise :class:`RecordError` unless ``rec`` has the fields and types of this format.

    This checks the shape only; :func:`replay` checks the moves and the result.
    """
    if not isinstance(rec, dict):
        raise RecordError(f"a record is a JSON object, got {type(rec).__name__}")
    if rec.get("format") != FORMAT:
        raise RecordError(f"not a game record: 'format' is {rec.get('format')!r}, expected {FORMAT!r}")
    if type(rec.get("version")) is not int or rec["version"] != VERSION:  # not true, not 1.0
        raise RecordError(f"unsupported record version {short(rec.get('version'))}; this reader knows "
                          f"the integer {VERSION}")
    missing = [k for k in _KEYS if k not in rec]
    if missing:
        raise RecordError(f"missing field(s) {missing}")
    rules = rules_of(rec)
    deal_ids(rec)
    check_seat("first_bidder", rec["first_bidder"], error=RecordError)
    most = rules.redeal_limit if rules.bidding else 0  # only an all-pass bidding redeals
    if not is_int(rec["redeals"]) or not 0 <= rec["redeals"] <= most:
        why = "the rules' redeal_limit" if rules.bidding else "rules without bidding never redeal"
        raise RecordError(f"'redeals' must be an int 0..{most} ({why}), got {short(rec['redeals'])}")
    players = rec.get("players")
    if players is not None and not (isinstance(players, list) and len(players) == 3
                                    and all(p is None or isinstance(p, str) for p in players)):
        raise RecordError(f"'players' must be a list of 3 names (strings or null), got {short(players)}")
    if not isinstance(rec["moves"], list):
        raise RecordError("'moves' must be a list of [seat, action] pairs")
    for i, move in enumerate(rec["moves"]):
        if not (isinstance(move, list) and len(move) == 2 and isinstance(move[1], str)):
            raise RecordError(f"move {i}: expected [seat, action name], got {short(move)}")
        check_seat(f"move {i}: seat", move[0], error=RecordError)
    if rec["escaped"] is not None:
        check_seat("escaped", rec["escaped"], error=RecordError)
    result = rec["result"]
    scores = result.get("scores") if isinstance(result, dict) else None
    if not isinstance(scores, list) or len(scores) != 3 or not all(is_int(x) for x in scores):
        raise RecordError("'result' must be an object with 'scores', three ints")


def rules_of(rec: dict) -> Rules:
    """The :class:`Rules` of a record."""
    if not isinstance(rec.get("rules"), dict):
        raise RecordError("'rules' must be an object of Rules fields")
    try:
        return Rules.from_dict(rec["rules"])
    except (TypeError, ValueError) as e:
        raise RecordError(f"bad 'rules': {e}") from None


def parse_card(name) -> int:
    """The card id (0..53) of a card name such as ``"7H"``, ``"TS"``, ``"X"``, ``"D"``."""
    if not isinstance(name, str):
        raise RecordError(f"a card is a string such as '7H' or 'X', got {name!r}")
    if name in ("X", "D"):
        return 52 + RANK_INDEX[name] - SMALL_JOKER
    suited = len(name) == 2 and name[0] in RANK_INDEX and name[1] in SUIT_CHARS
    if suited and RANK_INDEX[name[0]] < SMALL_JOKER:
        return 4 * RANK_INDEX[name[0]] + SUIT_CHARS.index(name[1])
    raise RecordError(f"bad card {name!r}; expected rank 3..9 T J Q K A 2 and suit {'/'.join(SUIT_CHARS)}, "
                      "or X / D for the jokers")


def deal_ids(rec: dict) -> np.ndarray:
    """The 54 card ids of a record's deal (seat 0, 1, 2, then the hole), checked to be one deck."""
    deal = rec.get("deal")
    if not isinstance(deal, dict) or not isinstance(deal.get("hands"), list) or len(deal["hands"]) != 3:
        raise RecordError("'deal' must be an object with 'hands' (three lists of cards) and 'hole'")
    parts = [*deal["hands"], deal.get("hole")]
    sizes = [len(p) if isinstance(p, list) else None for p in parts]
    if sizes != [HAND_SIZE] * 3 + [HOLE_SIZE]:
        raise RecordError(f"a deal has three hands of {HAND_SIZE} cards and {HOLE_SIZE} hole cards, "
                          f"got sizes {sizes}")
    ids = np.array([parse_card(c) for p in parts for c in p], dtype=np.int8)
    if len(set(ids.tolist())) != DECK_SIZE:
        twice = sorted({card_name(c) for c in ids if np.sum(ids == c) > 1})
        raise RecordError(f"the deal is not one deck: {twice} dealt more than once")
    landlord = deal.get("landlord")
    if landlord is not None:
        check_seat("deal.landlord", landlord, error=RecordError)
    return ids


# ----------------------------------------------------------------------------
# replaying
# ----------------------------------------------------------------------------


def start_state(rec: dict) -> engine.State:
    """The engine state of a record's deal before the first move (suits as recorded)."""
    check_record(rec)
    rules = rules_of(rec)
    ids = deal_ids(rec)
    landlord = rec["deal"].get("landlord")
    if not rules.bidding and landlord is None:
        raise RecordError("the rules have no bidding, so 'deal.landlord' must give the landlord")
    parts = [ids[s * HAND_SIZE:(s + 1) * HAND_SIZE] for s in range(3)] + [ids[3 * HAND_SIZE:]]
    text = [format_hand(np.bincount(card_rank(p), minlength=NUM_RANKS)) for p in parts]
    deal = engine.Deal((text[0], text[1], text[2]), text[3], rec["first_bidder"], landlord)
    state = engine.reset(0, 1, rules, deals=[deal])
    return dataclasses.replace(state, deal=ids[None, :].copy(), redeals=np.array([rec["redeals"]], np.int16))


def replay_states(rec: dict) -> Iterator[tuple[engine.State, int, str]]:
    """Step through a record: yields ``(state before the move, seat, action name)`` for every move.

    Raises :class:`RecordError` at the first move the rules or the record's
    own course forbid (wrong seat, unknown or illegal action, moves after the end).
    """
    state = start_state(rec)
    table = action_table(state.rules)
    for i, (seat, name) in enumerate(rec["moves"]):
        if state.done[0]:
            raise RecordError(f"move {i} ({seat}, {name!r}): the hand is already over")
        if seat != int(state.to_act[0]):
            raise RecordError(f"move {i} ({seat}, {name!r}): it is seat {int(state.to_act[0])}'s turn")
        action = _action_id(table, name, i)
        yield state, seat, name
        try:
            after = engine.step(state, np.array([action]))
        except engine.IllegalActionError as e:
            raise RecordError(f"move {i} ({seat}, {name!r}) is illegal: {e}") from None
        if int(after.history_len[0]) != int(state.history_len[0]) + 1 and not after.truncated[0]:
            raise RecordError(f"move {i}: everyone passed, so the cards would be dealt again, "
                              "but a record holds only the deal that was played")
        state = after
    yield state, -1, ""


def _action_id(table, name: str, i: int) -> int:
    """The id of a canonical action name (loose card strings are not accepted in records)."""
    try:
        action = table.index(name)
    except ValueError:
        action = -1
    if action < 0 or table.names[action] != name:
        raise RecordError(f"move {i}: {name!r} is not a canonical action name of these rules")
    return action


def replay(rec: dict) -> engine.State:
    """Replay a record through the engine; returns the final state, checked against the recorded result."""
    *_, (state, _, _) = replay_states(rec)
    return check_result(rec, state)


def check_result(rec: dict, state: engine.State) -> engine.State:
    """The final state of a record from the state after its last move (:func:`replay_states`' last),
    applying its escape, checked against the recorded result."""
    if rec["escaped"] is not None:
        if state.done[0]:
            raise RecordError(f"the moves finish the hand, but the record says seat {rec['escaped']} left it "
                              "('escaped' must be null for a hand played to the end)")
        state = engine.escape(state, np.array([rec["escaped"]]))
    if not state.done[0]:
        raise RecordError(f"the record ends after {len(rec['moves'])} moves, before the hand is over")
    got = result_of(state)
    want = rec["result"]
    diff = {k: (want.get(k), v) for k, v in got.items() if k in want and want[k] != v}
    if "scores" not in diff and list(want["scores"]) != got["scores"]:
        diff["scores"] = (want["scores"], got["scores"])
    if diff:
        detail = ", ".join(f"{k}: recorded {a!r}, replay gives {b!r}" for k, (a, b) in diff.items())
        raise RecordError(f"the moves do not give the recorded result ({detail})")
    return state
