"""One honest warning about a model, and the stable ids of every kind (a value type; the one
producer is `models.model_warnings`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["info", "warning", "refusal"]

UNVALIDATED_QUANT = "unvalidated-quant"
UNVALIDATED_PLATFORM = "unvalidated-platform"
LOW_BITS = "low-bits"
NO_QUALITY_EVAL = "no-quality-eval"
VISION_REFUSED = "vision-refused"
LICENSE_AMBIGUOUS = "license-ambiguous"
QUANT_MISNAMED = "quant-misnamed"


@dataclass(frozen=True)
class ModelWarning:
    """One warning: a stable id (for tests, the TUI and --json), its level and its text."""

    id: str
    level: Level
    text: str
