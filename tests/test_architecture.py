"""The floors of docs/architecture.md, read from the code: no upward import, no circle of modules.

Every ``import`` of the installed packages is read with :mod:`ast` (those inside functions too:
a lazy import is still an arrow), resolved to the module it names, and checked against the floor
order below. A change that makes the game import an agent, or two modules import each other,
fails here in a second rather than in a newcomer's reading.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The installed packages, lowest floor first (docs/architecture.md).
FLOORS = ("doudizhu_env", "agents", "doudizhu_arena", "train", "doudizhu_table")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    """Every module of the installed packages, by dotted name."""
    return {module_name(path): path for floor in FLOORS for path in sorted((ROOT / floor).rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is one of ``modules``, or None for a foreign module."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def _base_of(node: ast.ImportFrom, here: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = here.split(".") if is_package else here.split(".")[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join(package + ([node.module] if node.module else []))


def imports_of(name: str, modules: dict[str, Path]) -> set[str]:
    """The project modules that module ``name`` imports, anywhere in its body."""
    path = modules[name]
    tree = ast.parse(path.read_text(), str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _base_of(node, name, path.name == "__init__.py")
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        found.update(t for t in (_resolve(t, modules) for t in targets) if t and t != name)
    return found


@functools.cache
def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    return {name: imports_of(name, modules) for name in modules}


def floor_of(module: str) -> int:
    return FLOORS.index(module.split(".")[0])


def upward_arrows(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets if floor_of(b) > floor_of(a))


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_no_floor_imports_a_higher_floor():
    assert upward_arrows(import_graph()) == []


def test_no_modules_form_a_circle():
    assert circles(import_graph()) == []


def test_the_checks_see_an_upward_arrow_and_a_circle():
    """The two checks are not vacuous: a made-up graph with both is caught."""
    graph = {"doudizhu_env.engine": {"agents.rule"}, "agents.rule": {"agents.search"},
             "agents.search": {"agents.rule"}}
    assert upward_arrows(graph) == ["doudizhu_env.engine -> agents.rule"]
    assert circles(graph) == [["agents.rule", "agents.search"]]


@pytest.mark.parametrize("floor", FLOORS)
def test_every_floor_is_read(floor):
    """Each package is found and its imports parsed (a moved package would make the checks empty)."""
    graph = import_graph()
    assert any(name.split(".")[0] == floor for name in graph)
