"""One row of a model listing: what the list command and the TUI picker show for one model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frogdesk.models.memory import Plan
from frogdesk.models.spec import GgufName
from frogdesk.models.warning import ModelWarning


@dataclass(frozen=True)
class CatalogRow:
    """What the list command and the TUI picker show for one model."""

    label: str
    repo: str
    name: GgufName
    size: int
    local_path: Path | None
    plan: Plan | None
    fit_basis: str
    """`metadata` (the file's own dims), `sibling` (dims of another quant of the repo) or `size`."""
    warnings: tuple[ModelWarning, ...]

    @property
    def fit(self) -> str:
        """The plan's verdict; `~` marks an estimate from the file size alone."""
        if self.plan is None:
            return "-"
        return self.plan.verdict + ("~" if self.fit_basis == "size" else "")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready row."""
        return {
            "file": self.label,
            "repo": self.repo,
            "quant": self.name.quant,
            "imatrix": self.name.imatrix,
            "mmproj": self.name.mmproj,
            "parts": self.name.split_count,
            "bits": self.name.bits,
            "size": self.size,
            "on_disk": str(self.local_path) if self.local_path else None,
            "fit": self.fit,
            "fit_basis": self.fit_basis,
            "estimate_bytes": self.plan.estimate.total if self.plan else None,
            "context": self.plan.estimate.context if self.plan else None,
            "gpu_layers": self.plan.gpu_layers if self.plan else None,
            "warnings": [w.id for w in self.warnings],
        }
