"""The quant check's errors."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class CheckError(FrogDeskError):
    """The check cannot compare these files (different tokenizers, nothing to score)."""


class CheckCancelled(Exception):
    """The check was cancelled; nothing was cached for the unfinished file.

    Not a FrogDeskError on purpose: a cancel is no failure, and the handlers that report
    FrogDesk's errors in one line must not swallow it."""


class CorpusError(FrogDeskError):
    """The corpus folder is missing a file or its manifest is malformed."""
