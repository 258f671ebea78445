"""The documentation site: generated tables match the code, and the strict build fails on a broken link.

The full strict build of the site is a step of ``make test`` (``mkdocs build --strict``).
"""

import dataclasses
import os
import subprocess
import sys

import pytest

pytest.importorskip("mkdocs")
yaml = pytest.importorskip("yaml")

from helpers import ROOT  # noqa: E402

sys.path.insert(0, str(ROOT))
import mkdocs_hooks  # noqa: E402


def test_observation_table_has_every_piece_with_its_offsets():
    from doudizhu_env import observation as obs

    table = mkdocs_hooks.observation_pieces()
    for name, size in obs.PIECES:
        where = obs.piece_slice(name)
        assert f"| `{name}` | {where.start}..{where.stop - 1} | {size} |" in table
    assert f"**{obs.OBS_SIZE}**" in table


def test_action_tables_match_the_action_table():
    from doudizhu_env import action_table
    from doudizhu_env.actions import SPECIAL_NAMES

    for preset in ("standard", "douzero"):
        table = action_table(preset)
        text = mkdocs_hooks.action_groups(preset)
        assert f"{len(table):,} actions" in text
        for ids in table.groups.values():
            assert f"| {ids.start}..{ids.stop - 1} |" in text
    specials = mkdocs_hooks.action_specials()
    assert all(f"| `{name}` |" in specials for name in SPECIAL_NAMES)


def test_config_table_has_every_field():
    from agents.dmc import ModelConfig
    from train.config import TrainConfig

    table = mkdocs_hooks.config_fields()
    for f in dataclasses.fields(TrainConfig):
        if f.name != "model":
            assert f"| `{f.name}` | `--{f.name.replace('_', '-')}` |" in table
    for f in dataclasses.fields(ModelConfig):
        assert f"| `model.{f.name}` |" in table


def test_unknown_marker_fails():
    from mkdocs.exceptions import PluginError

    with pytest.raises(PluginError, match="unknown generated table"):
        mkdocs_hooks.render("<!-- generated: no-such-table -->\n")


def test_rst_to_markdown():
    text = "Use :class:`~doudizhu_env.engine.State` and :func:`doudizhu_env.action_table`::\n\n    code\n"
    out = mkdocs_hooks.rst_to_markdown(text)
    assert out.startswith("Use `State` and `doudizhu_env.action_table`:\n")
    table = "=====  ====\na      b\n=====  ====\nx      one\n       two\n=====  ====\n"
    assert "| x | one two |" in mkdocs_hooks.rst_to_markdown(table)


def test_strict_build_fails_on_a_broken_link(tmp_path):
    """The site's own validation settings, on a one-page site whose page links to a missing page."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["strict"] is True
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the rules](missing.md).\n")
    config.update(docs_dir=str(docs), site_dir=str(tmp_path / "site"), nav=[{"Home": "index.md"}],
                  plugins=["search"], hooks=[str(ROOT / "mkdocs_hooks.py")])
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(tmp_path / "mkdocs.yml")]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert run.returncode != 0
    assert "missing.md" in run.stderr


def test_every_snippet_on_the_pages_is_code_of_a_test():
    """``<!-- generated: snippet NAME -->``: the page shows the lines a test runs, one block per marker."""
    import re
    import textwrap

    tests = {path: path.read_text() for path in (ROOT / "tests").glob("test_*.py")}
    names = []
    for page in (ROOT / "docs").rglob("*.md"):
        names += re.findall(r"^<!--\s*generated:\s*snippet\s+([\w-]+)\s*-->$", page.read_text(), re.MULTILINE)
    assert {"torchrl-env", "torchrl-ppo", "rllib-env", "rllib-ppo", "tianshou", "sb3", "sb3-aec",
            "own-loop"} <= set(names)
    for name in names:
        block = mkdocs_hooks.snippet(name)
        assert block.startswith("```python\n") and block.endswith("\n```") and "# docs:" not in block
        first = block.splitlines()[1]
        homes = [text for text in tests.values() if f"# docs: start {name}\n" in text]
        assert len(homes) == 1 and first.strip() in homes[0]
        start = homes[0].index(f"# docs: start {name}\n")
        end = homes[0].index(f"# docs: end {name}\n", start)
        body = homes[0][start:end].split("\n", 1)[1]
        assert textwrap.dedent(body).strip() == block[len("```python\n"):-len("\n```")].strip()


def test_a_missing_or_unclosed_snippet_fails_the_build(tmp_path, monkeypatch):
    from mkdocs.exceptions import PluginError

    with pytest.raises(PluginError, match="snippet 'no-such-snippet'.*found them in no test file"):
        mkdocs_hooks.render("<!-- generated: snippet no-such-snippet -->\n")
    fake = tmp_path / "mkdocs_hooks.py"
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test():\n    # docs: start open\n    x = 1\n")
    monkeypatch.setattr(mkdocs_hooks, "__file__", str(fake))
    with pytest.raises(PluginError, match="snippet 'open'.*found them in test_x.py"):
        mkdocs_hooks.snippet("open")
    (tmp_path / "tests" / "test_x.py").write_text("# docs: start two\nx = 1\n# docs: end two\n")
    assert mkdocs_hooks.snippet("two") == "```python\nx = 1\n```"
