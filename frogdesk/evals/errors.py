"""The eval package's error."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class EvalError(FrogDeskError, ValueError):
    """An eval suite, task or stored run that cannot be used; the message says which and why."""
