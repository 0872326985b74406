"""The errors the Leaf tools and loop raise, each a FrogDeskError.

The builtin beside it is what the callers catch: a path refused is a PermissionError (the
tools turn it into Leaf's observation), a runner that cannot run a tool a RuntimeError.
"""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class OutsideWorkdirError(FrogDeskError, PermissionError):
    """A path that would reach outside the repository workdir."""


class ToolInfrastructureError(FrogDeskError, RuntimeError):
    """The runner itself failed (not the tool's input): the loop ends with `tool_error`."""


class ShellMissingError(FrogDeskError, RuntimeError):
    """Bash was called but the runner was built without a shell."""
