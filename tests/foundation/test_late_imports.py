"""Imports of frogdesk inside functions: only to put off a heavy optional module, and said so.

A late `from frogdesk...` import hides the import graph from a reader and from the layer
check's intent. One is allowed only with a comment (on its line, or on the line above it
or above the run of late imports it belongs to) that names the heavy module it puts off
(llama_cpp or textual), and the imported module must really load that module when it is
imported.
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

import frogdesk

ROOT = Path(frogdesk.__file__).parent
HEAVY = ("llama_cpp", "textual")
"""Optional modules that are slow to load or pull in a native library or a terminal UI."""


@dataclass(frozen=True)
class LateImport:
    """One import of the package inside a function."""

    line: int
    module: str
    reason: str
    """The comment that explains it; empty when there is none."""


def _comments(source: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            out[token.start[0]] = token.string.lstrip("#").strip()
    return out


def _package_module(node: ast.AST) -> str | None:
    """The frogdesk module an import statement names, or None when it names none."""
    if isinstance(node, ast.ImportFrom):
        if node.level > 0:
            return "." * node.level + (node.module or "")
        if node.module and node.module.split(".")[0] == "frogdesk":
            return node.module
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == "frogdesk":
                return alias.name
    return None


def late_imports(source: str) -> list[LateImport]:
    """Every import of frogdesk inside a function, with the comment that explains it."""
    tree = ast.parse(source)
    lines = source.splitlines()
    nodes: dict[int, tuple[ast.stmt, str]] = {}
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            module = _package_module(node)
            if module is not None and isinstance(node, ast.stmt):
                nodes[node.lineno] = (node, module)
    if not nodes:
        return []
    comments = _comments(source)
    starts = {(node.end_lineno or node.lineno): node.lineno for node, _ in nodes.values()}
    found = []
    for line, (node, module) in sorted(nodes.items()):
        end = node.end_lineno or line
        reason = next(
            (comments[n] for n in range(line, end + 1) if n in comments),
            "",
        )
        above = line - 1
        while not reason and above >= 1:
            if above in starts:  # the run of late imports goes on upward
                above = starts[above] - 1
            elif lines[above - 1].strip().startswith("#"):
                reason = comments.get(above, "")
            else:
                break
        found.append(LateImport(line, module, reason))
    return found


def unexplained(source: str) -> list[LateImport]:
    """The late imports whose comment names no heavy module."""
    return [
        late for late in late_imports(source) if not any(heavy in late.reason for heavy in HEAVY)
    ]


def _module_path(module: str) -> Path | None:
    base = ROOT.parent.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.cache
def _top_level_imports(path: Path) -> frozenset[str]:
    """What a module imports when it is imported (not in functions, classes or TYPE_CHECKING)."""
    out: set[str] = set()
    pending: list[ast.stmt] = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                pending.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            pending.extend(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                pending.extend(handler.body)
    return frozenset(out)


def loads_at_import(module: str) -> set[str]:
    """The outside top-level modules that importing `module` loads, through the package."""
    seen: set[str] = set()
    outside: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        if parts[0] != "frogdesk":
            outside.add(parts[0])
            continue
        # importing a.b.c runs a, a.b and a.b.c
        for n in range(1, len(parts) + 1):
            dotted = ".".join(parts[:n])
            path = _module_path(dotted)
            if dotted in seen or path is None:
                continue
            seen.add(dotted)
            todo.extend(_top_level_imports(path))
    return outside


def package_late_imports() -> dict[str, list[LateImport]]:
    """The late imports of every module of the package, by file."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        found = late_imports(path.read_text(encoding="utf-8"))
        if found:
            out[str(path.relative_to(ROOT.parent))] = found
    return out


def test_every_late_import_says_which_heavy_module_it_puts_off() -> None:
    bad = {
        name: [f"line {late.line}: {late.module}" for late in unexplained(path.read_text())]
        for name, path in ((str(p.relative_to(ROOT.parent)), p) for p in ROOT.rglob("*.py"))
    }
    assert {name: lines for name, lines in bad.items() if lines} == {}


def test_a_late_import_really_puts_off_the_module_its_comment_names() -> None:
    wrong = []
    for name, found in package_late_imports().items():
        for late in found:
            named = [heavy for heavy in HEAVY if heavy in late.reason]
            if not set(named) & loads_at_import(late.module):
                wrong.append(f"{name}:{late.line} {late.module} ({late.reason})")
    assert wrong == []


def test_the_check_flags_an_unexplained_late_import() -> None:
    sample = (
        "from frogdesk.config import Settings\n"
        "if TYPE_CHECKING:\n"
        "    from frogdesk.models.local import LocalModel\n"
        "def f():\n"
        "    from frogdesk.models.errors import ModelError\n"
        "    return ModelError\n"
        "def g():\n"
        "    # keeps it quick\n"
        "    import frogdesk.sizes\n"
        "def h():\n"
        "    from .parts import thing\n"
    )
    assert [(late.line, late.module) for late in unexplained(sample)] == [
        (5, "frogdesk.models.errors"),
        (9, "frogdesk.sizes"),
        (11, ".parts"),
    ]


def test_the_check_accepts_a_late_import_that_names_its_heavy_module() -> None:
    sample = (
        "def f():\n"
        "    # loads llama_cpp: only when a model loads\n"
        "    from frogdesk.engine.llama.backend import LlamaBackend\n"
        "    from frogdesk.engine.llama.shared import (\n"
        "        SharedLlama,\n"
        "    )\n"
        "    x = 1\n"
        "    from frogdesk.sizes import format_bytes\n"
        "def g():\n"
        "    from frogdesk.tui.launch import run_tui  # loads textual: only for the TUI\n"
    )
    found = late_imports(sample)
    assert [(late.line, late.module) for late in found] == [
        (3, "frogdesk.engine.llama.backend"),
        (4, "frogdesk.engine.llama.shared"),
        (8, "frogdesk.sizes"),
        (10, "frogdesk.tui.launch"),
    ]
    assert [late.line for late in unexplained(sample)] == [8]


def test_the_import_reach_tells_a_heavy_module_from_a_light_one() -> None:
    assert "llama_cpp" in loads_at_import("frogdesk.engine.llama.backend")
    assert "textual" in loads_at_import("frogdesk.tui.launch")
    assert not set(HEAVY) & loads_at_import("frogdesk.engine.backends")
    assert not set(HEAVY) & loads_at_import("frogdesk.cli")
