"""The root of every error a user can fix: one line to show, and the exit code to end with."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

LoadProblem = Literal[
    "missing",
    "not_gguf",
    "truncated",
    "unsupported_architecture",
    "vision_projector",
    "load_failed",
    "context_failed",
]


class FrogDeskError(Exception):
    """A problem the user can fix; `str()` is one line that says what and the way forward.

    The CLI prints it on stderr and exits with `exit_code`, the TUI shows it in its error
    notice; neither shows a traceback for it (the CLI does under `--debug`).
    """

    exit_code: int = 2


class DiskFullError(FrogDeskError, OSError):
    """A write found the disk full, over quota or read-only; nothing half-written was kept."""

    def __init__(self, message: str, *, session_id: str = "") -> None:
        super().__init__(message)
        self.session_id = session_id
        """The session that stopped for it, where one did (it can be resumed)."""


class ModelLoadError(FrogDeskError):
    """A GGUF that cannot be loaded; `str()` is a message for the user, `problem` a stable code."""

    def __init__(self, path: Path, problem: LoadProblem, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.problem: LoadProblem = problem
        self.detail = message


def describe_os_error(exc: OSError) -> str:
    """`path: why` for a system error, without Python's `[Errno N]` prefix."""
    why = exc.strerror or str(exc)
    where = exc.filename if exc.filename is not None else ""
    return f"{os.fsdecode(where)}: {why}" if where else why


class EscapeError(FrogDeskError, PermissionError):
    """A path that leads out of its root, or through a link where none may be followed."""


class RecordTypeError(FrogDeskError, ValueError):
    """A JSON value does not have the type its field declares."""
