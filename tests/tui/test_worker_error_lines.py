"""The TUI's one wording of worker failures: a user-fixable error is its one line, a system error
its path and reason, a bug names its type; no screen words one itself."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import frogdesk
from frogdesk.errors import FrogDeskError
from frogdesk.sessions.errors import SessionNotFoundError
from frogdesk.tui.workers import describe_failure, error_words


def _worker(error: BaseException) -> Any:
    return SimpleNamespace(name="review", error=error)  # what describe_failure reads of a Worker


def test_a_user_fixable_error_is_shown_as_its_own_line() -> None:
    assert describe_failure(_worker(SessionNotFoundError("no session 'x'"))) == "no session 'x'"
    assert describe_failure(_worker(FrogDeskError("disk full"))) == "disk full"


def test_a_bug_keeps_the_worker_and_the_exception_type() -> None:
    assert describe_failure(_worker(KeyError("k"))) == "review failed: KeyError: 'k'"


def test_every_line_a_worker_posts_uses_the_same_words() -> None:
    assert error_words(SessionNotFoundError("no session 'x'")) == "no session 'x'"
    gone = FileNotFoundError(2, "No such file or directory", "/tmp/x.gguf")
    assert error_words(gone) == "/tmp/x.gguf: No such file or directory"
    assert error_words(ValueError("bad")) == "ValueError: bad"


def formats_exceptions_itself(source: str) -> list[int]:
    """Lines of `source` that spell an exception's type into a message (`type(x).__name__`)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and node.attr == "__name__"
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "type"
    ]


def test_the_tui_words_worker_failures_in_one_place() -> None:
    tui = Path(frogdesk.__file__).parent / "tui"
    found = [
        f"{path.relative_to(tui)}:{line}"
        for path in sorted(tui.rglob("*.py"))
        if path.name != "workers.py"
        for line in formats_exceptions_itself(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_check_sees_a_screen_wording_a_failure_itself() -> None:
    # the control: the line every screen had before
    source = 'post(WorkFailed("running", f"{type(exc).__name__}: {exc}"))\n'
    assert formats_exceptions_itself(source) == [1]
