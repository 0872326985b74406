"""The one error type the models package raises for problems the user can act on."""

from __future__ import annotations


class ModelError(Exception):
    """A model problem with a clear message and, where there is one, the way forward."""
