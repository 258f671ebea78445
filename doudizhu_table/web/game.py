"""One web game: a person at a seat against agents, and what the page may see of it.

The server (:mod:`doudizhu_table.web.server`) keeps a :class:`WebGame` per
browser session; every move goes through :meth:`WebGame.play` (an action id)
or :meth:`WebGame.play_cards` (the cards clicked), which the engine checks.
:func:`view_of` builds the JSON the page gets. Until the hand is over it reads
only the person's seat view (:func:`doudizhu_env.observation.seat_view`) and
the public history, plus the suits of the person's own cards and of the hole
cards once shown (suits are for display only), so no response can hold
another seat's hidden cards. When the hand is over every hand is shown.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from doudizhu_env import engine
from doudizhu_env.actions import action_table
from doudizhu_env.cards import NUM_RANKS, RANK_CHARS, SUIT_CHARS, card_rank, format_hand, parse_hand
from doudizhu_env.checks import is_int
from doudizhu_env.display import (
    dealt_ids,
    doubling_word,
    group_moves,
    hole_ids,
    kind_name,
    move_words,
    multiplier_parts,
    role_label,
    score_lines,
    suited_hand,
    trick_of,
    why_no_combination,
)
from doudizhu_env.driver import drive
from doudizhu_env.observation import seat_view

from ..session import Event, MoveError, is_partner, move_events, opening_events

#: The most cards one request may name (a hand holds at most 20).
MAX_CARDS = 20


class Ambiguous(MoveError):
    """Cards that read as several moves: ``options`` are their action ids."""

    def __init__(self, message: str, options: list[int]):
        super().__init__(message)
        self.options = options


def card_json(card_id: int) -> dict:
    """A physical card for the page: id, rank character, suit (``""`` for jokers), label."""
    card_id = int(card_id)
    rank = RANK_CHARS[int(card_rank(card_id))]
    if card_id >= 52:
        return {"id": card_id, "rank": rank, "suit": "", "label": "joker" if rank == "X" else "JOKER"}
    return {"id": card_id, "rank": rank, "suit": SUIT_CHARS[card_id % 4],
            "label": ("10" if rank == "T" else rank)}


def _cards_left(view: engine.State) -> list[int]:
    """Cards each seat holds, from public counts: dealt 17 (20 for the landlord) minus played."""
    landlord = int(view.landlord[0])
    return [17 + 3 * (s == landlord) - int(view.played[0, s].sum()) for s in range(3)]


class WebGame:
    """A hand at a web table: ``seat`` is the person's; ``agents`` maps the other seats to agents.

    One request at a time: whoever calls :meth:`play`, :meth:`play_cards`, :meth:`hint` or
    :func:`view_of` holds :attr:`lock` (the server does), so that no view or hint reads the
    game while the agents move.
    """

    def __init__(self, rules, seat: int, agents: dict, names: Sequence[str], seed: int, game_id: str):
        self.rules, self.seat, self.agents, self.names = rules, seat, agents, list(names)
        self.id, self.seed = game_id, seed
        self.table = action_table(rules)
        self.state = engine.reset(np.random.default_rng(seed), 1, rules)
        self.log: list[dict] = []
        self.lock = threading.Lock()
        for agent in agents.values():
            agent.reset()
        self._opening()
        self._advance()

    # -- moves ---------------------------------------------------------------

    @property
    def done(self) -> bool:
        return bool(self.state.done[0])

    def legal(self) -> list[int]:
        """The person's legal action ids (empty when it is not their turn)."""
        if self.done or int(self.state.to_act[0]) != self.seat:
            return []
        return [int(a) for a in engine.legal_actions(self.state)[0]]

    def play(self, action) -> None:
        """Play the person's action id; :class:`MoveError` (nothing changed) when it is not legal now."""
        if self.done:
            raise MoveError("the hand is over; start a new game")
        if int(self.state.to_act[0]) != self.seat:
            raise MoveError(f"it is seat {int(self.state.to_act[0])}'s turn, not yours")
        if not is_int(action) or not 0 <= action < len(self.table.names):
            raise MoveError(f"an action is an id in 0..{len(self.table.names) - 1}, got {str(action)[:40]!r}")
        if int(action) not in self.legal():
            raise MoveError(f"{self._words(action)} is not a legal move now; "
                            f"legal: {', '.join(self._words(a) for a in self.legal()[:12])}")
        self._step(int(action))
        self._advance()

    def play_cards(self, card_ids) -> None:
        """Play the cards the person clicked (ids of cards in their hand)."""
        if self.done:
            raise MoveError("the hand is over; start a new game")
        mine = set(suited_hand(self.state, 0, self.seat))
        if (not isinstance(card_ids, list) or len(card_ids) > MAX_CARDS
                or not all(is_int(c) for c in card_ids)):
            raise MoveError(f"cards are a list of at most {MAX_CARDS} card ids, got {str(card_ids)[:60]}")
        if len(set(card_ids)) != len(card_ids) or not set(card_ids) <= mine:
            raise MoveError("those are not cards in your hand; pick cards from your hand")
        if not card_ids:
            raise MoveError("no cards picked: pick cards, or pass")
        counts = np.bincount(card_rank(np.array(card_ids)), minlength=NUM_RANKS)
        same = self.table.readings(counts)
        options = [a for a in same if a in self.legal()]
        if len(options) == 1:
            return self.play(options[0])
        cards = format_hand(counts)
        if options:
            raise Ambiguous(f"{cards} can be played as {len(options)} moves; pick one", options)
        raise MoveError(self._why_not(cards, same))

    def _words(self, action) -> str:
        return move_words(self.rules, int(action))

    def _why_not(self, cards: str, same: list[int]) -> str:
        phase = int(self.state.phase[0])
        if int(self.state.to_act[0]) != self.seat:
            return f"it is seat {int(self.state.to_act[0])}'s turn, not yours"
        if phase != engine.PLAY:
            return f"it is time to {'bid' if phase == engine.BIDDING else 'double'}, not to play cards"
        if not same:
            return f"{cards} is not a combination under these rules{why_no_combination(parse_hand(cards))}"
        on = int(self.state.to_beat[0])
        if on < 0:
            return f"{cards} cannot be played now"
        return (f"{cards} does not beat {self.table.names[on]} ({kind_name(int(self.table.types[on]))}): "
                "play the same kind, higher, or a bomb; or pass")

    def hint(self) -> dict:
        """A suggested move (RuleAgent's choice on the person's view: the view names the person's
        seat) and the legal moves by kind; none when it is not the person's turn. The caller
        holds :attr:`lock` (a move of the agents must not change the state meanwhile)."""
        from agents.rule import RuleAgent

        legal = self.legal()
        if not legal:
            return {"suggestion": None, "legal": {}}
        action = int(RuleAgent().act(self.person_view())[0])
        if action not in legal:  # cannot happen: the agent answers a legal move of the view
            raise RuntimeError(f"the hint {action} is not one of the person's legal moves")
        return {"suggestion": self.action_json(action), "legal": group_moves(self.rules, legal)}

    def person_view(self) -> engine.State:
        """What the person's seat may see (every view built for the person names the seat)."""
        return seat_view(self.state, np.array([0]), seats=[self.seat])

    def _advance(self) -> None:
        """Let the agents move until it is the person's turn or the hand is over."""
        players = [self.agents[s] for s in range(3) if s != self.seat]
        others = iter(range(len(players)))
        seat_player = np.array([[-1 if s == self.seat else next(others) for s in range(3)]])
        for turn in drive(self.state, seat_player, players):  # until the person's turn or the end
            self._say(turn.before, turn.after, int(turn.before.to_act[0]), int(turn.actions[0]))
            self.state = turn.after

    def _step(self, action: int) -> None:
        before, seat = self.state, int(self.state.to_act[0])
        after = engine.step(before, np.array([action]))
        self._say(before, after, seat, action)
        self.state = after

    # -- what happened, in words ------------------------------------------------

    def _who(self, seat: int) -> str:
        return "you" if seat == self.seat else f"seat {seat} ({self.names[seat]})"

    def _opening(self) -> None:
        self.log += [self.entry_of(event) for event in opening_events(self.state)]

    def _say(self, before: engine.State, after: engine.State, seat: int, action: int) -> None:
        self.log += [self.entry_of(event) for event in move_events(before, after, seat, action)]

    def entry_of(self, event: Event) -> dict:
        """An event of the hand (:mod:`doudizhu_table.session`) as an entry of the page's log:
        ``seat``, ``kind``, ``text`` and, for a move, its name (``move``)."""
        who, seat, kind = self._who(event.seat), event.seat, event.kind
        if kind in ("bid", "double", "pass", "play"):
            name = self.table.names[event.action]
            if kind == "bid":
                text = f"{who}: {'no bid' if event.level == 0 else 'bid ' + str(event.level)}"
            elif kind == "double":
                word = "redouble" if event.redouble else "double"
                text = f"{who}: {word if event.doubled else 'no ' + word}"
            else:
                text = f"{who}: {name}"
            return {"seat": seat, "kind": kind, "text": text, "move": name}
        if kind == "first_bidder":
            return {"seat": seat, "kind": "start", "text": f"{who} bid first"}
        if kind == "landlord" and event.at_start:
            return {"seat": seat, "kind": "landlord", "text": f"{who}: landlord (no bidding)"}
        if kind == "landlord":
            hole = format_hand(np.bincount(card_rank(np.array(event.hole)), minlength=NUM_RANKS))
            return {"seat": seat, "kind": "landlord",
                    "text": f"{who}: landlord (base {event.base}), takes the hole cards {hole}"}
        if kind == "redeal":
            return {"seat": None, "kind": "redeal", "text": "nobody bid: the cards are dealt again"}
        return {"seat": seat, "kind": "trick",
                "text": f"{who} won the trick and lead" + ("" if seat == self.seat else "s")}

    def action_json(self, action: int) -> dict:
        """An action for the page: id, name, kind, and the person's cards it would play."""
        counts = self.table.counts[action].astype(int).copy()
        cards = []
        for c in suited_hand(self.state, 0, self.seat):
            r = int(card_rank(c))
            if counts[r] > 0:
                counts[r] -= 1
                cards.append(c)
        return {"id": action, "name": self.table.names[action], "words": self._words(action),
                "kind": kind_name(int(self.table.types[action])), "cards": cards}


def outcome(points: int) -> str:
    """The end of a hand for the person: ``you win: +4 points``, ``you lose: -2 points``."""
    if points == 0:
        return "no score: 0 points"
    return f"you {'win' if points > 0 else 'lose'}: {points:+d} point{'s' if abs(points) != 1 else ''}"


def view_of(game: WebGame) -> dict:
    """What the page shows: public facts, the person's own cards and legal moves; every hand at the end."""
    state, me = game.state, game.seat
    view = state if game.done else seat_view(state, np.array([0]), seats=[me])
    landlord = int(view.landlord[0])
    trick = trick_of(view)
    left = _cards_left(view)
    seats = [{"seat": s, "name": "you" if s == me else game.names[s], "role": role_label(view, s),
              "cards_left": left[s], "bid": int(view.bids[0, s]), "doubling": doubling_word(view, s),
              "partner": is_partner(state, s, me),
              "last": next((m for t, m in reversed(trick["moves"]) if t == s), None)}
             for s in range(3)]
    on = int(view.to_beat[0]) if view.phase[0] == engine.PLAY else -1
    out = {
        "game": game.id, "seat": me, "rules": "with bidding" if game.rules.bidding else "fixed landlord",
        "phase": engine.PHASE_NAMES[int(view.phase[0])], "done": game.done,
        "to_act": None if game.done else int(view.to_act[0]),
        "your_turn": not game.done and int(view.to_act[0]) == me,
        "landlord": landlord, "base": int(view.base[0]), "multiplier": int(view.multiplier[0]),
        "multiplier_parts": multiplier_parts(view), "seats": seats,
        "hand": [card_json(c) for c in suited_hand(state, 0, me)],
        "hole": [card_json(c) for c in hole_ids(state)] if landlord >= 0 else [],
        "trick": trick | {"to_beat": game.table.names[on] if on >= 0 else None,
                          "by": int(view.to_beat_seat[0]) if on >= 0 else None},
        "legal": [game.action_json(a) for a in game.legal()],
        "log": list(game.log),
    }
    if game.done:
        names = [f"you (seat {s})" if s == me else f"seat {s} ({game.names[s]})" for s in range(3)]
        out["result"] = {"scores": [int(x) for x in state.scores[0]], "lines": score_lines(state, 0, names),
                         "outcome": outcome(int(state.scores[0, me])),
                         "hands": [[card_json(c) for c in suited_hand(state, 0, s)] for s in range(3)],
                         "dealt": [[card_json(c) for c in sorted(dealt_ids(state, 0, s))] for s in range(3)]}
    return out
