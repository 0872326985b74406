"""One model on disk: where it came from, its name's facts and every part of it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from frogdesk.models.spec import GgufName

Source = Literal["frogdesk", "hf-cache", "imported"]


@dataclass(frozen=True)
class LocalModel:
    """One model on disk (all parts of a split model together)."""

    repo: str
    """OWNER/NAME it came from; empty for an imported file."""
    name: GgufName
    parts: tuple[Path, ...]
    source: Source

    @property
    def path(self) -> Path:
        """The file to load (the first part of a split model)."""
        return self.parts[0]

    @property
    def size(self) -> int:
        """Bytes on disk of every part (following links)."""
        return sum(p.stat().st_size for p in self.parts if p.exists())

    @property
    def complete(self) -> bool:
        """Every split part is present."""
        return len(self.parts) == self.name.split_count
