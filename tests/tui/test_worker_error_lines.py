"""The TUI's one worker-error handler: a user-fixable error is its one line, a bug names its type."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from frogdesk.errors import FrogDeskError
from frogdesk.sessions.store import SessionNotFoundError
from frogdesk.tui.workers import describe_failure


def _worker(error: BaseException) -> Any:
    return SimpleNamespace(name="review", error=error)  # what describe_failure reads of a Worker


def test_a_user_fixable_error_is_shown_as_its_own_line() -> None:
    assert describe_failure(_worker(SessionNotFoundError("no session 'x'"))) == "no session 'x'"
    assert describe_failure(_worker(FrogDeskError("disk full"))) == "disk full"


def test_a_bug_keeps_the_worker_and_the_exception_type() -> None:
    assert describe_failure(_worker(KeyError("k"))) == "review failed: KeyError: 'k'"
