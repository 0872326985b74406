"""The error the llama backend raises when a model file cannot be used."""

from __future__ import annotations

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


class ModelLoadError(Exception):
    """A GGUF that cannot be loaded; `str()` is a message for the user, `problem` a stable code."""

    def __init__(self, path: Path, problem: LoadProblem, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.problem: LoadProblem = problem
        self.detail = message
