"""The errors of the llama backend: a model file that cannot be used or does not fit, a batch
refused, a saved state that cannot be restored."""

from __future__ import annotations

from dataclasses import dataclass

from frogdesk.errors import FrogDeskError, LoadProblem, ModelLoadError
from frogdesk.sizes import memory_size

__all__ = [
    "DecodeError",
    "DoesNotFitError",
    "LoadProblem",
    "ModelLoadError",
    "SavedStateError",
    "Shortfall",
]


class DecodeError(FrogDeskError, RuntimeError):
    """llama_decode refused a batch (context full or out of memory)."""


@dataclass(frozen=True)
class Shortfall:
    """A model that does not fit: bytes it needs against bytes left under the cap."""

    name: str
    needed: int
    room: int

    def message(self) -> str:
        """One line for the user."""
        return (
            f"not enough memory to load {self.name}: it needs about "
            f"{memory_size(self.needed)}, {memory_size(max(self.room, 0))} free "
            "under this process's memory limit (ulimit -v); "
            "try a smaller quant or a smaller context"
        )


class DoesNotFitError(FrogDeskError):
    """The model cannot be loaded under the address-space cap; `shortfall` says by how much."""

    def __init__(self, shortfall: Shortfall) -> None:
        super().__init__(shortfall.message())
        self.shortfall = shortfall


class SavedStateError(FrogDeskError, ValueError):
    """A saved state that cannot be used; its message says why in a few words."""
