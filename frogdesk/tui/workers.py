"""The one place an unexpected worker failure becomes a visible error, mixed into each screen."""

from __future__ import annotations

from typing import Any

from textual.worker import Worker, WorkerState

from frogdesk.errors import FrogDeskError, describe_os_error
from frogdesk.inert import inert_text


def error_words(error: BaseException) -> str:
    """What went wrong, for a line the user reads: a problem the user can fix (FrogDeskError)
    is its own message, a system error its path and reason, and anything else (a bug) keeps
    its exception type."""
    if isinstance(error, FrogDeskError):
        return str(error)
    if isinstance(error, OSError):
        return describe_os_error(error)
    return f"{type(error).__name__}: {error}"


def describe_failure(worker: Worker[Any]) -> str:
    """One line: a problem the user can fix (FrogDeskError) is its own message; a bug
    names the worker and the exception type."""
    error = worker.error
    if error is None or isinstance(error, FrogDeskError):
        return str(error)
    return f"{worker.name} failed: {error_words(error)}"


class ShowsWorkerErrors:
    """Screens inherit this: worker state changes do not bubble, so each screen reports its own."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Notify the user of a worker that raised (expected failures are handled in place)."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            app = getattr(self, "app", None)
            if app is not None:
                app.notify(
                    inert_text(describe_failure(event.worker)),
                    severity="error",
                    timeout=15,
                    markup=False,
                )
