"""The terminal table: move parsing, and whole hands driven through a pseudo-terminal (pexpect)."""

import io
import os
import re
import subprocess
import sys
import tomllib

import numpy as np
import pytest
from helpers import ROOT

from doudizhu_env import engine, records
from doudizhu_env.actions import BID0, DOUBLE, NO_DOUBLE, PASS, action_table
from doudizhu_env.cards import DECK_COUNTS, format_hand, parse_hand
from doudizhu_env.display import Style
from doudizhu_env.rules import Rules
from doudizhu_table import terminal

PROMPTS = {
    "bid": r"your bid \([^\n]*\): ",
    "double": r"(re)?double\? \(y/n\): ",
    "move": r"your move \(cards, pass, \? for hints\): ",
    "which": r"which one\? ",
    "next": r"press Enter for hand \d+ of \d+ \(or quit\): ",
}


# ----------------------------------------------------------------------------
# reading moves (no terminal)
# ----------------------------------------------------------------------------


def scripted_state(mine: str, rules: str = "douzero"):
    """A hand where seat 0 (the landlord, no bidding) holds ``mine`` and the hole ``QKA``, to lead."""
    rest = DECK_COUNTS - parse_hand(mine) - parse_hand("QKA")
    others = format_hand(rest)
    deal = engine.Deal((mine, others[:17], others[17:]), "QKA", 0, 0)
    return engine.reset(0, 1, rules, deals=[deal])


def names(state, ids):
    return [action_table(state.rules).names[a] for a in ids]


def test_parse_move_readings_and_errors():
    state = scripted_state("333444555666789TJ")
    assert names(state, terminal.parse_move(state, "3334")) == ["333+4"]
    assert names(state, terminal.parse_move(state, "10JQKA")) == ["TJQKA"]
    # the body does not fit: all readings
    assert names(state, terminal.parse_move(state, " 4+333 ")) == ["333+4"]
    several = names(state, terminal.parse_move(state, "333444555666"))
    assert sorted(several) == sorted(["333444555666", "333444555+6+6+6", "444555666+3+3+3"])
    assert names(state, terminal.parse_move(state, "444555666+3+3+3")) == ["444555666+3+3+3"]
    for text, message in [("pass", "you lead this trick"), ("ZZ", "cannot read 'ZZ'"),
                          ("34", "not a combination"), ("2222", "you do not hold 2222: 2222 missing"),
                          ("", "type some cards")]:
        with pytest.raises(terminal.MoveError, match=message):
            terminal.parse_move(state, text)
    after = engine.step(state, np.array([action_table(state.rules).index("J")]))  # seat 1 must beat J
    assert terminal.parse_move(after, "pass") == [PASS]
    hand1 = format_hand(after.hands[0, 1])
    low = hand1[0]
    with pytest.raises(terminal.MoveError, match=f"{low} does not beat J"):
        terminal.parse_move(after, low)


def test_parse_bid_and_double():
    legal = [BID0, BID0 + 2, BID0 + 3]
    assert terminal.parse_bid("0", legal) == BID0 and terminal.parse_bid("pass", legal) == BID0
    assert terminal.parse_bid("bid3", legal) == BID0 + 3
    with pytest.raises(terminal.MoveError, match="above the highest bid so far; you may bid 0, 2, 3"):
        terminal.parse_bid("1", legal)
    with pytest.raises(terminal.MoveError, match="cannot read 'four'"):
        terminal.parse_bid("four", legal)
    assert terminal.parse_double("Y") == DOUBLE and terminal.parse_double("no") == NO_DOUBLE
    with pytest.raises(terminal.MoveError, match="type y to double"):
        terminal.parse_double("maybe")


def test_table_asks_which_reading_and_retries():
    state = scripted_state("333444555666789TJ")
    answers = iter(["9", "2"])
    out = []
    table = terminal.Table(state.rules, 0, {}, ["you", "a", "b"], Style(False), read=lambda p: next(answers),
                       write=out.append)
    chosen = table.choose(state, "333444555666")
    options = terminal.parse_move(state, "333444555666")
    assert chosen == options[1]
    text = "\n".join(out)
    assert "333444555666 can be played as:" in text and "1) " in text and "3) " in text
    assert "type a number 1..3" in text


def test_unicode_digits_and_huge_lines_are_answered_briefly():
    state = scripted_state("333444555666789TJ")
    answers = iter(["\u00b2", "1"])  # a superscript two: str.isdigit accepts it, int() does not
    out = []
    table = terminal.Table(state.rules, 0, {}, ["you", "a", "b"], Style(False), read=lambda p: next(answers),
                       write=out.append)
    assert table.choose(state, "333444555666") == terminal.parse_move(state, "333444555666")[0]
    assert "type a number 1..3" in "\n".join(out)
    parsers = (lambda t: terminal.parse_move(state, t), lambda t: terminal.parse_bid(t, [BID0]),
               terminal.parse_double)
    for parse in parsers:
        with pytest.raises(terminal.MoveError) as err:
            parse("z" * 1_000_000)
        assert len(str(err.value)) < 400


@pytest.mark.parametrize("answers, leaves, asks", [
    (["quit", "y"], True, 1),                           # asked again, then yes
    ([KeyboardInterrupt, "yes"], True, 1),              # Ctrl-C asks too
    ([KeyboardInterrupt, KeyboardInterrupt], True, 1),  # a second Ctrl-C leaves
    (["quit", "n", EOFError], True, 1),                 # stays, then the input ends: leaves, not asked
    ([EOFError], True, 0),
    (["quit", "n", "3334"], False, 1),                  # stays and plays
    (["help", "3334"], False, 0),
])
def test_leaving_a_hand_is_asked_first(answers, leaves, asks):
    state = scripted_state("333444555666789TJ")
    helped = "help" in answers
    answers, prompts, lines = iter(answers), [], []

    def read(prompt):
        prompts.append(prompt)
        answer = next(answers)
        if isinstance(answer, type) and issubclass(answer, BaseException):
            raise answer
        return answer
    table = terminal.Table(state.rules, 0, {}, ["you", "a", "b"], Style(False), read=read, write=lines.append)
    if leaves:
        with pytest.raises(terminal.Quit):
            table.decide(state)
    else:
        assert names(state, [table.decide(state)]) == ["333+4"]
    assert sum(p.startswith("leave this hand? it scores -3 x stake") for p in prompts) == asks
    assert (terminal.COMMANDS in lines) == helped


class NoBidder:
    """An agent that never bids and otherwise plays at random."""

    def __init__(self):
        self.rng = np.random.default_rng(0)

    def reset(self):
        pass

    def act(self, view):
        return np.where(view.phase == engine.BIDDING, BID0, engine.sample_legal(view, self.rng))


def test_passed_out_deals_are_dealt_again_then_truncated(tmp_path):
    rules = Rules.preset("standard", redeal_limit=1)
    out = []
    table = terminal.Table(rules, 0, {1: NoBidder(), 2: NoBidder()}, ["you", "a", "b"], Style(False),
                       read=lambda prompt: "0", write=out.append)
    path = tmp_path / "t.jsonl"
    totals = terminal.play_session(table, seed=0, hands=1, record=str(path))
    text = "\n".join(out)
    assert text.count("nobody bid: the cards are dealt again") == 1
    assert "no score: nobody bid on 2 deals in a row (the redeal limit is 1)" in text
    assert totals == [0, 0, 0]
    (rec,) = records.load_records(path)
    assert rec["result"]["truncated"] and rec["redeals"] == 1 and rec["players"] == ["human", "a", "b"]
    records.replay(rec)


def test_console_script_and_lazy_agents():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, func = scripts["doudizhu-play"].split(":")
    assert module == "doudizhu_table.terminal" and callable(getattr(terminal, func))
    code = ("import sys, doudizhu_table.terminal, doudizhu_table.replay, doudizhu_env.records; "
            "assert not [m for m in sys.modules if m.split('.')[0] == 'agents'], 'agents imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_bad_options_give_a_message_not_a_traceback(capsys):
    assert terminal.main(["--opponents", "nosuch", "rule", "--seed", "1"]) == 2
    assert "cannot set up the table: unknown agent 'nosuch'" in capsys.readouterr().err
    assert terminal.main(["--hands", "0"]) == 2


# ----------------------------------------------------------------------------
# through a pseudo-terminal
# ----------------------------------------------------------------------------

pexpect = pytest.importorskip("pexpect")


def spawn(*args, timeout=60):
    env = dict(os.environ, TERM="dumb", PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    child = pexpect.spawn(sys.executable, ["-m", "doudizhu_table.terminal", *args], cwd=str(ROOT), env=env,
                          encoding="utf-8", timeout=timeout, dimensions=(50, 250))
    child.logfile_read = io.StringIO()  # the whole transcript, as the person saw it
    return child


def expect_prompt(child):
    """Wait for the next prompt; returns its kind, or "end" when the program exits."""
    kinds = list(PROMPTS)
    i = child.expect([PROMPTS[k] for k in kinds] + [pexpect.EOF])
    return kinds[i] if i < len(kinds) else "end"


def hints(child) -> dict[str, list[str]]:
    """Ask for the legal moves and read them back, by type."""
    child.sendline("?")
    child.expect(PROMPTS["move"])
    groups = dict(re.findall(r"^ {4}([a-z ]+): ([^\n]*?)\s*$", child.before, flags=re.M))
    assert groups, child.before
    return {k: [m for m in v.split() if not m.startswith(("...", "("))] for k, v in groups.items()}


@pytest.mark.integration
def test_whole_hands_at_the_terminal(tmp_path):
    path = tmp_path / "mine.jsonl"
    child = spawn("--opponents", "rule", "rule", "--seed", "4", "--hands", "2", "--no-color",
                  "--record", str(path), "--seat", "1")
    seen = {"bad move": 0, "bad bid": 0, "hint": 0, "pass": 0, "bid": 0, "move": 0}
    kind = expect_prompt(child)
    while kind != "end":
        if kind == "bid":
            if not seen["bad bid"]:
                child.sendline("seven")
                child.expect("cannot read 'seven' as a bid")
                seen["bad bid"] += 1
                child.expect(PROMPTS["bid"])
            child.sendline("3")
            seen["bid"] += 1
        elif kind == "double":
            child.sendline("n")
        elif kind == "next":
            child.sendline("")
        else:
            if not seen["bad move"]:
                child.sendline("3Z")
                child.expect("cannot read '3Z': bad card character 'Z'")
                child.expect(PROMPTS["move"])
                seen["bad move"] += 1
            moves = hints(child)
            seen["hint"] += 1
            seen["move"] += 1
            move = "pass" if "pass" in moves else next(iter(moves.values()))[0]
            seen["pass"] += move == "pass"
            child.sendline(move)
        kind = expect_prompt(child)
    child.close()
    assert child.exitstatus == 0
    assert all(seen.values()), seen
    recs = records.load_records(path)
    assert len(recs) == 2
    totals = [0, 0, 0]
    for k, rec in enumerate(recs):
        assert rec["players"] == ["rule", "human", "rule"] and rec["meta"]["hand"] == k + 1
        assert rec["escaped"] is None and rec["result"]["winner"] is not None
        final = records.replay(rec)
        totals = [t + int(s) for t, s in zip(totals, final.scores[0], strict=True)]
    if not recs[1]["redeals"]:  # the first bidder moves one seat on from hand to hand
        assert recs[1]["first_bidder"] == (recs[0]["first_bidder"] + 1) % 3
    text = child.logfile_read.getvalue()
    assert (f"running total after 2 hands: seat 0 (rule) {totals[0]:+d}, you {totals[1]:+d}, "
            f"seat 2 (rule) {totals[2]:+d}") in text
    auto = text.count(": you pass")  # a pass that was the only move, played without asking
    assert text.count("you: pass") == seen["pass"] + auto


@pytest.mark.integration
def test_transcript_shows_the_table_and_the_score(tmp_path):
    """One hand, read back whole: the seats, hole cards, the multiplier, the score and how it was made."""
    child = spawn("--opponents", "random", "random", "--seed", "9", "--no-color")
    kind = expect_prompt(child)
    while kind != "end":
        if kind == "bid":
            child.sendline("3")
        elif kind == "double":
            child.sendline("y")
        else:
            moves = hints(child)
            child.sendline("pass" if "pass" in moves else next(iter(moves.values()))[0])
        kind = expect_prompt(child)
    child.close()
    text = child.logfile_read.getvalue()
    assert child.exitstatus == 0
    assert "you: bid 3" in text and "you are the landlord (base 3); hole cards " in text
    card = "(?:[2-9TJQKA][\u2660\u2665\u2663\u2666]|[XD])"  # a rank and a suit sign, or a joker
    assert re.search(rf"your hand \(20\): ({card} ){{19}}{card}", text)
    assert re.search(r"seat 1 \(random\) +farmer +\d+ cards", text)
    assert re.search(r"\| play \| base 3 \| multiplier x\d+ \(", text)
    assert re.search(rf"^  hole cards: ({card} ){{2}}{card}\s*$", text, flags=re.M)
    assert re.search(r"still held \(\d+\):", text) and text.count("still held") == 3
    assert "=== hand 1 of 1 over ===" in text
    assert re.search(r"stake = base 3 x multiplier \d+ \(.*\) = \d+", text)
    assert re.search(r"points: you [+-]\d+, seat 1 \(random\) [+-]\d+, seat 2 \(random\) [+-]\d+", text)
    assert "running total after 1 hand: " in text


@pytest.mark.integration
def test_quit_in_the_middle_of_a_hand(tmp_path):
    path = tmp_path / "left.jsonl"
    child = spawn("--opponents", "random", "random", "--seed", "1", "--no-color", "--hands", "3",
                  "--record", str(path))
    kind = expect_prompt(child)
    while kind != "move":
        child.sendline({"bid": "0", "double": "n"}[kind])
        kind = expect_prompt(child)
    child.sendline("quit")
    child.expect(r"leave this hand\? it scores -3 x stake for you \(y/n\): ")
    child.sendline("n")  # stays
    child.expect(PROMPTS["move"])
    child.sendintr()  # Ctrl-C asks too
    child.expect(r"leave this hand\? it scores -3 x stake for you \(y/n\): ")
    child.sendline("y")
    child.expect(r"you left the hand: -3 x stake, the others score 0")
    child.expect(r"running total after 1 hand: you -\d+, seat 1 \(random\) \+0, seat 2 \(random\) \+0")
    child.expect("you left the table")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    (rec,) = records.load_records(path)
    assert rec["escaped"] == 0 and rec["result"]["scores"][0] < 0
    records.replay(rec)


@pytest.mark.integration
def test_colour_on_a_terminal_and_quit_while_bidding():
    child = spawn("--opponents", "random", "random", "--seed", "2", "--seat", "2")
    kind = expect_prompt(child)
    assert "\x1b[" in child.before
    assert kind in ("bid", "double", "move")
    child.sendline("quit")
    child.expect(r"leave this hand\? ")
    child.sendline("yes")
    child.expect("you left the table")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.mark.integration
def test_default_opponents_are_the_pretrained_agent():
    child = spawn("--seed", "3", "--no-color", timeout=180)
    expect_prompt(child)
    assert "seat 1 (pretrained)" in child.before and "seat 2 (pretrained)" in child.before
    child.sendline("quit")
    child.expect(r"leave this hand\? ")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_the_table_says_what_a_player_needs():
    """No bid yet, the partner, the current trick only, who won a trick and leads, the landlord's
    redouble, suits as signs that may be typed, every hand at the end, an automatic only-pass."""
    rules = Rules.preset("standard")
    lines = []
    state = engine.reset(np.random.default_rng(0), 1, rules)
    table = terminal.Table(rules, 0, {}, ["you", "a", "b"], Style(False), read=lambda p: "",
                           write=lines.append)
    table.show(state)
    assert "| bidding | no bid yet |" in lines[0]
    ten = 7 * 4  # the ten of spades
    shown = Style(False).card(ten)
    assert shown == "T\u2660" and Style(False, suits=False).card(ten) == "T"
    leading = scripted_state("333444555666789TJ")
    assert terminal.parse_move(leading, shown) == terminal.parse_move(leading, "T")  # typed as shown

    # a fixed-landlord hand: seat 1 leads as landlord; you are seat 0 (a farmer), seat 2 your partner
    deal = engine.Deal(("33344455566678899", "3457TTTTJJJJQQQQ9", "789KKKKAAAA2222XD"), "678", 0, 1)
    fixed = Rules.preset("standard", bidding=False, doubling=True)
    state = engine.reset(0, 1, fixed, deals=[deal])
    t = action_table(fixed)
    while state.phase[0] == engine.DOUBLING:  # your partner doubles, the landlord may redouble
        state = engine.step(state, np.array([t.index("double" if state.to_act[0] == 2 else "no_double")]))
    lines.clear()
    table.rules = fixed
    table.table = t
    for name in ("T", "pass", "pass"):  # seat 1 leads T; seat 2 and you pass: seat 1 leads again
        seat = int(state.to_act[0])
        before, state = state, engine.step(state, np.array([t.index(name)]))
        table.announce(before, state, seat, t.index(name))
    assert "  -- trick over: seat 1 (a) won it and leads --" in lines
    lines.clear()
    state = engine.step(state, np.array([t.index("J")]))  # seat 1 leads J, seat 2 beats it, you to act
    state = engine.step(state, np.array([t.index("K")]))
    table.show(state)
    text = "\n".join(lines)
    assert "to beat: K by seat 2 (b), your partner" in text
    assert re.search(r"seat 2 \(b\) +farmer \(partner\) .* double +this trick: K", text)
    assert re.search(r"seat 1 \(a\) +landlord .*no redouble +this trick: J", text)
    assert re.search(r"^> you .*this trick: -", text, flags=re.M)  # the old trick's pass is not shown
    lines.clear()
    holding = Rules.preset("douzero")
    only_pass = scripted_state("3333444455556XD66")
    only_pass = engine.step(only_pass, np.array([action_table(holding).index("XD")]))
    assert engine.legal_actions(only_pass)[0].tolist() == [PASS]
    table = terminal.Table(holding, 1, {}, ["a", "you", "b"], Style(False), read=lambda p: 1 / 0,
                       write=lines.append)
    assert table.decide(only_pass) == PASS and lines == ["  nothing in your hand beats XD: you pass"]


@pytest.mark.parametrize("text, why", [
    ("JQKA2", "chains stop at the ace (2s and jokers are never in a chain)"),
    ("3456", "a chain of these needs at least 5 ranks"),
    ("34568", "must follow each other with no gap"),
    ("34", "(a single, pair, trio"),
])
def test_not_a_combination_says_why(text, why):
    state = scripted_state("3344556789TJQKA22")
    with pytest.raises(terminal.MoveError, match="not a combination") as err:
        terminal.parse_move(state, text)
    assert why in str(err.value)


def test_setup_errors_and_ctrl_c_at_start_are_one_line(monkeypatch, capsys):
    assert terminal.main(["--rules", "douzero"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: cannot set up the table: the pretrained agent plays the standard rules only, not "
                   "--rules douzero; choose other opponents, e.g. --opponents rule rule"]

    def interrupted(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(terminal, "make_opponents", interrupted)
    assert terminal.main(["--opponents", "rule", "rule"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted before the table was set up"


# ----------------------------------------------------------------------------
# Ctrl-C while an agent thinks: as at a prompt
# ----------------------------------------------------------------------------


class InterruptedOnce(NoBidder):
    """NoBidder, whose first decision is cut short by Ctrl-C (a KeyboardInterrupt from its act, as
    when the person presses Ctrl-C while a search: agent thinks)."""

    def __init__(self):
        super().__init__()
        self.interrupted = False

    def act(self, view):
        if not self.interrupted:
            self.interrupted = True
            raise KeyboardInterrupt
        return super().act(view)


def _agent_bids_first(rules: Rules, seat: int = 0) -> int:
    """A seed whose first hand (as play_session deals it) is opened by an agent, not by ``seat``."""
    return next(s for s in range(100) if int(engine.reset(s, 1, rules).first_bidder[0]) != seat)


def test_ctrl_c_while_an_agent_thinks_leaves_the_hand_and_records_it(monkeypatch, capsys, tmp_path):
    """``doudizhu-play --record FILE``, Ctrl-C while an opponent thinks, ``y``: the hand is left as at
    a prompt (-3 x stake), said so, and appended to the record; the command ends normally."""
    rules = Rules.preset("standard")
    seed = _agent_bids_first(rules)
    agents = {1: InterruptedOnce(), 2: InterruptedOnce()}
    monkeypatch.setattr(terminal, "make_opponents",
                        lambda specs, rules, seat, seed: (agents, ["you", "search:rule", "search:rule"]))
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    path = tmp_path / "hands.jsonl"
    code = terminal.main(["--opponents", "rule", "rule", "--seed", str(seed), "--no-color", "--hands", "2",
                          "--record", str(path)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    first = int(engine.reset(seed, 1, rules).first_bidder[0])
    assert f"interrupted while seat {first} (search:rule) was thinking" in out
    assert "leave this hand? it scores -3 x stake for you (y/n): " in out
    assert "you left the hand: -3 x stake, the others score 0" in out
    assert re.search(r"running total after 1 hand: you -\d+, seat 1 \(search:rule\) \+0", out)
    assert out.rstrip().endswith("you left the table")
    assert "before the table was set up" not in out + err
    (rec,) = records.load_records(path)
    assert rec["escaped"] == 0 and rec["result"]["scores"][0] < 0
    assert rec["players"] == ["human", "search:rule", "search:rule"]
    records.replay(rec)


def test_ctrl_c_while_an_agent_thinks_and_staying_plays_the_hand_on(tmp_path):
    """Answering ``n``: the agent thinks again from the same position and the hand goes on to its end
    (here: nobody bids, the redeal limit ends it unscored), recorded as any finished hand."""
    rules = Rules.preset("standard", redeal_limit=1)
    seed = _agent_bids_first(rules)
    first = int(engine.reset(seed, 1, rules).first_bidder[0])
    agents = {first: InterruptedOnce(), 3 - first: NoBidder()}  # the first bidder is cut short
    prompts, out = [], []

    def read(prompt):
        prompts.append(prompt)
        return "n" if prompt.startswith("leave this hand?") else "0"
    table = terminal.Table(rules, 0, agents, ["you", "a", "b"], Style(False), read=read, write=out.append)
    path = tmp_path / "hands.jsonl"
    totals = terminal.play_session(table, seed=seed, hands=1, record=str(path))
    text = "\n".join(out)
    assert f"interrupted while seat {first} ({'ab'[first - 1]}) was thinking" in text
    assert f"seat {first} ({'ab'[first - 1]}) thinks again" in text
    assert sum(p.startswith("leave this hand?") for p in prompts) == 1
    assert "no score: nobody bid on 2 deals in a row" in text and totals == [0, 0, 0]
    (rec,) = records.load_records(path)
    assert rec["escaped"] is None and rec["result"]["truncated"]
    records.replay(rec)


def test_ctrl_c_outside_a_hand_after_set_up_is_not_before_set_up(monkeypatch, capsys):
    """Ctrl-C after the table is set up but outside any prompt or agent (here: while the hand is
    dealt) says the person left the table, not that the table was never set up."""
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(terminal.engine, "reset", interrupted)
    assert terminal.main(["--opponents", "rule", "rule", "--no-color"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted: you left the table"
