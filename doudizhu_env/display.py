"""Text pieces of a table for people: suited cards, colour, last moves, how a score was made.

Shared by everything that shows a hand to people: the environments' text rendering
(:mod:`doudizhu_env.render`), the terminal table (:mod:`doudizhu_table.terminal`), the replay
printer (:mod:`doudizhu_table.replay`), the table session (:mod:`doudizhu_table.session`) and
the web table (:mod:`doudizhu_table.web.game`, :mod:`doudizhu_table.web.server`). Everything
reads an engine state; nothing here changes one. Suits are for display only: a play takes cards of the right
ranks from a hand, and the cards shown leaving are, per rank, the lowest
suits (``S H C D``) the seat still holds.
"""

from __future__ import annotations

import numpy as np

from . import engine
from .actions import NUM_SPECIAL, PASS, CombType, action_table
from .cards import CHAIN_TOP, HAND_SIZE, card_name, card_rank
from .rules import PRESETS, Rules

_ANSI = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36",
         "bold": "1", "dim": "2"}


#: Suit signs of the table for people (``card_name``'s letters S H C D are for records: ``D`` is
#: also the big joker there, so a person never sees a suit as a letter).
SUIT_SIGNS = "\u2660\u2665\u2663\u2666"  # spades, hearts, clubs, diamonds
#: What a person may type for a suit: the signs, outline forms included; they are dropped when
#: a move is read (suits do not matter to a move).
TYPED_SUITS = SUIT_SIGNS + "\u2664\u2661\u2667\u2662"


def signs_fit(stream) -> bool:
    """Whether ``stream`` (e.g. ``sys.stdout``) can encode the suit signs."""
    try:
        SUIT_SIGNS.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class Style:
    """ANSI colour when ``color`` is true, plain text otherwise; suits as signs when ``suits``
    (a terminal that can show them), else cards by rank only."""

    def __init__(self, color: bool, suits: bool = True):
        self.color, self.suits = color, suits

    def __call__(self, text: str, *styles: str) -> str:
        """``text`` in the given styles (``"red"``, ``"bold"``, ...) or unchanged without colour."""
        if not self.color or not styles:
            return text
        codes = ";".join(_ANSI[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def card(self, card_id: int) -> str:
        """One physical card: hearts and diamonds red, jokers magenta."""
        name = card_name(card_id)
        if card_id >= 52:
            return self(name, "magenta", "bold")
        shown = name[0] + (SUIT_SIGNS[card_id % 4] if self.suits else "")
        return self(shown, "red") if name[1] in "HD" else shown

    def cards(self, ids) -> str:
        """Cards sorted by rank then suit, space separated (``-`` for none)."""
        ids = sorted(int(c) for c in ids)
        return " ".join(self.card(c) for c in ids) if ids else "-"


def rules_label(rules: Rules) -> str:
    """A short name of a rule configuration: its preset, and the fields that differ from it."""
    def diff(preset: Rules) -> dict:
        return {k: v for k, v in rules.to_dict().items() if preset.to_dict()[k] != v}

    name = min(PRESETS, key=lambda n: len(diff(PRESETS[n])))
    changed = ", ".join(f"{k}={v}" for k, v in diff(PRESETS[name]).items())
    return f"{name} ({changed})" if changed else name


def dealt_ids(state: engine.State, game: int, seat: int) -> np.ndarray:
    """The card ids dealt to ``seat`` (with the hole cards once the seat is the landlord)."""
    ids = state.deal[game, seat * HAND_SIZE:(seat + 1) * HAND_SIZE]
    if seat == state.landlord[game]:
        ids = np.concatenate([ids, hole_ids(state, game)])
    return ids


def role_label(state: engine.State, seat: int, game: int = 0) -> str:
    """``landlord`` or ``farmer`` for ``seat``; ``""`` before a landlord exists."""
    landlord = int(state.landlord[game])
    return "" if landlord < 0 else ("landlord" if seat == landlord else "farmer")


def hole_ids(state: engine.State, game: int = 0) -> np.ndarray:
    """The three hole cards as dealt."""
    return state.deal[game, 3 * HAND_SIZE:]


def suited_hand(state: engine.State, game: int, seat: int) -> list[int]:
    """The card ids ``seat`` still holds, sorted: per rank, the first cards dealt minus those played."""
    ids = sorted(int(c) for c in dealt_ids(state, game, seat))
    played = state.played[game, seat].astype(int).copy()
    left = []
    for c in ids:
        rank = int(card_rank(c))
        if played[rank] > 0:
            played[rank] -= 1
        else:
            left.append(c)
    return left


def last_moves(state: engine.State, game: int = 0) -> list[str | None]:
    """Each seat's latest play-phase move of the hand (a combination or ``pass``), None before its first."""
    table = action_table(state.rules)
    out: list[str | None] = [None, None, None]
    for i in range(int(state.history_len[game])):
        a = int(state.history[game, i])
        if a == PASS or a >= NUM_SPECIAL:
            out[int(state.history_seat[game, i])] = table.names[a]
    return out


def trick_of(state: engine.State, game: int = 0) -> dict:
    """The current trick from the public history: its moves ``[seat, name]`` in order, who led it,
    and the trick before it with its winner (the seat that leads now, once two seats passed)."""
    names = action_table(state.rules).names
    moves: list = []
    previous, winner = [], None
    passes = 0
    for i in range(int(state.history_len[game])):
        a, seat = int(state.history[game, i]), int(state.history_seat[game, i])
        if a != PASS and a < NUM_SPECIAL:
            continue  # bids and doublings
        if passes == 2:  # two passes closed the trick: this move starts the next one
            previous, winner, moves = moves, _trick_winner(moves), []
        passes = passes + 1 if a == PASS else 0
        moves.append([seat, names[a]])
    if passes == 2:
        previous, winner, moves = moves, _trick_winner(moves), []
    return {"moves": moves, "leader": moves[0][0] if moves else None, "previous": previous,
            "previous_winner": winner}


def _trick_winner(moves: list) -> int:
    return next(s for s, m in reversed(moves) if m != "pass")


def doubling_word(state: engine.State, seat: int, game: int = 0) -> str | None:
    """What ``seat`` said at doubling: ``double``, ``no double``, ``redouble`` (the landlord),
    ``no redouble``; None before its turn."""
    said = int(state.doubles[game, seat])
    if said < 0:
        return None
    word = "redouble" if seat == int(state.landlord[game]) else "double"
    return word if said == 1 else "no " + word


def why_no_combination(counts: np.ndarray) -> str:
    """Why cards are no combination, to follow "... is not a combination": the kinds there are, or
    why cards that look like a chain are none (2s and jokers never join one; no gaps; long enough)."""
    ranks = np.flatnonzero(counts)
    width = set(counts[ranks].tolist())
    if len(ranks) < 3 or len(width) != 1:
        return " (a single, pair, trio with or without kickers, chain, plane, four with two, bomb or rocket)"
    if ranks[-1] > CHAIN_TOP:
        return ": chains stop at the ace (2s and jokers are never in a chain)"
    if np.any(np.diff(ranks) != 1):
        return ": a chain's ranks must follow each other with no gap"
    need = {1: 5, 2: 3, 3: 2}.get(int(width.pop()))
    return f": a chain of these needs at least {need} ranks" if need else ""


def group_moves(rules: Rules, actions) -> dict[str, list[str]]:
    """Action ids grouped by combination type, e.g. ``{"pair": ["33", "77"], "pass": ["pass"]}``."""
    table = action_table(rules)
    groups: dict[str, list[str]] = {}
    for a in actions:
        groups.setdefault(kind_name(int(table.types[a])), []).append(table.names[int(a)])
    return groups


#: Combination types as ``docs/rules.md`` names them (the others: the enum name, lower case).
_KIND_NAMES = {CombType.TRIPLE_SINGLE: "triple + single", CombType.TRIPLE_PAIR: "triple + pair",
               CombType.PLANE_SINGLES: "plane + singles", CombType.PLANE_PAIRS: "plane + pairs",
               CombType.FOUR_TWO_SINGLES: "four + two singles", CombType.FOUR_TWO_PAIRS: "four + two pairs"}


def kind_name(comb_type: int) -> str:
    """A combination type's name as the rules page gives it (``pair sequence``, ``triple + single``)."""
    kind = CombType(comb_type)
    return _KIND_NAMES.get(kind, kind.name.lower().replace("_", " "))


def move_words(rules: Rules, action: int) -> str:
    """An action in words: ``no bid``, ``bid 2``, ``double``, ``no double``, ``pass``, or the cards."""
    name = action_table(rules).names[int(action)]
    if name.startswith("bid"):
        return "no bid" if name == "bid0" else f"bid {name[3:]}"
    return name.replace("_", " ")


def multiplier_parts(state: engine.State, game: int = 0) -> list[str]:
    """What doubled the stake so far: ``["bomb x2", "rocket x2", "2 doublings x4", ...]``."""
    parts = []
    bombs = int(state.bombs[game])
    doubles = int(np.sum(state.doubles[game] == 1))
    if bombs:
        parts.append(f"{bombs} bomb{'s' * (bombs > 1)} x{2 ** bombs}")
    if state.rocket[game]:
        parts.append("rocket x2")
    if doubles:
        parts.append(f"{doubles} doubling{'s' * (doubles > 1)} x{2 ** doubles}")
    spring = int(state.spring[game])
    if spring:
        parts.append(("spring", "reverse spring")[spring - 1] + " x2")
    return parts


def score_lines(state: engine.State, game: int = 0, names=("seat 0", "seat 1", "seat 2")) -> list[str]:
    """How the hand's score was made: who won, base, multiplier and its parts, the points."""
    base, mult = int(state.base[game]), int(state.multiplier[game])
    scores = [int(x) for x in state.scores[game]]
    points = "points: " + ", ".join(f"{n} {s:+d}" for n, s in zip(names, scores, strict=True))
    if state.truncated[game]:
        limit = state.rules.redeal_limit
        return [f"no score: nobody bid on {limit + 1} deals in a row (the redeal limit is {limit})", points]
    parts = ", ".join(multiplier_parts(state, game)) or "nothing doubled"
    stake = f"stake = base {base} x multiplier {mult} ({parts}) = {base * mult}"
    escaped = int(state.escaped[game])
    if escaped >= 0:
        return [f"{names[escaped]} left the hand: -3 x stake, the others score 0",
                stake if base > 0 else "nobody had bid yet: stake 1", points]
    landlord = int(state.landlord[game])
    won = state.hands[game, landlord].sum() == 0
    who = f"{names[landlord]} (landlord) wins" if won else "the farmers win"
    rule = "landlord +2 x stake, each farmer -stake" if won else "landlord -2 x stake, each farmer +stake"
    return [f"{who}; the base is the winning bid" if state.rules.bidding else f"{who}; base 1 (no bidding)",
            stake, f"{rule}; {points}"]
