"""The package's import graph: no cycle between modules, and no import pointing up the layers."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import frogdesk

LAYERS: tuple[tuple[str, ...], ...] = (
    ("frogdesk", "frogdesk.inert", "frogdesk.paths", "frogdesk.sizes", "frogdesk.errors"),
    ("frogdesk.typedjson",),
    ("frogdesk.durable", "frogdesk.logfile", "frogdesk.beneath"),
    ("frogdesk.system", "frogdesk.scratch"),
    ("frogdesk.config",),
    ("frogdesk.worktree",),
    ("frogdesk.sandbox",),
    ("frogdesk.review", "frogdesk.models"),
    ("frogdesk.engine",),
    ("frogdesk.quantcheck",),
    ("frogdesk.leaf",),
    ("frogdesk.sessions",),
    ("frogdesk.attempts",),
    ("frogdesk.evals",),
    ("frogdesk.core",),
    ("frogdesk.tui",),
    ("frogdesk.commands",),
    ("frogdesk.cli",),
    ("frogdesk.__main__",),
)
"""Lowest first. A module may import its own package and any package of a lower layer;
packages of one layer do not import each other."""

ROOT = Path(frogdesk.__file__).parent


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    out: dict[str, Path] = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imported(path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The package modules a file imports anywhere: at the top, in functions, for type checking."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            if name in modules:
                yield name
                break


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports."""
    modules = module_names()
    return {name: set(imported(path, modules)) - {name} for name, path in modules.items()}


def unit(module: str) -> str:
    """The layered unit of a module: the top package below frogdesk, or a top module."""
    return ".".join(module.split(".")[:2])


def layer_of(name: str) -> int:
    """The index of the layer a unit belongs to."""
    for index, layer in enumerate(LAYERS):
        if name in layer:
            return index
    raise AssertionError(f"{name} is in no layer: add it to LAYERS")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Imports that reach a package of the same or a higher layer."""
    bad = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            here, there = unit(module), unit(target)
            if here == there or there == "frogdesk":
                continue
            if layer_of(there) >= layer_of(here):
                bad.append(f"{module} -> {target}")
    return bad


def test_every_package_has_a_layer() -> None:
    units = {unit(name) for name in module_names()}
    for name in units:
        layer_of(name)
    assert {name for layer in LAYERS for name in layer} == units


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_no_import_points_up_the_layers() -> None:
    assert upward(import_graph()) == []


def test_the_checks_see_a_cycle_and_an_upward_import() -> None:
    graph = {
        "frogdesk.sessions.a": {"frogdesk.sessions.b"},
        "frogdesk.sessions.b": {"frogdesk.sessions.a"},
    }
    assert cycles(graph) == [["frogdesk.sessions.a", "frogdesk.sessions.b"]]
    assert upward({"frogdesk.models.x": {"frogdesk.commands.common"}}) == [
        "frogdesk.models.x -> frogdesk.commands.common"
    ]
    assert upward({"frogdesk.models.x": {"frogdesk.review.diff"}}) == [
        "frogdesk.models.x -> frogdesk.review.diff"
    ]
    assert upward({"frogdesk.commands.x": {"frogdesk.models.spec"}}) == []
