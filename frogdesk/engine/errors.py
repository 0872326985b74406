"""The engine's errors: a backend the settings cannot make, a script that cannot be replayed, a
chat template that fails or teaches a tool-call form FrogDesk does not speak."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class BackendError(FrogDeskError, ValueError):
    """The settings do not describe a usable backend; the message says what to set."""


class ScriptError(FrogDeskError, ValueError):
    """The script file is missing or malformed; the message names the file and line."""


class TemplateError(FrogDeskError):
    """A chat template failed to compile or render; the message names the problem."""


class DialectError(TemplateError):
    """The chat template writes tool calls in a form FrogDesk does not speak."""
