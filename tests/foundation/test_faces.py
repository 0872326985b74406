"""The CLI and the TUI are faces over the application core: neither drives the session service
(frogdesk.sessions.service) itself, and each imports from the rest of the package only the
core, the configuration, value types and errors (an allow-list, with a control)."""

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


# The allow-list: what a face may import from the rest of the package.
MAY_IMPORT = (
    "frogdesk.core",
    "frogdesk.config",
    "frogdesk.paths",
    "frogdesk.inert",
    "frogdesk.sizes",
    "frogdesk.errors",
    "frogdesk.logfile",
    "frogdesk.scratch",
)
"""`logfile` is where the process's entry points (the CLI's `main`, the TUI app) route the
libraries' own logs to the log file and listen for the few lines a user must see;
`scratch` where the CLI's `main` puts the process's own short-lived folders."""
VALUE_TYPES = (
    "frogdesk.engine.chat",
    "frogdesk.engine.kinds",
    "frogdesk.leaf.events",
    "frogdesk.leaf.records",
    "frogdesk.review.model",
    "frogdesk.review.decisions",
    "frogdesk.review.edited",
    "frogdesk.review.show",
    "frogdesk.sessions.record",
    "frogdesk.sessions.factories",
    "frogdesk.attempts.record",
    "frogdesk.attempts.rank",
    "frogdesk.attempts.spec",
    "frogdesk.evals.results",
    "frogdesk.models.spec",
    "frogdesk.models.catalog_row",
    "frogdesk.models.listing",
    "frogdesk.models.local_model",
    "frogdesk.models.progress",
    "frogdesk.models.retry",
    "frogdesk.models.switch_plan",
    "frogdesk.models.warning",
    "frogdesk.quantcheck.report",
)
"""Data the core hands a face (events, records, rows, results): types and pure functions over
them, no I/O and no decision of the core's."""


def every_import(path: Path, modules: set[str]) -> set[str]:
    """Every package module a file imports, each name of a `from x import a, b` on its own."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in modules else node.module)
    return found & modules


def allowed(target: str) -> bool:
    """Whether a face may import `target`: a face, the allow-list, a value type, an error."""
    if target == "frogdesk" or target.startswith(FACES):
        return True
    if target.rsplit(".", 1)[-1] == "errors":
        return True
    return any(target == m or target.startswith(m + ".") for m in MAY_IMPORT + VALUE_TYPES)


def past_the_core(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Face module -> what it imports that the allow-list does not let it."""
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        if module.startswith(FACES):
            beyond = {t for t in targets if not allowed(t)}
            if beyond:
                out[module] = beyond
    return out


def faces_graph() -> dict[str, set[str]]:
    from tests.foundation.test_layers import module_names

    modules = module_names()
    return {
        name: every_import(path, set(modules)) - {name}
        for name, path in modules.items()
        if name.startswith(FACES)
    }


def test_faces_import_only_the_allow_list() -> None:
    found = {m: sorted(t) for m, t in past_the_core(faces_graph()).items()}
    assert found == {}, "route these through frogdesk.core (or a value type)"


def test_the_allow_list_sees_a_face_past_the_core() -> None:
    # the control: the same check flags a face reaching a package past the core
    graph = {
        "frogdesk.commands.models": {"frogdesk.models.hub", "frogdesk.core.chooser"},
        "frogdesk.tui.widgets.x": {"frogdesk.review.model", "frogdesk.models.errors"},
        "frogdesk.tui.screens.y": {"frogdesk.sandbox.levels", "frogdesk.tui.widgets.x"},
        "frogdesk.models.hub": {"frogdesk.models.hub_http"},
    }
    assert past_the_core(graph) == {
        "frogdesk.commands.models": {"frogdesk.models.hub"},
        "frogdesk.tui.screens.y": {"frogdesk.sandbox.levels"},
    }


def test_every_name_of_one_import_statement_is_seen(tmp_path: Path) -> None:
    source = tmp_path / "face.py"
    source.write_text("from frogdesk.models import hub, spec\nimport frogdesk.sizes\n")
    modules = {"frogdesk.models", "frogdesk.models.hub", "frogdesk.models.spec", "frogdesk.sizes"}
    assert every_import(source, modules) == {
        "frogdesk.models.hub", "frogdesk.models.spec", "frogdesk.sizes",
    }  # fmt: skip


CONCRETE = ("CoreWorkbench", "CoreSession")
"""The core's classes behind the ports: a face makes a workbench, then programs against
`Workbench` / `HeadlessWorkbench` and the sessions they hand out."""


def concrete_uses(source: str) -> list[int]:
    """Lines of `source` naming a concrete core class other than to import or construct it."""
    tree = ast.parse(source)
    constructed = {
        id(node.func)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    lines = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id in CONCRETE and id(node) not in constructed
    ]
    # string annotations (`from __future__ import annotations` keeps them as code here)
    lines += [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.strip() in CONCRETE
    ]
    return sorted(lines)


def test_faces_program_against_the_ports() -> None:
    package = Path(frogdesk.__file__).parent
    files = [p for folder in ("commands", "tui") for p in sorted((package / folder).rglob("*.py"))]
    found = [
        f"{path.relative_to(package)}:{line}"
        for path in [*files, package / "cli.py"]
        for line in concrete_uses(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "annotate with the port (core.ports), construct the class only"


def test_the_check_sees_a_face_typed_by_the_concrete_class() -> None:
    source = (
        "from frogdesk.core.workbench import CoreWorkbench\n"
        "bench = CoreWorkbench(repo, settings)\n"
        "def run(bench: CoreWorkbench) -> None: ...\n"
        "kept: 'CoreSession'\n"
    )
    assert concrete_uses(source) == [3, 4]
