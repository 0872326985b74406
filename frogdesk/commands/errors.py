"""The command line's own error: a problem with the arguments themselves."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class UserError(FrogDeskError):
    """A problem with the command line itself; printed as one line, no traceback."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code
