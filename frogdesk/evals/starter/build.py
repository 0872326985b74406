"""Making starter tasks from their sources: one module file, its test, and the fixed module."""

from __future__ import annotations

from frogdesk.evals.task import EvalTask

PY_CHECK = "python3 -m unittest -q"
NODE_CHECK = "node {test}"
SH_CHECK = "sh {test}"


def source_task(
    name: str,
    kind: str,
    text: str,
    module: tuple[str, str],
    test: tuple[str, str],
    fixed: str,
    *,
    check: str,
    requires: tuple[str, ...],
) -> EvalTask:
    """A task of one source file (`module`: path, text) with one test file; `fixed` is the
    module's reference content; the test file is put back before the check."""
    path, source = module
    test_path, test_source = test
    return EvalTask(
        name=name,
        text=text,
        check=check.format(test=test_path),
        files={path: source.encode(), test_path: test_source.encode()},
        restore=(test_path,),
        solution={path: fixed.encode()},
        timeout=60.0,
        requires=requires,
        kind=kind,
    )


def py_task(
    name: str, kind: str, text: str, module: tuple[str, str], test: tuple[str, str], fixed: str
) -> EvalTask:
    """A Python task checked with the standard library's unittest (no pytest needed)."""
    run = "Run the tests with `python3 -m unittest`. Do not change the tests."
    return source_task(
        name, kind, f"{text} {run}", module, test, fixed, check=PY_CHECK, requires=("python3",)
    )


def node_task(
    name: str, kind: str, text: str, module: tuple[str, str], test: tuple[str, str], fixed: str
) -> EvalTask:
    """A JavaScript task checked with plain node and its assert module."""
    run = f"Run the tests with `node {test[0]}`. Do not change the tests."
    return source_task(
        name, kind, f"{text} {run}", module, test, fixed, check=NODE_CHECK, requires=("node",)
    )


def sh_task(
    name: str, kind: str, text: str, module: tuple[str, str], test: tuple[str, str], fixed: str
) -> EvalTask:
    """A POSIX shell task checked with `sh`."""
    run = f"Run the tests with `sh {test[0]}`. Do not change the tests."
    return source_task(
        name, kind, f"{text} {run}", module, test, fixed, check=SH_CHECK, requires=("sh",)
    )
