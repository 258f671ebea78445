"""Every command example of the docs parses its arguments, so an example cannot drift from its command.

The examples are every ``python -m <module> ...`` (and ``doudizhu-play`` / ``doudizhu-web``, the
console scripts of ``pyproject.toml``) written in README.md, in docs/*.md (code blocks and inline
code) and in the module docstrings of the project's packages (literal blocks and inline code). Each
is checked by its command's own argument parser, captured from the command's ``main`` (the
parser's ``parse_args`` is stopped before it parses, so no command does any work), and then asked
to parse the example's arguments: an unknown option, a missing value or a value outside its
``choices`` fails as it fails on the command line. This is a ``--help``-level check: placeholders
(``PATH``, ``A.pt``, ``dmc:runs/x/checkpoint.pt``) pass, since files and agents are checked by the
commands after parsing, and a placeholder number in capitals (``--deals N``) reads as 1. Inline code
in prose may name a command without the arguments it requires, or an option without its value
(``python -m train.export``, ``--record``). Shell syntax around a command (``| head``, ``> out.txt``,
``&&``, a comment, ``VAR=1`` before it, ``\\`` continuations) is left out; ``...`` standing for more
arguments is left out, or else read as one word.

An example that fails in a file this test's author does not own is listed in :data:`KNOWN_BAD`
(a strict xfail) for that file's owner to fix.

Beside the commands, every page cited by name (``README.md``, ``docs/rules.md``) must exist
(:func:`test_cited_pages_exist`).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import functools
import importlib
import importlib.util
import io
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("doudizhu_env", "agents", "train", "doudizhu_arena", "doudizhu_table", "benchmarks")
#: The console scripts: name -> (module, function), as pyproject.toml declares them.
SCRIPTS = {name: tuple(target.split(":")) for name, target in
           tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"].items()}
_PYTHON = ("python", "python3", ".venv/bin/python", "$PYTHON")
#: Where a command may start in a line of shell: ``python -m`` or a console script.
_SCRIPT_NAMES = "|".join(map(re.escape, SCRIPTS))
_START = re.compile(rf"(?:^|(?<=[\s;&|(]))(?:(?:[\w.\-]*/)?python3?\s+-m\s|(?:{_SCRIPT_NAMES})(?=\s|$))")
_SHELL_STOPS = {"|", "||", "&", "&&", ";", ";;", ">", ">>", "<", "<<", "(", ")", "2>", "&>"}
_ELLIPSIS = {"...", "\u2026"}
_SUBSTITUTION = re.compile(r"[<$]\([^()]*\)")


@dataclass(frozen=True)
class Example:
    where: str
    """``path:line`` of the example's first line."""
    command: str
    """The command as written, on one line (continuations joined)."""
    mention: bool = False
    """Inline code in prose (``python -m train.export``, ``--record``): the command named, perhaps
    without the arguments it requires, or with an option named without its value."""


def commands_in(text: str) -> list[str]:
    """The commands a piece of shell or code span holds: from each ``python -m`` or console script
    to the end of the text (cut at the shell's separators later, in :func:`argv_of`)."""
    return [text[m.start():].strip() for m in _START.finditer(text)]


def _code_lines(lines: list[str], start: int) -> list[tuple[int, str]]:
    """Lines of shell, each with its line number, ``\\`` continuations joined."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for i, line in enumerate(lines, start):
        if pending:
            pending = (pending[0], pending[1] + " " + line.strip())
        else:
            pending = (i, line.strip())
        if pending[1].endswith("\\"):
            pending = (pending[0], pending[1][:-1].rstrip())
            continue
        out.append(pending)
        pending = None
    if pending:
        out.append(pending)
    return out


def _spans(text: str, ticks: str) -> list[tuple[int, str]]:
    """Inline code spans of ``text`` (``ticks`` ``\\``` for Markdown, ``\\`\\``` for reST), each with the
    line it starts on (from 0), newlines inside a span read as spaces."""
    inside = r"((?:(?!\n\s*\n).)+?)"  # a span ends with its paragraph
    markdown, rest = rf"(?<!`)(`+)(?!`){inside}(?<!`)\1(?!`)", rf"``(?!`){inside}``"
    pattern = re.compile(markdown if ticks == "`" else rest, re.S)
    group = 2 if ticks == "`" else 1
    return [(text.count("\n", 0, m.start()), " ".join(m.group(group).split()))
            for m in pattern.finditer(text)]


def markdown_examples(path: Path, root: Path = ROOT) -> list[Example]:
    """The examples of a Markdown file: lines of its fenced code blocks, and its inline code."""
    name = path.relative_to(root).as_posix()
    found = []
    lines = path.read_text(encoding="utf-8").splitlines()
    prose = list(lines)
    fence: list[int] = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            if fence:  # the block's lines, then blanked out of the prose
                first = fence[0] + 1
                for number, code in _code_lines(lines[first:i], first + 1):
                    found += [Example(f"{name}:{number}", c) for c in commands_in(code)]
                prose[fence[0]:i + 1] = [""] * (i + 1 - fence[0])
                fence = []
            else:
                fence = [i]
    for line, span in _spans("\n".join(prose), "`"):
        found += [Example(f"{name}:{line + 1}", c, mention=True) for c in commands_in(span)]
    return found


def docstring_examples(path: Path, root: Path = ROOT) -> list[Example]:
    """The examples of a module's docstring: lines that start with a command (its literal blocks),
    and its inline ````code````."""
    name = path.relative_to(root).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if not (tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant)
            and isinstance(tree.body[0].value.value, str)):
        return []
    doc, first = tree.body[0].value.value, tree.body[0].lineno
    lines = doc.splitlines()
    found = []
    starts = [i for i, line in enumerate(lines) if _START.match(line.strip())]
    for i in starts:
        end = i
        while lines[end].rstrip().endswith("\\") and end + 1 < len(lines):
            end += 1
        for number, code in _code_lines(lines[i:end + 1], first + i):
            found += [Example(f"{name}:{number}", c) for c in commands_in(code)]
    for line, span in _spans(doc, "``"):
        found += [Example(f"{name}:{first + line}", c, mention=True) for c in commands_in(span)]
    return found


def all_examples() -> list[Example]:
    """Every example of README.md, docs/ and the packages' module docstrings, in file order."""
    found = markdown_examples(ROOT / "README.md")
    for path in sorted((ROOT / "docs").rglob("*.md")):
        found += markdown_examples(path)
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found += docstring_examples(path)
    unique = dict.fromkeys(found)  # one span may also be a line that starts with a command
    return list(unique)


def argv_of(command: str) -> tuple[str, str, list[str]] | None:
    """``(module, function, arguments)`` of a command: the module whose function parses its command
    line, and the words after the command up to the shell's first separator; None for a command of
    another project (``python -m pytest``, ``python -m pip``) or a placeholder module."""
    command = _SUBSTITUTION.sub("FILE", command)  # <(zcat x.gz), $(ls runs): one word
    command = re.sub(r"(?<=\s)\d+(?=>)", "", command)  # 2> err.txt: a redirection, as > err.txt
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = []
    try:
        for word in lexer:
            if word in _SHELL_STOPS or set(word) <= set("|&;<>()"):
                break
            words.append(word)
    except ValueError as err:  # an unclosed quote
        raise ValueError(f"cannot read {command!r} as shell words: {err}") from None
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):  # VAR=value before the command
        words.pop(0)
    if words and words[0] in SCRIPTS:
        module, function = SCRIPTS[words[0]]
        return module, function, words[1:]
    if len(words) < 3 or words[1] != "-m" or not words[0].endswith(_PYTHON):
        raise ValueError(f"{command!r} is not 'python -m MODULE ...'")
    module = words[2]
    if module.split(".")[0] not in PACKAGES or re.fullmatch(r"[A-Z]*", module.rsplit(".", 1)[-1]):
        return None  # another project's command, or a placeholder (python -m benchmarks.X)
    spec = importlib.util.find_spec(module) if _importable_name(module) else None
    if spec is None:
        raise ValueError(f"{command!r}: there is no module {module!r}")
    if spec.submodule_search_locations is not None:  # a package runs its __main__
        module += ".__main__"
    return module, "main", words[3:]


def _importable_name(module: str) -> bool:
    return all(part.isidentifier() for part in module.split("."))


class _Parsing(BaseException):
    """Raised in place of parsing, carrying the parser (a BaseException: no ``except Exception`` of a
    command's ``main`` takes it for a bad option)."""

    def __init__(self, parser: argparse.ArgumentParser):
        super().__init__()
        self.parser = parser


@functools.cache
def parser_of(module: str, function: str = "main") -> argparse.ArgumentParser:
    """The parser ``module.function(argv)`` parses its command line with, captured at its first
    ``parse_args`` / ``parse_known_args`` (so nothing of the command runs after it)."""
    command = getattr(importlib.import_module(module), function)

    def stop(parser, *args, **kwargs):
        raise _Parsing(parser)

    with (mock.patch.object(argparse.ArgumentParser, "parse_args", stop),
          mock.patch.object(argparse.ArgumentParser, "parse_known_args", stop)):
        try:
            command(["--help"])
        except _Parsing as parsing:
            return parsing.parser
    raise AssertionError(f"{module}.{function}(argv) returned without parsing a command line")


def parse_error(command: str, mention: bool = False) -> str | None:
    """What the command's parser says about the example's arguments (its error line), or None when it
    accepts them (``--help`` included). A placeholder value in capitals (``--deals N``) of an option
    that converts its value reads as 1; a ``mention`` may leave out required arguments and the value
    of its last option."""
    target = argv_of(command)
    if target is None:
        return None
    module, function, args = target
    parser = parser_of(module, function)
    args = _fill_placeholders(parser, args, mention)
    if mention:
        with _nothing_required(parser):
            return parse_error_of(parser, args)
    return parse_error_of(parser, args)


def _fill_placeholders(parser: argparse.ArgumentParser, args: list[str], mention: bool) -> list[str]:
    """``args`` with a placeholder in capitals given to an option with a ``type`` read as ``1``, and
    (``mention``) a value for a last option that takes one."""
    args = list(args)
    for i in range(1, len(args)):
        action = parser._option_string_actions.get(args[i - 1])
        if (action is not None and action.type is not None and not action.choices
                and re.fullmatch(r"[A-Z][A-Z0-9_]*", args[i])):
            args[i] = "1"
    last = parser._option_string_actions.get(args[-1]) if args else None
    if mention and last is not None and last.nargs != 0:
        args.append(str(next(iter(last.choices))) if last.choices else "1")
    return args


@contextlib.contextmanager
def _nothing_required(parser: argparse.ArgumentParser):
    required = [(action, action.required) for action in parser._actions]
    for action, _ in required:
        action.required = False
    try:
        yield
    finally:
        for action, value in required:
            action.required = value


def parse_error_of(parser: argparse.ArgumentParser, args: list[str]) -> str | None:
    """The parser's error line for ``args``, or None when it accepts them."""
    # "..." stands for more arguments: left out, or else read as one placeholder word
    tries = [[a for a in args if a not in _ELLIPSIS], ["X" if a in _ELLIPSIS else a for a in args]]
    errors = [_parse(parser, words) for words in tries[:1 + any(a in _ELLIPSIS for a in args)]]
    return None if None in errors else errors[0]


def _parse(parser: argparse.ArgumentParser, args: list[str]) -> str | None:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            parser.parse_args(args)
        except SystemExit as stop:
            if stop.code not in (0, None):
                lines = err.getvalue().strip().splitlines()
                return lines[-1] if lines else f"exit status {stop.code}"
    return None


EXAMPLES = all_examples()

#: Examples known to fail, in files whose owners fix them: "path:line" -> why. Each is a strict xfail,
#: so a fixed example fails here until its entry is removed; the list is meant to be empty.
KNOWN_BAD: dict[str, str] = {}


def _param(example: Example):
    bad = KNOWN_BAD.get(example.where)
    marks = [pytest.mark.xfail(strict=True, reason=bad)] if bad else []
    return pytest.param(example, id=f"{example.where} {example.command[:60]}", marks=marks)


@pytest.mark.parametrize("example", [_param(e) for e in EXAMPLES])
def test_example_parses(example):
    error = parse_error(example.command, mention=example.mention)
    assert error is None, f"{example.where}: {example.command}\n  -> {error}"


def test_examples_are_found():
    """The collection reads every source: README, docs pages and module docstrings, code blocks and
    inline code, continuations joined."""
    where = {e.where.split(":")[0] for e in EXAMPLES}
    assert {"README.md", "docs/training.md", "docs/tournament.md", "doudizhu_arena/tournament.py",
            "train/run.py"} <= where
    assert len(EXAMPLES) > 150
    commands = {e.command for e in EXAMPLES}
    assert any(c.startswith("python -m train.run --config configs/default.yaml --run-name ship6") and
               "--eval-minutes 0" in c for c in commands)  # a block's continuation lines
    assert set(KNOWN_BAD) <= {e.where for e in EXAMPLES}, "a KNOWN_BAD entry names no example"


def test_a_bad_example_is_caught():
    """The check fails on what the command refuses: a choice it does not have, an unknown option, a
    missing value, a module that does not exist."""
    tournament = "python -m doudizhu_arena.tournament --agents rule random"
    assert "invalid choice: 'fixed'" in parse_error(f"{tournament} --modes fixed")
    assert parse_error(f"{tournament} --modes fixed_landlord") is None
    assert "unrecognized arguments: --no-such-option" in parse_error("python -m train.run --no-such-option 1")
    assert "expected one argument" in parse_error("python -m doudizhu_arena.evaluate --games")
    with pytest.raises(ValueError, match="no module 'train.nothing'"):
        parse_error("python -m train.nothing --seed 1")
    assert "required: --agents" in parse_error("python -m doudizhu_arena.tournament --deals 10")
    assert "expected one argument" in parse_error("python -m doudizhu_arena.evaluate --record")
    assert "invalid int value: 'many'" in parse_error("python -m doudizhu_arena.evaluate --games many")


def test_a_mention_may_leave_out_what_it_does_not_show():
    """Inline code names a command or an option: its required arguments and the option's value may be
    left out, and a placeholder in capitals stands for a number; the options it names and their
    choices are still checked."""
    assert parse_error("python -m doudizhu_arena.tournament", mention=True) is None
    assert parse_error("python -m doudizhu_arena.evaluate --record", mention=True) is None
    assert parse_error("python -m doudizhu_arena.evaluate --games N", mention=True) is None
    assert parse_error("python -m doudizhu_arena.tournament --modes fixed", mention=True) is not None
    assert parse_error("python -m train.export --no-such-option", mention=True) is not None


def test_shell_around_a_command_is_left_out():
    assert argv_of("OMP_NUM_THREADS=1 python -m train.run --seed 3 | tee log.txt  # a comment") == (
        "train.run", "main", ["--seed", "3"])
    assert argv_of("python -m doudizhu_table.replay games.jsonl > out.txt 2> err.txt") == (
        "doudizhu_table.replay", "main", ["games.jsonl"])
    assert argv_of("python -m doudizhu_table.replay <(zcat games.jsonl.gz) | less")[2] == ["FILE"]
    assert argv_of("python -m benchmarks.X --json x.json") is None
    assert argv_of("doudizhu-web --port 0")[0] == "doudizhu_table.web.__main__"
    assert argv_of("python -m pytest -q") is None
    assert commands_in("make train; python -m train.export A.pt B.pt") == ["python -m train.export A.pt B.pt"]


def test_extraction_of_markdown_and_docstrings(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Run `python -m train.run\n--seed 1` or:\n\n```bash\npython -m train.export A.pt \\\n"
                    "    B.pt   # weights\n```\n")
    assert [(e.where, e.command, e.mention) for e in markdown_examples(page, tmp_path)] == [
        ("page.md:5", "python -m train.export A.pt B.pt   # weights", False),
        ("page.md:1", "python -m train.run --seed 1", True)]
    module = tmp_path / "mod.py"
    module.write_text('"""Title.\n\nExample::\n\n    python -m benchmarks.engine --json e.json \\\\\n'
                      '        --seconds 1\n\nOr ``python -m benchmarks.env``.\n"""\n')
    assert [(e.where, e.command, e.mention) for e in docstring_examples(module, tmp_path)] == [
        ("mod.py:5", "python -m benchmarks.engine --json e.json --seconds 1", False),
        ("mod.py:8", "python -m benchmarks.env", True)]


# -- cited pages --------------------------------------------------------------------------------------

#: Pages cited that do not exist, in files whose owners fix them: "path:line" -> the page cited. The
#: test wants exactly these, so a fixed citation fails here until its entry is removed.
KNOWN_MISSING_PAGES: dict[str, str] = {}
_PAGE = re.compile(r"\b(?:[A-Z][A-Z_]*\.md|docs/[\w/-]+\.md)\b")


def cited_pages() -> list[tuple[str, str]]:
    """``(path:line, page)`` of every page cited by name (``README.md``, ``docs/rules.md``) in the
    project's text: README and the other top-level pages, docs/, configs, the packages and the tests."""
    files = [*ROOT.glob("*.md"), *(ROOT / "docs").rglob("*.md"), *(ROOT / "configs").glob("*.yaml"),
             ROOT / "Makefile", ROOT / "mkdocs.yml", ROOT / "pyproject.toml"]
    for package in (*PACKAGES, "tests"):
        files += (ROOT / package).rglob("*.py")
    found = []
    for path in sorted(f for f in files if f.is_file() and f.resolve() != Path(__file__).resolve()):
        name = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [(f"{name}:{number}", m.group()) for m in _PAGE.finditer(line)]
    return found


def test_cited_pages_exist():
    """No citation of a page the project does not have (26 places cited RULES.md, which is
    docs/rules.md)."""
    cited = cited_pages()
    assert any(page == "docs/rules.md" for _, page in cited) and any(page == "README.md" for _, page in cited)
    missing = {where: page for where, page in cited if not (ROOT / page).is_file()}
    assert missing == KNOWN_MISSING_PAGES
