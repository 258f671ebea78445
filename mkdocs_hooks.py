"""MkDocs hook: tables of the documentation site generated from the code's single sources of truth.

A page asks for a table with a marker on a line of its own::

    <!-- generated: observation-pieces -->

and the build replaces the marker with the table, computed at build time from
the code (nothing is copied by hand). Markers:

=========================  ==================================================================
marker                     source
=========================  ==================================================================
``observation-pieces``     ``doudizhu_env.observation.PIECES`` (names, sizes, offsets) and the
                           meaning column of the module docstring's table
``action-pieces``          ``doudizhu_env.observation.ACTION_PIECES`` and its comments
``action-specials``        ``doudizhu_env.actions.SPECIAL_NAMES``
``action-groups PRESET``   the groups of ``doudizhu_env.actions.action_table(PRESET)``
``action-type-counts``     ``doudizhu_env.actions.type_counts`` for every preset
``rules-presets``          the fields of ``doudizhu_env.rules.Rules``, their docstrings, the presets
``config-fields``          the fields of ``train.config.TrainConfig`` (and ``agents.dmc.ModelConfig``),
                           their defaults and their docstrings
``snippet NAME``           a Python block: the lines of a test between ``# docs: start NAME`` and
                           ``# docs: end NAME`` (``tests/test_*.py``), dedented, so that the code
                           a page shows is code the tests run
=========================  ==================================================================

An unknown marker, a piece of ``PIECES`` that the docstring does not
describe, or a snippet name found in no test or in two, fails the build.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
import textwrap
import typing
from pathlib import Path

from mkdocs.exceptions import PluginError

sys.path.insert(0, str(Path(__file__).resolve().parent))

_MARKER = re.compile(r"^<!--\s*generated:\s*([\w-]+)((?:\s+[\w-]+)*)\s*-->\s*$", re.MULTILINE)


def _md(text: str) -> str:
    """reStructuredText-flavoured docstring text as one line of Markdown for a table cell."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text)  # :class:`~a.B` -> `a.B`
    text = text.replace("``", "`")
    return " ".join(text.split()).replace("|", "\\|")


def _table(header: list[str], rows: list[list], align: str | None = None) -> str:
    align = align or "l" * len(header)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _docstring_table(doc: str) -> dict[str, str]:
    """The rows of the first simple reST table of ``doc``: first column -> the rest (continuations joined)."""
    lines = doc.splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"\s*=+(\s+=+)+\s*", line)]
    if len(rules) < 3:
        return {}
    start, end = rules[1] + 1, rules[2]
    col = [m.start() for m in re.finditer(r"=+", lines[rules[0]])]
    out, key = {}, None
    for line in lines[start:end]:
        if not line.strip():
            continue
        first = line[: col[1]].strip()
        rest = line[col[-1]:].strip() if len(line) > col[-1] else ""
        if first:
            key = first.strip("`")
            out[key] = rest
        elif key is not None:
            out[key] += " " + rest
    return out


def observation_pieces() -> str:
    from doudizhu_env import observation as obs

    meaning = _docstring_table(obs.__doc__ or "")
    shape = {name: f"{blocks} x {obs.CARD_BITS} card bits" for name, blocks in obs.CARD_PIECES}
    shape.update({name: f"{slots} x one-hot({size})" for name, slots, size in obs.ONE_HOT_PIECES})
    rows = []
    for name, size in obs.PIECES:
        if name not in meaning:
            raise PluginError(f"observation piece {name!r} of PIECES is not described in the table of "
                              "doudizhu_env/observation.py's docstring")
        where = obs.piece_slice(name)
        rows.append([f"`{name}`", f"{where.start}..{where.stop - 1}", size, shape[name], _md(meaning[name])])
    rows.append(["**total**", f"0..{obs.OBS_SIZE - 1}", f"**{obs.OBS_SIZE}**", "", "`OBS_SIZE`"])
    return _table(["piece", "columns", "size", "encoding", "meaning"], rows, "lllll")


def action_pieces() -> str:
    from doudizhu_env import observation as obs

    source = inspect.getsource(obs)
    rows, pos = [], 0
    for name, size in obs.ACTION_PIECES:
        m = re.search(r'\("' + re.escape(name) + r'",[^)]*\),\s*#\s*(.*)', source)
        rows.append([f"`{name}`", f"{pos}..{pos + size - 1}", size, _md(m.group(1)) if m else ""])
        pos += size
    rows.append(["**total**", f"0..{obs.ACTION_SIZE - 1}", f"**{obs.ACTION_SIZE}**", "`ACTION_SIZE`"])
    return _table(["piece", "columns", "size", "meaning"], rows)


_SPECIAL_USE = {"pass": "play phase, when following", "bid0": "bidding: no bid", "bid1": "bidding",
                "bid2": "bidding", "bid3": "bidding (ends the bidding)",
                "double": "doubling phase (the landlord's redouble too)", "no_double": "doubling phase"}


def action_specials() -> str:
    from doudizhu_env import actions

    rows = [[i, f"`{name}`", _SPECIAL_USE.get(name, "")] for i, name in enumerate(actions.SPECIAL_NAMES)]
    return _table(["id", "name", "when"], rows, "rll")


def action_groups(preset: str = "standard") -> str:
    from doudizhu_env import actions

    table = actions.action_table(preset)
    rows = []
    for (ctype, length), ids in table.groups.items():
        rows.append([f"{ids.start}..{ids.stop - 1}", ctype.name.lower(), length, len(ids),
                     f"`{table.names[ids.start]}`", f"`{table.names[ids.stop - 1]}`"])
    head = (f"`action_table(\"{preset}\")`: {len(table):,} actions, {actions.NUM_SPECIAL} non-card "
            f"and {len(table) - actions.NUM_SPECIAL:,} card combinations in {len(table.groups)} groups; "
            f"bombs `{table.bomb_start}..{table.bomb_end - 1}`, rocket `{table.rocket}`.\n\n")
    return head + _table(["ids", "type", "length", "count", "first", "last"], rows, "llrrll")


def action_type_counts() -> str:
    from doudizhu_env import actions, rules

    presets = sorted(rules.PRESETS)
    counts = {p: actions.type_counts(p) for p in presets}
    types = list(counts[presets[0]])
    rows = [[t.replace("_", " ")] + [f"{counts[p][t]:,}" for p in presets] for t in types]
    rows.append(["**all card combinations**"] + [f"**{sum(counts[p].values()):,}**" for p in presets])
    rows.append(["**table size (with the 7 non-card actions)**"]
                + [f"**{len(actions.action_table(p)):,}**" for p in presets])
    return _table(["type"] + [f"`{p}`" for p in presets], rows, "l" + "r" * len(presets))


def _field_rows(cls, prefix=""):
    from train.config import field_docs

    hints, docs = typing.get_type_hints(cls), field_docs(cls)
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        if dataclasses.is_dataclass(hint):
            yield from _field_rows(hint, f"{prefix}{f.name}.")
            continue
        shown = _yaml_value(default)
        type_name = getattr(hint, "__name__", None) if typing.get_origin(hint) is None else str(hint)
        yield [f"`{prefix}{f.name}`", f"`--{(prefix + f.name).replace('_', '-')}`", f"`{type_name}`",
               f"`{shown}`", _md(docs.get(f.name, ""))]


def _yaml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def config_fields() -> str:
    """The TrainConfig fields, with the value each shipped config (``configs/*.yaml``) gives them."""
    from train.config import TrainConfig, dotted_keys, load_config

    root = Path(__file__).resolve().parent
    configs = sorted((root / "configs").glob("*.yaml"))
    values = [dotted_keys(load_config(str(path)).to_dict()) for path in configs]
    rows = []
    for row in _field_rows(TrainConfig):
        name = row[0].strip("`")
        rows.append(row[:4] + [f"`{_yaml_value(v[name])}`" for v in values] + row[4:])
    header = ["field", "option", "type", "default"] + [f"`{p.name}`" for p in configs] + ["meaning"]
    return _table(header, rows)


def rules_presets() -> str:
    from doudizhu_env import rules
    from train.config import field_docs

    presets = sorted(rules.PRESETS)
    docs = field_docs(rules.Rules)
    rows = []
    for f in dataclasses.fields(rules.Rules):
        values = [getattr(rules.PRESETS[p], f.name) for p in presets]
        shown = [("on" if v else "off") if isinstance(v, bool) else str(v) for v in values]
        rows.append([f"`{f.name}`"] + shown + [_md(docs.get(f.name, ""))])
    return _table(["field"] + [f"`{p}`" for p in presets] + ["meaning"], rows)


_SNIPPET = re.compile(r"^[ \t]*# docs: (start|end) ([\w-]+)[ \t]*$", re.MULTILINE)


def snippet(name: str) -> str:
    """The lines between ``# docs: start NAME`` and ``# docs: end NAME`` of one test file: a Python block."""
    found = []
    for path in sorted((Path(__file__).resolve().parent / "tests").glob("test_*.py")):
        text = path.read_text()
        marks = [(m.group(1), m.start(), m.end()) for m in _SNIPPET.finditer(text) if m.group(2) == name]
        if marks:
            found.append((path, text, marks))
    if len(found) != 1 or [kind for kind, *_ in found[0][2]] != ["start", "end"]:
        where = ", ".join(path.name for path, *_ in found) or "no test file"
        raise PluginError(f"snippet {name!r}: expected one '# docs: start {name}' and then one "
                          f"'# docs: end {name}' in one tests/test_*.py, found them in {where}")
    _, text, ((_, _, start), (_, end, _)) = found[0]
    body = textwrap.dedent(text[start:end].strip("\n")).rstrip()
    return f"```python\n{body}\n```"


GENERATORS = {
    "observation-pieces": observation_pieces,
    "action-pieces": action_pieces,
    "action-specials": action_specials,
    "action-groups": action_groups,
    "action-type-counts": action_type_counts,
    "rules-presets": rules_presets,
    "config-fields": config_fields,
    "snippet": snippet,
}


def render(markdown: str, where: str = "a page") -> str:
    """``markdown`` with every ``<!-- generated: NAME ARGS -->`` marker replaced by its table."""

    def one(match: re.Match) -> str:
        name, args = match.group(1), match.group(2).split()
        if name not in GENERATORS:
            raise PluginError(f"{where}: unknown generated table {name!r}; known: {sorted(GENERATORS)}")
        return GENERATORS[name](*args)

    return _MARKER.sub(one, markdown)


def on_page_markdown(markdown, page, config, files):
    return render(markdown, page.file.src_path)


# --- docstrings: the code's docstrings are reStructuredText-flavoured; the API reference renders Markdown ---

_ROLE = re.compile(r":(?:py:)?\w+:`(~?)([^`<]+?)(?:\s*<([^>]+)>)?`")


def _role(match: re.Match) -> str:
    tilde, text, target = match.groups()
    name = (target or text).strip()
    return f"`{name.rsplit('.', 1)[-1] if tilde else name}`"


def _rst_table(lines: list[str]) -> list[str]:
    """A reST simple table (``===  ===`` rules) as a Markdown table; continuation lines joined."""
    rule = lines[0]
    starts = [m.start() for m in re.finditer(r"=+", rule)]
    cells = lambda line: [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None], strict=True)]  # noqa: E731
    body = [line for line in lines if not re.fullmatch(r"\s*=+(\s+=+)+\s*", line)]
    header, rows = cells(body[0]), []
    for line in body[1:]:
        if not line.strip():
            continue
        row = cells(line)
        if row[0] or not rows:
            rows.append(row)
        else:
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], row, strict=True)]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]


def rst_to_markdown(text: str) -> str:
    """This project's reST in docstrings as Markdown: roles, ``::`` blocks and simple tables."""
    text = _ROLE.sub(_role, text)
    lines, out, i = text.splitlines(), [], 0
    is_rule = re.compile(r"\s*=+(\s+=+)+\s*").fullmatch
    while i < len(lines):
        if is_rule(lines[i]):
            j, rules = i, 0
            while j < len(lines) and rules < 3:
                rules += bool(is_rule(lines[j]))
                j += 1
            if rules == 3:
                out += _rst_table(lines[i:j])
                i = j
                continue
        line = lines[i]
        if line.strip() == "::":
            line = ""
        elif line.rstrip().endswith("::"):
            line = line.rstrip()[:-1]
        out.append(line)
        i += 1
    return "\n".join(out)


try:
    import griffe
except ImportError:  # the hook works without griffe; the extension is only for mkdocstrings
    griffe = None

if griffe is not None:

    class RstToMarkdown(griffe.Extension):
        """Griffe extension (see mkdocs.yml): every docstring through :func:`rst_to_markdown`."""

        def on_instance(self, *, obj, **kwargs) -> None:  # noqa: ARG002
            if obj.docstring is not None:
                obj.docstring.value = rst_to_markdown(obj.docstring.value)
