"""Print recorded games move by move, every hand shown (records: ``docs/records.md``).

Usage::

    python -m doudizhu_table.replay games.jsonl             # every game of the file
    python -m doudizhu_table.replay games.jsonl --game 3    # the fourth game only
    python -m doudizhu_table.replay games.jsonl --list      # one line per game

Each game is replayed through the engine, so a record whose moves are illegal
or do not give its recorded result is reported (exit status 1) instead of printed.
"""

from __future__ import annotations

import argparse
import sys

from doudizhu_env import engine, records
from doudizhu_env.display import (
    Style,
    hole_ids,
    role_label,
    rules_label,
    score_lines,
    signs_fit,
    suited_hand,
)


def printable(name: str, limit: int = 40) -> str:
    """``name`` safe to print: control characters (ESC, OSC terminal sequences...) shown as ``?``,
    at most ``limit`` characters."""
    text = "".join(c if c.isprintable() else "?" for c in name)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def seat_names(rec: dict) -> list[str]:
    """``seat 0 (rule)`` style names of a record's seats (the players are optional)."""
    players = rec.get("players") or [None] * 3
    return [f"seat {s}" + (f" ({printable(p)})" if p else "") for s, p in enumerate(players)]


def _hands(state: engine.State, style: Style, names: list[str]) -> list[str]:
    width = max(len(n) for n in names)
    held = [suited_hand(state, 0, s) for s in range(3)]
    return [f"    {names[s]:<{width}} {role_label(state, s):<8} {len(held[s]):>2}: {style.cards(held[s])}"
            for s in range(3)]


def _landlord_line(state: engine.State, style: Style, names: list[str]) -> str:
    seat = int(state.landlord[0])
    return style(f"  {names[seat]} is the landlord, base {int(state.base[0])}; the hole cards "
                 f"{style.cards(hole_ids(state))} join the hand", "bold")


def format_game(rec: dict, style: Style, title: str = "game") -> list[str]:
    """The lines of one game: the deal, every move with the mover's cards left, the score."""
    names = seat_names(rec)
    rules = records.rules_of(rec)
    steps = list(records.replay_states(rec))
    final = records.check_result(rec, steps[-1][0])
    start = steps[0][0]
    redealt = f", after {rec['redeals']} passed-out deal(s)" if rec["redeals"] else ""
    lines = [style(f"{title}: rules {rules_label(rules)}", "bold"),
             f"  deal (first bidder {names[int(start.first_bidder[0])]}{redealt}):",
             *_hands(start, style, names), f"    hole: {style.cards(hole_ids(start))}"]
    if start.landlord[0] >= 0:
        lines.append(_landlord_line(start, style, names))
    for n, ((before, seat, name), (after, _, _)) in enumerate(zip(steps, steps[1:], strict=False), 1):
        lines.append(_move_line(n, before, after, seat, name, style, names))
        if before.landlord[0] < 0 <= after.landlord[0]:
            lines.append(_landlord_line(after, style, names))
            lines += _hands(after, style, names)
    lines.append(style(f"  {names[rec['escaped']]} left the hand", "yellow") if rec["escaped"] is not None
                 else "  hand over")
    lines += ["  " + line for line in score_lines(final, 0, names)]
    return lines


def _move_line(n: int, before, after, seat: int, name: str, style: Style, names: list[str]) -> str:
    """``  12. seat 1 (rule)  farmer    333444+5+7    left 9: 3S ...``; a trick's end is marked."""
    text = f"  {n:>3}. {names[seat]:<{max(len(x) for x in names)}} {role_label(before, seat):<8} "
    if before.phase[0] == engine.PLAY:
        if name == "pass":
            text += style("pass", "dim") + (style("   (table clear)", "dim") if after.leading[0] else "")
        else:
            left = suited_hand(after, 0, seat)
            text += f"{style(f'{name:<14}', 'bold')} left {len(left):>2}: {style.cards(left)}"
    else:
        text += style(name, "cyan")
    return text.rstrip()


def summary_line(i: int, rec: dict) -> str:
    """One line about game ``i``: players, landlord, base, multiplier, scores."""
    res = rec["result"]
    who = ", ".join(seat_names(rec))
    landlord = "-" if res.get("landlord") is None else f"seat {res['landlord']}"
    return (f"game {i}: {who} | landlord {landlord} base {res.get('base')} x{res.get('multiplier')} | "
            f"moves {len(rec['moves'])} | scores {res['scores']}")


def build_parser() -> argparse.ArgumentParser:
    """The command-line options."""
    p = argparse.ArgumentParser(prog="python -m doudizhu_table.replay", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="a JSON Lines file of game records")
    p.add_argument("--game", type=int, help="print only this game (0 is the first)")
    p.add_argument("--list", action="store_true", help="one summary line per game instead of the moves")
    p.add_argument("--no-color", action="store_true", help="plain text even on a terminal")
    return p


def main(argv=None) -> int:
    """Print the games asked for; returns the exit status (1 for a bad file or game number)."""
    args = build_parser().parse_args(argv)
    style = Style(sys.stdout.isatty() and not args.no_color, suits=signs_fit(sys.stdout))
    try:
        recs = records.load_records(args.file)
    except (OSError, records.RecordError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not recs:
        print(f"error: {args.file} holds no game records; expected JSON Lines written by --record",
              file=sys.stderr)
        return 1
    if args.game is not None and not 0 <= args.game < len(recs):
        print(f"error: {args.file} holds games 0..{len(recs) - 1}; no game {args.game}", file=sys.stderr)
        return 1
    for i in range(len(recs)) if args.game is None else [args.game]:
        try:
            if args.list:
                records.replay(recs[i])  # a summary of a record that lies is an error too
            lines = [summary_line(i, recs[i])] if args.list else format_game(recs[i], style, f"game {i}")
        except records.RecordError as e:
            print(f"error: {args.file}, game {i}: {e}", file=sys.stderr)
            return 1
        print("\n".join(lines) + ("" if args.list else "\n"))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # output piped into head and the like
        sys.stderr.close()
