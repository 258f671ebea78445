"""Text rendering of a game, shared by the PettingZoo and Gymnasium environments.

The words for people (roles, doubling) come from :mod:`doudizhu_env.display`, as at the terminal
and web tables.
"""

from __future__ import annotations

from . import engine
from .actions import action_table
from .cards import format_hand
from .display import doubling_word, role_label
from .engine import PHASE_NAMES


def render_text(state: engine.State, perspective: int | None = None, game: int = 0) -> str:
    """The table of one game as a person sees it; ``perspective`` hides the other hands."""
    table = action_table(state.rules)
    s = {k: getattr(state, k)[game] for k in ("phase", "landlord", "base", "bids", "doubles", "hands",
                                              "history", "history_seat", "history_len", "to_act",
                                              "scores", "hole", "done")}
    lines = [f"Dou Dizhu | phase: {PHASE_NAMES[s['phase']]} | base {int(s['base'])} | "
             f"multiplier x{int(state.multiplier[game])}"]
    for seat in range(3):
        role = role_label(state, seat, game)
        cards = s["hands"][seat]
        shown = format_hand(cards) if perspective in (None, seat) else "?" * int(cards.sum())
        bid = f"bid {int(s['bids'][seat])}" if s["bids"][seat] >= 0 else ""
        dbl = doubling_word(state, seat, game) or ""
        marker = ">" if seat == s["to_act"] and not s["done"] else " "
        lines.append(f"{marker} player_{seat} {role:<8} {int(cards.sum()):>2} cards: {shown:<20} {bid} {dbl}")
    hole_shown = s["landlord"] >= 0 or perspective is None
    lines.append(f"  hole: {format_hand(s['hole']) if hole_shown else '???'}")
    n = int(s["history_len"])
    recent = range(max(0, n - 6), n)
    moves = [f"player_{s['history_seat'][i]}: {table.names[s['history'][i]]}" for i in recent]
    lines.append("  last moves: " + (", ".join(moves) if moves else "-"))
    if s["done"]:
        lines.append("  score: " + ", ".join(f"player_{i} {int(v):+d}" for i, v in enumerate(s["scores"])))
    return "\n".join(lines)


def emit(text: str, render_mode: str) -> str | None:
    """``"human"``: print the text (and return None); ``"ansi"``: return it."""
    if render_mode == "human":
        print(text)
        return None
    return text
