"""doudizhu_table.session: what happens at a table, as events both tables render."""

from __future__ import annotations

import numpy as np

from doudizhu_env import engine
from doudizhu_env.actions import BID0, PASS
from doudizhu_env.display import Style, hole_ids
from doudizhu_table.session import Event, is_partner, move_events, opening_events
from doudizhu_table.terminal import Table
from doudizhu_table.web.game import WebGame


def _hand_events(seed: int, rules: str = "standard") -> tuple[list[Event], engine.State]:
    """Every event of one random hand, in order."""
    rng = np.random.default_rng(seed)
    state = engine.reset(seed, 1, rules)
    events = opening_events(state)
    while not state.done[0]:
        seat, action = int(state.to_act[0]), int(engine.sample_legal(state, rng)[0])
        after = engine.step(state, np.array([action]))
        events += move_events(state, after, seat, action)
        state = after
    return events, state


def test_a_hand_tells_its_moves_and_what_they_made_happen():
    for seed in range(20):
        events, final = _hand_events(seed)
        kinds = [e.kind for e in events]
        assert kinds[0] == "first_bidder"
        moves = [e for e in events if e.kind in ("bid", "double", "pass", "play")]
        assert len(moves) == int(final.history_len[0])  # one event per move
        lord = [e for e in events if e.kind == "landlord"]
        if final.landlord[0] >= 0:
            assert len(lord) == 1 and lord[0].seat == int(final.landlord[0])
            assert lord[0].hole == tuple(int(c) for c in hole_ids(final))
            assert lord[0].base == int(final.base[0])
        # a trick ends after two passes in a row, and the next event is the winner's lead
        for i, e in enumerate(events):
            if e.kind == "trick":
                assert events[i - 1].kind == events[i - 2].kind == "pass"
                assert events[i + 1].seat == e.seat


def test_without_bidding_the_deal_names_the_landlord():
    state = engine.reset(3, 1, "douzero")
    (event,) = opening_events(state)
    assert event.kind == "landlord" and event.at_start and event.seat == int(state.landlord[0])


def test_all_passing_redeals_and_names_the_next_first_bidder():
    state = engine.reset(0, 1)
    events = []
    for _ in range(3):
        seat = int(state.to_act[0])
        after = engine.step(state, np.array([BID0]))
        events += move_events(state, after, seat, BID0)
        state = after
    assert [e.kind for e in events] == ["bid", "bid", "bid", "redeal"]
    assert events[-1].seat == int(state.to_act[0]) and all(e.level == 0 for e in events[:3])


def test_partner_is_the_other_farmer_only():
    state = engine.reset(3, 1, "douzero")
    lord = int(state.landlord[0])
    farmers = [s for s in range(3) if s != lord]
    assert is_partner(state, farmers[1], farmers[0]) and is_partner(state, farmers[0], farmers[1])
    assert not is_partner(state, lord, farmers[0]) and not is_partner(state, farmers[0], lord)
    assert not is_partner(state, farmers[0], farmers[0])
    assert not any(is_partner(engine.reset(3, 1), s, 0) for s in range(3))  # no landlord yet


def test_both_tables_say_every_event():
    """The terminal and the web page render the same events: a line, and a log entry, each."""
    events, _ = _hand_events(5)
    table = Table(engine.reset(0, 1).rules, 0, {}, ["you", "a", "b"], Style(False), read=input,
                  write=lambda line: None)
    lines = [table.line_of(e) for e in events]
    game = WebGame(engine.reset(0, 1).rules, 0, {1: _Passer(), 2: _Passer()}, ["you", "a", "b"], 0, "g")
    entries = [game.entry_of(e) for e in events]
    assert len(lines) == len(entries) == len(events)
    for e, line, entry in zip(events, lines, entries, strict=True):
        assert line.strip() and entry["text"]
        if e.kind in ("bid", "double", "pass", "play"):
            assert entry["move"] == game.table.names[e.action]
        if e.kind == "pass":
            assert e.action == PASS and "pass" in line


class _Passer:
    """Bids nothing and passes when it may (the web game's agents for the rendering test)."""

    def reset(self):
        pass

    def act(self, view):
        ids, offsets = engine.legal_actions(view)
        return ids[offsets[:-1]]
