"""The error the llama backend raises when a model file cannot be used."""

from __future__ import annotations

from frogdesk.errors import LoadProblem, ModelLoadError

__all__ = ["LoadProblem", "ModelLoadError"]
