"""The shell sandbox's exceptions: one base class, one subclass per thing the user can fix."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError


class SandboxError(FrogDeskError):
    """Something in the shell sandbox failed; the message says what and why."""


class LandlockUnsupported(SandboxError):
    """The kernel's Landlock lacks a feature the landlock level relies on."""
