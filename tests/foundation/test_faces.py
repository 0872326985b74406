"""The CLI and the TUI are faces over the application core: neither drives the session service
(frogdesk.sessions.runner) itself; they start, open, switch and run sessions through
frogdesk.core."""

from __future__ import annotations

from tests.foundation.test_layers import import_graph

FACES = ("frogdesk.commands", "frogdesk.tui", "frogdesk.cli")
BEHIND_THE_CORE = ("frogdesk.sessions.runner",)


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
        "frogdesk.commands.run": {"frogdesk.sessions.runner", "frogdesk.core.workbench"},
        "frogdesk.core.workbench": {"frogdesk.sessions.runner"},
        "frogdesk.tui.screens.session": {"frogdesk.sessions.record"},
    }
    assert around_the_core(graph) == ["frogdesk.commands.run -> frogdesk.sessions.runner"]
