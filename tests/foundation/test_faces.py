"""The CLI and the TUI are faces over the application core: neither drives the session service
(frogdesk.sessions.service) itself; they start, open, switch and run sessions through
frogdesk.core."""

from __future__ import annotations

import ast
from pathlib import Path

import frogdesk
from tests.foundation.test_layers import import_graph

FACES = ("frogdesk.commands", "frogdesk.tui", "frogdesk.cli")
BEHIND_THE_CORE = ("frogdesk.sessions.service",)


def around_the_core(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a face straight to what only the core should drive."""
    return [
        f"{module} -> {target}"
        for module, targets in sorted(graph.items())
        if module.startswith(FACES)
        for target in sorted(targets)
        if target in BEHIND_THE_CORE
    ]


def test_faces_reach_sessions_through_the_core() -> None:
    assert around_the_core(import_graph()) == []


def test_the_check_sees_a_face_around_the_core() -> None:
    graph = {
        "frogdesk.commands.run": {"frogdesk.sessions.service", "frogdesk.core.workbench"},
        "frogdesk.core.workbench": {"frogdesk.sessions.service"},
        "frogdesk.tui.screens.session": {"frogdesk.sessions.record"},
    }
    assert around_the_core(graph) == ["frogdesk.commands.run -> frogdesk.sessions.service"]


def service_reaches(source: str) -> list[int]:
    """Lines of `source` that reach through the core to its session service (`x.service`)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and node.attr == "service"
    ]


def test_faces_do_not_reach_through_the_core_to_its_service() -> None:
    package = Path(frogdesk.__file__).parent
    found = [
        f"{path.relative_to(package)}:{line}"
        for folder in ("commands", "tui")
        for path in sorted((package / folder).rglob("*.py"))
        for line in service_reaches(path.read_text(encoding="utf-8"))
    ]
    found += [f"cli.py:{line}" for line in service_reaches((package / "cli.py").read_text())]
    assert found == []


def test_the_check_sees_a_reach_through_the_core() -> None:
    assert service_reaches("store = workbench.service.store\nok = workbench.sessions()\n") == [1]
