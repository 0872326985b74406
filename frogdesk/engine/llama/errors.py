"""The errors of the llama backend: a model file that cannot be used, a batch refused."""

from __future__ import annotations

from frogdesk.errors import FrogDeskError, LoadProblem, ModelLoadError

__all__ = ["DecodeError", "LoadProblem", "ModelLoadError"]


class DecodeError(FrogDeskError, RuntimeError):
    """llama_decode refused a batch (context full or out of memory)."""
