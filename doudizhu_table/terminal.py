"""Play Dou Dizhu at a terminal against two agents.

Usage::

    python -m doudizhu_table.terminal              # you at seat 0 against two pretrained agents
    doudizhu-play --opponents pretrained rule --seat 1 --hands 3
    doudizhu-play --opponents rule rule --rules douzero --seed 7 --no-color --record mine.jsonl

Opponents are agent specs (see ``agents.registry``: ``random``, ``rule``,
``pretrained``, ``dmc:PATH``, ...), seated after you in turn order.

At a prompt, type:

- a move in card notation: ``333444+5+7``, ``3334``, ``10JQKA``, ``XD``, or
  ``pass``; cards in any order, ``10`` or ``T`` for ten, ``X`` and ``D`` the
  small and big jokers. Cards are shown with suit signs (``Q♦``); typed
  moves may carry them or not (suits do not matter to a move), and no letter
  is a suit. When the cards read as several combinations you are asked which
  one you mean. A pass that is your only move is played for you
  (``--no-auto-pass`` to type it);
- ``?`` or ``hint``: your legal moves, grouped by type; ``help``: the commands;
- a bid ``0``..``3`` (``0`` or ``pass``: no bid) and ``y`` / ``n`` to double;
- ``quit`` or Ctrl-C to leave (asked again first), or end of input. Leaving in
  the middle of a hand is an escape: it scores -3 x stake for you and 0 for
  the others (``docs/rules.md``). Ctrl-C while an agent thinks (a ``search:``
  agent can take seconds) asks the same; staying asks the agent again.

``--record FILE`` appends every hand to a JSON Lines file of game records
(``docs/records.md``), a hand you left included, to replay with
``python -m doudizhu_table.replay FILE``.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Callable
from typing import NoReturn

import numpy as np

from doudizhu_env import engine, records
from doudizhu_env.actions import BID0, DOUBLE, NO_DOUBLE, PASS, action_table
from doudizhu_env.cards import format_hand, parse_hand
from doudizhu_env.checks import check_seed, short
from doudizhu_env.display import (
    TYPED_SUITS,
    Style,
    doubling_word,
    group_moves,
    hole_ids,
    multiplier_parts,
    role_label,
    rules_label,
    score_lines,
    signs_fit,
    suited_hand,
    trick_of,
    why_no_combination,
)
from doudizhu_env.driver import decide, drive
from doudizhu_env.files import check_outputs
from doudizhu_env.rules import Rules

from .session import Event, MoveError, is_partner, move_events, opening_events

QUIT_WORDS = ("quit", "exit")
HINT_WORDS = ("?", "hint", "hints")
HELP_WORDS = ("help", "h")
YES_WORDS = ("y", "yes")
COMMANDS = """  at a prompt you can type:
    cards        a move, e.g. 333444+5+7, 3334, 10JQKA, XD (jokers X and D); suits may be typed or not
    pass         when following (when pass is your only move it is played for you)
    ? or hint    your legal moves, by kind
    0..3         a bid (0: no bid);  y / n: double or not
    help         this list
    quit         leave the table (asked again: leaving a hand scores -3 x stake)"""
HINTS_PER_GROUP = 16


class Quit(Exception):
    """The person asked to leave the table; ``state`` is the hand they abandoned (None if none)."""

    def __init__(self, state: engine.State | None = None):
        super().__init__("the person left the table")
        self.state = state


# ----------------------------------------------------------------------------
# reading what the person types
# ----------------------------------------------------------------------------


def parse_move(state: engine.State, text: str) -> list[int]:
    """The legal action ids a typed move may mean (one, or several readings to choose from).

    Raises :class:`MoveError` for text that is no combination, cards the seat
    does not hold, a pass when leading, or a combination that does not beat the table.
    """
    table = action_table(state.rules)
    legal = set(engine.legal_actions(state)[0].tolist())
    word = text.strip().lower()
    if word in ("pass", "p"):
        if PASS not in legal:
            raise MoveError("you lead this trick, so you must play cards (pass is for following)")
        return [PASS]
    text = text.translate({ord(c): None for c in TYPED_SUITS})  # suits as shown: they do not matter
    try:
        counts = parse_hand(text)
    except ValueError as e:
        raise MoveError(f"cannot read {short(text.strip())}: {e}. Type cards like 333444+5+7, 3334 or "
                        "10JQKA, or pass; ? lists your moves") from None
    if counts.sum() == 0:
        raise MoveError("type some cards, pass, or ? for your moves")
    readings = _readings(table, counts, text)
    if not readings:
        why = why_no_combination(counts)
        raise MoveError(f"{format_hand(counts)} is not a combination under these rules{why}")
    hand = state.hands[0, state.to_act[0]]
    if np.any(counts > hand):
        missing = np.maximum(counts.astype(int) - hand, 0)
        raise MoveError(f"you do not hold {format_hand(counts)}: {format_hand(missing)} missing "
                        f"(your hand: {format_hand(hand)})")
    ok = [a for a in readings if a in legal]
    if not ok:
        on_table = table.names[int(state.to_beat[0])]
        raise MoveError(f"{table.names[readings[0]]} does not beat {on_table}; "
                        "play a higher combination of the same type and length, a bomb, or pass")
    return ok


def _readings(table, counts: np.ndarray, text: str) -> list[int]:
    """Action ids with exactly these cards; a ``+`` in the text fixes the body when that leaves any."""
    found = table.readings(counts)
    if "+" in text:
        body = parse_hand(text.split("+")[0])
        narrowed = [a for a in found if np.array_equal(table.body[a], body)]
        found = narrowed or found
    return found


def parse_bid(text: str, legal: list[int]) -> int:
    """A typed bid (``0``..``3``, ``bid2``, ``pass`` / ``no`` for no bid) as an action id among ``legal``."""
    word = text.strip().lower().removeprefix("bid")
    word = "0" if word in ("pass", "p", "no", "n", "none") else word
    if word not in ("0", "1", "2", "3"):
        raise MoveError(f"cannot read {short(text.strip())} as a bid: type 0 (no bid), 1, 2 or 3")
    action = BID0 + int(word)
    if action not in legal:
        allowed = ", ".join(str(a - BID0) for a in legal)
        raise MoveError(f"a bid must be above the highest bid so far; you may bid {allowed}")
    return action


def parse_double(text: str) -> int:
    """``y`` / ``yes`` / ``double`` or ``n`` / ``no`` as ``DOUBLE`` / ``NO_DOUBLE``."""
    word = text.strip().lower()
    if word in ("y", "yes", "double", "d"):
        return DOUBLE
    if word in ("n", "no", "no_double", "pass", "p"):
        return NO_DOUBLE
    raise MoveError(f"cannot read {short(text.strip())}: type y to double or n not to")


# ----------------------------------------------------------------------------
# the table
# ----------------------------------------------------------------------------


class Table:
    """A person at ``seat`` against agents at the other two seats, hand after hand.

    ``read(prompt)`` returns a typed line (``input`` by default) and ``write``
    prints a line; both can be replaced for other front ends. With ``auto_pass``
    a pass that is the person's only legal move is played for them.
    """

    def __init__(self, rules: Rules, seat: int, agents: dict, names: list[str], style: Style,
                 read: Callable[[str], str] = input, write: Callable[[str], None] = print,
                 auto_pass: bool = True):
        self.rules, self.seat, self.agents, self.names, self.style = rules, seat, agents, names, style
        self.read, self.write, self.auto_pass = read, write, auto_pass
        self.table = action_table(rules)
        self.header = ""

    # -- input ---------------------------------------------------------------

    def ask(self, prompt: str, in_hand: bool = False) -> str:
        """One line from the person; ``help`` shows the commands. The end of input raises
        :class:`Quit`; so do ``quit`` and Ctrl-C, after asking first when ``in_hand`` (leaving a
        hand costs -3 x stake)."""
        while True:
            try:
                line = self.read(self.style(prompt, "bold"))
            except EOFError:
                self.write("")
                raise Quit from None
            except KeyboardInterrupt:
                self.write("")
                line = "quit"
            word = line.strip().lower()
            if word in HELP_WORDS:
                self.write(COMMANDS)
                continue
            if word in QUIT_WORDS:
                if not in_hand or self._really_leave():
                    raise Quit
                continue
            return line

    def _really_leave(self) -> bool:
        """Whether the person confirms leaving the hand (Ctrl-C or the end of input there: yes)."""
        try:
            answer = self.read(self.style("leave this hand? it scores -3 x stake for you (y/n): ", "bold"))
        except (EOFError, KeyboardInterrupt):
            self.write("")
            return True
        return answer.strip().lower() in YES_WORDS

    def ask_until(self, prompt: str, parse: Callable[[str], int], state: engine.State) -> int:
        """Ask until ``parse`` accepts the answer; ``?`` shows the legal moves."""
        while True:
            line = self.ask(prompt, in_hand=True)
            if line.strip().lower() in HINT_WORDS:
                self.write_hints(state)
                continue
            try:
                return parse(line)
            except MoveError as e:
                self.write(self.style(f"  {e}", "red"))

    # -- one decision --------------------------------------------------------

    def decide(self, state: engine.State) -> int:
        """The action of the seat to act: the person's answer or the agent's choice."""
        seat = int(state.to_act[0])
        if seat != self.seat:
            agent = self.agents[seat]
            return int(decide(agent, state, np.array([0]))[0])
        legal = engine.legal_actions(state)[0].tolist()
        phase = int(state.phase[0])
        if self.auto_pass and phase == engine.PLAY and legal == [PASS]:
            on = self.table.names[int(state.to_beat[0])]
            self.write(self.style(f"  nothing in your hand beats {on}: you pass", "dim"))
            return PASS
        self.show(state)
        if phase == engine.BIDDING:
            high = int(state.base[0])
            hint = "0 = no bid" + (f", or above the highest bid {high}" if high else ", 1, 2 or 3")
            return self.ask_until(f"your bid ({hint}): ", lambda t: parse_bid(t, legal), state)
        if phase == engine.DOUBLING:
            word = "redouble" if seat == state.landlord[0] else "double"
            return self.ask_until(f"{word}? (y/n): ", parse_double, state)
        prompt = "your move (cards, pass, ? for hints): "
        return self.ask_until(prompt, lambda t: self.choose(state, t), state)

    def choose(self, state: engine.State, text: str) -> int:
        """The action a typed move means, asking which reading when there are several."""
        options = parse_move(state, text)
        if len(options) == 1:
            return options[0]
        self.write(f"  {format_hand(self.table.counts[options[0]])} can be played as:")
        for k, a in enumerate(options, 1):
            self.write(f"    {k}) {self.table.names[a]}  ({self._kind(a)})")

        def pick(answer: str) -> int:
            if answer.strip().isascii() and answer.strip().isdigit() and 1 <= int(answer) <= len(options):
                return options[int(answer) - 1]
            if answer.strip() in (self.table.names[a] for a in options):
                return self.table.index(answer.strip())
            raise MoveError(f"type a number 1..{len(options)}")

        return self.ask_until("which one? ", pick, state)

    def _kind(self, action: int) -> str:
        return next(iter(group_moves(self.rules, [action])))

    # -- output --------------------------------------------------------------

    def seat_label(self, seat: int) -> str:
        """``you`` or ``seat 1 (rule)``."""
        return "you" if seat == self.seat else f"seat {seat} ({self.names[seat]})"

    def verb(self, seat: int, verb: str) -> str:
        """``verb`` agreeing with the seat label: ``you bid``, ``seat 1 bids``; ``you are``, ``seat 1 is``."""
        if verb == "be":
            return "are" if seat == self.seat else "is"
        return verb if seat == self.seat else verb + "s"

    def show(self, state: engine.State) -> None:
        """The table as the person sees it: seats, bids, doublings, last moves, the hole, their hand."""
        s = self.style
        phase = engine.PHASE_NAMES[int(state.phase[0])]
        parts = ", ".join(multiplier_parts(state)) or "nothing doubled yet"
        base = f"base {int(state.base[0])}" if state.base[0] > 0 else "no bid yet"
        self.write(s(f"--- {self.header} | {phase} | {base} | "
                     f"multiplier x{int(state.multiplier[0])} ({parts}) ---", "cyan"))
        trick = trick_of(state)["moves"]
        for seat in range(3):
            self.write(self._seat_line(state, seat, next((m for t, m in reversed(trick) if t == seat), None)))
        if state.landlord[0] >= 0:
            self.write(f"  hole cards: {s.cards(hole_ids(state))}")
        if state.phase[0] == engine.PLAY:
            on, by = int(state.to_beat[0]), int(state.to_beat_seat[0])
            partner = ", your partner" if is_partner(state, by, self.seat) else ""
            self.write("  you lead: play any combination" if on < 0 else
                       f"  to beat: {s(self.table.names[on], 'bold')} by {self.seat_label(by)}{partner}")
        mine = suited_hand(state, 0, self.seat)
        self.write(f"  your hand ({len(mine)}): {s.cards(mine)}")

    def _seat_line(self, state: engine.State, seat: int, last: str | None) -> str:
        s = self.style
        role = role_label(state, seat) + (" (partner)" if is_partner(state, seat, self.seat) else "")
        cards = int(state.hands[0, seat].sum())
        bid = int(state.bids[0, seat])
        dbl = doubling_word(state, seat) or ""
        marker = ">" if seat == state.to_act[0] and not state.done[0] else " "
        count = f"{cards:>2} card{'s' * (cards != 1)}".ljust(8)
        count = s(count, "yellow", "bold") if cards <= 2 else count
        line = (f"{marker} {self.seat_label(seat):<22} {role:<18} {count} "
                f"{('bid ' + str(bid)) if bid >= 0 else '':<6} {dbl:<12} this trick: {last or '-'}")
        return s(line, "green") if seat == self.seat else line

    def write_hints(self, state: engine.State) -> None:
        """The legal moves of the seat to act, grouped by type."""
        ids = engine.legal_actions(state)[0]
        self.write(f"  legal moves ({len(ids)}):")
        for kind, names in group_moves(self.rules, ids).items():
            more = f" ... ({len(names) - HINTS_PER_GROUP} more)" if len(names) > HINTS_PER_GROUP else ""
            self.write(f"    {kind}: {' '.join(names[:HINTS_PER_GROUP])}{more}")

    def announce(self, before: engine.State, after: engine.State, seat: int, action: int) -> None:
        """Say what a seat did, and what followed (the landlord, a redeal, a cleared table)."""
        for event in move_events(before, after, seat, action):
            self.write(self.line_of(event))

    def line_of(self, event: Event) -> str:
        """An event of the hand (:mod:`doudizhu_table.session`) as the terminal says it."""
        s, who, seat = self.style, self.seat_label(event.seat), event.seat
        if event.kind == "bid":
            return f"  {who}: {'no bid' if event.level == 0 else 'bid ' + str(event.level)}"
        if event.kind == "double":
            word = "redouble" if event.redouble else "double"
            return f"  {who}: {word if event.doubled else 'no ' + word}"
        if event.kind == "pass":
            return s(f"  {who}: pass", "dim")
        if event.kind == "play":
            left, name = event.cards_left, self.table.names[event.action]
            return f"  {who}: {s(name, 'bold')}  ({left} card{'s' * (left != 1)} left)"
        if event.kind == "redeal":
            again = "nobody bid: the cards are dealt again"
            return s(f"  {again}; {who} {self.verb(seat, 'bid')} first", "yellow")
        if event.kind == "landlord" and event.at_start:
            return f"{self.header}: {who} {self.verb(seat, 'be')} the landlord (no bidding)"
        if event.kind == "landlord":
            return s(f"  {who} {self.verb(seat, 'be')} the landlord (base {event.base}); hole cards "
                     f"{s.cards(list(event.hole))}", "bold")
        if event.kind == "first_bidder":
            return f"{self.header}: {who} {self.verb(seat, 'bid')} first"
        return s(f"  -- trick over: {who} won it and {self.verb(seat, 'lead')} --", "yellow")

    # -- a hand --------------------------------------------------------------

    def play_hand(self, state: engine.State) -> engine.State:
        """Play one hand to its end; on :class:`Quit` mid-hand the person escapes and it ends at once.

        Ctrl-C while an agent thinks is Ctrl-C at a prompt: the person is asked whether to leave
        the hand (a second Ctrl-C or the end of input: yes). Leaving is the escape of a prompt (the
        hand ends, is scored and recorded); staying asks the agent again from the same position."""
        for agent in self.agents.values():
            agent.reset()
        self._opening(state)
        players = [_Person(self), *(self.agents[s] for s in range(3) if s != self.seat)]
        others = iter(range(1, 3))
        seat_player = np.array([[0 if s == self.seat else next(others) for s in range(3)]])
        while True:
            try:
                for turn in drive(state, seat_player, players):
                    self.announce(turn.before, turn.after, int(turn.before.to_act[0]), int(turn.actions[0]))
                    state = turn.after
                break
            except KeyboardInterrupt:  # an agent was thinking (the person's prompts take their own)
                seat = int(state.to_act[0])
                thinking = seat != self.seat and not state.done[0]
                who = self.seat_label(seat)
                self.write("")
                self.write(self.style(f"  interrupted{f' while {who} was thinking' if thinking else ''}",
                                      "yellow"))
                if self._really_leave():
                    self._leave(state)
                if thinking:
                    self.write(f"  {who} thinks again")
            except Quit:
                self._leave(state)
        self.finish(state)
        return state

    def _leave(self, state: engine.State) -> NoReturn:
        """The person escapes the hand of ``state``: it ends at once, is shown, and :class:`Quit`
        carries it to be scored and recorded."""
        state = engine.escape(state, np.array([self.seat]))
        self.finish(state)
        raise Quit(state) from None

    def _opening(self, state: engine.State) -> None:
        for event in opening_events(state):
            self.write(self.line_of(event))

    def finish(self, state: engine.State) -> None:
        """The final score of the hand and how it was made."""
        self.write(self.style(f"=== {self.header} over ===", "cyan", "bold"))
        names = [self.seat_label(s) for s in range(3)]
        for line in score_lines(state, 0, names):
            self.write("  " + line)
        width = max(len(n) for n in names)
        for seat in range(3):
            left = suited_hand(state, 0, seat)
            self.write(f"  {names[seat]:<{width}} still held ({len(left)}): {self.style.cards(left)}")


# ----------------------------------------------------------------------------
# a session: several hands, the running total, the command line
# ----------------------------------------------------------------------------


class _Person:
    """The person at a :class:`Table`, as a player of the driver: asked on the one-game state as
    it is (the table shows only the person's own cards and what is public)."""

    needs_view = False

    def __init__(self, table: Table):
        self.table = table

    def act(self, state: engine.State) -> np.ndarray:
        return np.array([self.table.decide(state)])


def play_session(table: Table, seed: int, hands: int, record: str | None = None) -> list[int]:
    """Play ``hands`` hands (the first bidder moving on each hand); returns the running total per seat.

    Each finished (or abandoned) hand is appended to ``record`` at once. :class:`Quit` passes through.
    """
    totals = [0, 0, 0]
    state = engine.reset(seed, 1, table.rules)
    players = [("human" if s == table.seat else table.names[s]) for s in range(3)]
    for k in range(hands):
        table.header = f"hand {k + 1} of {hands}"
        if k:
            state = engine.reset_done(state)
        try:
            state = table.play_hand(state)
        except Quit as q:
            if q.state is not None:
                _tally(table, q.state, totals, k + 1, record, players, seed)
            raise
        _tally(table, state, totals, k + 1, record, players, seed)
        if k + 1 < hands:
            table.ask(f"press Enter for hand {k + 2} of {hands} (or quit): ")
    return totals


def _tally(table: Table, state: engine.State, totals: list[int], played: int, record: str | None,
           players: list[str], seed: int) -> None:
    """Add a finished hand to the running total (and the record file), and show the total."""
    for s in range(3):
        totals[s] += int(state.scores[0, s])
    if record:
        rec = records.record_from_state(state, 0, players, {"source": "play", "hand": played, "seed": seed})
        records.save_records([rec], record, append=True)
    scores = ", ".join(f"{table.seat_label(s)} {totals[s]:+d}" for s in range(3))
    table.write(table.style(f"running total after {played} hand{'s' * (played > 1)}: {scores}", "bold"))


def build_parser() -> argparse.ArgumentParser:
    """The command-line options."""
    p = argparse.ArgumentParser(prog="doudizhu-play", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--opponents", nargs=2, metavar="AGENT", default=["pretrained", "pretrained"],
                   help="agent specs of the two other seats, in turn order after yours (default: pretrained)")
    p.add_argument("--seat", type=int, choices=(0, 1, 2), default=0, help="your seat (default 0)")
    p.add_argument("--rules", default="standard", help="rules preset: standard or douzero")
    p.add_argument("--seed", type=int, help="seed of the deals and the agents (default: drawn and shown)")
    p.add_argument("--hands", type=int, default=1, help="hands to play (default 1)")
    p.add_argument("--no-color", action="store_true", help="plain text even on a colour terminal")
    p.add_argument("--record", help="append every hand to this JSON Lines file (docs/records.md)")
    p.add_argument("--no-auto-pass", action="store_true",
                   help="type pass yourself even when it is your only move")
    return p


def make_opponents(specs: list[str], rules: Rules, seat: int, seed: int) -> tuple[dict, list[str]]:
    """Agents for the two seats after ``seat`` and every seat's name (imports ``agents`` only now)."""
    from agents.registry import make_agent

    agents, names = {}, ["you"] * 3
    for k, spec in enumerate(specs, 1):
        other = (seat + k) % 3
        agents[other] = make_agent(spec, rules=rules, seed=[seed, other])
        names[other] = spec
    return agents, names


def main(argv=None) -> int:
    """Sit at the table; returns the exit status (0; 2 when the options cannot be used; 130 on
    Ctrl-C before the first hand)."""
    progress = {"set_up": False}
    try:
        return _main(argv, progress)
    except KeyboardInterrupt:
        if progress["set_up"]:  # between prompts, outside a hand (a hand takes its own Ctrl-C)
            print("\ninterrupted: you left the table", file=sys.stderr)
        else:
            print("\ninterrupted before the table was set up", file=sys.stderr)
        return 130


def _main(argv=None, progress: dict | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.hands < 1:
        print("error: --hands must be at least 1", file=sys.stderr)
        return 2
    seed = secrets.randbelow(10**6) if args.seed is None else args.seed
    try:
        from agents.registry import spec_files

        check_seed(seed, "--seed")
        check_outputs({"--record": args.record}, inputs=spec_files(args.opponents))  # not after a hand
        rules = Rules.preset(args.rules)
        if "pretrained" in args.opponents and rules != Rules.preset("standard"):
            raise ValueError(f"the pretrained agent plays the standard rules only, not --rules {args.rules}; "
                             "choose other opponents, e.g. --opponents rule rule")
        agents, names = make_opponents(args.opponents, rules, args.seat, seed)
    except (ValueError, ImportError, OSError) as e:
        print(f"error: cannot set up the table: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    _line_editing()
    style = Style(sys.stdout.isatty() and not args.no_color, suits=signs_fit(sys.stdout))
    table = Table(rules, args.seat, agents, names, style, write=lambda line: print(line, flush=True),
                  auto_pass=not args.no_auto_pass)
    if progress is not None:
        progress["set_up"] = True
    print(style(f"Dou Dizhu, rules {rules_label(rules)}, seed {seed}: you are seat {args.seat}; "
                f"type ? for your moves, help for the commands, quit to leave", "bold"))
    try:
        play_session(table, seed, args.hands, args.record)
    except Quit:
        print("you left the table")
    return 0


def _line_editing() -> None:
    """Arrow keys and history at the prompts where the readline module exists."""
    try:
        import readline  # noqa: F401  (imported for its effect on input())
    except ImportError:
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
