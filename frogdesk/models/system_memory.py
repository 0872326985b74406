"""Free RAM and free VRAM for a model, read at call time from what frogdesk.system probes."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from frogdesk import system


@dataclass(frozen=True)
class MemoryAvailable:
    """Memory a model may use now: RAM always, VRAM when a supported GPU is present."""

    ram_total: int
    ram_free: int
    vram_total: int | None = None
    vram_free: int | None = None
    gpu_name: str = ""

    @property
    def has_gpu(self) -> bool:
        """A GPU llama.cpp can offload to was found."""
        return self.vram_free is not None


# Purgeable pages are freed on demand, so a model may count on them too.
_MACOS_FREE = (*system.VM_STAT_FREE, "Pages purgeable")


def gpu_offload_supported() -> bool:
    """The installed llama.cpp was built with a GPU backend."""
    try:
        import llama_cpp

        return bool(llama_cpp.llama_supports_gpu_offload())
    except (ImportError, OSError, AttributeError):
        return False


def parse_nvidia_smi(out: str) -> tuple[int, int, str] | None:
    """(total, free, name) of the first GPU from `nvidia-smi --query-gpu=memory.total,memory.free,name
    --format=csv,noheader,nounits` output (MiB figures), or None when it cannot be read."""
    found = system.parse_nvidia_smi(out)
    return (found[0].total, found[0].free, found[0].name) if found else None


def available_memory(meminfo: Path = Path("/proc/meminfo")) -> MemoryAvailable:
    """RAM now free (MemAvailable on Linux) and, with a GPU-enabled llama.cpp, free VRAM."""
    if sys.platform == "darwin":
        total, free = system.macos_ram(_MACOS_FREE, check=True)
    elif meminfo.exists():
        total, free = system.meminfo_ram(system.read_meminfo(meminfo))
    else:
        total, free = 0, 0
    gpus = system.nvidia_gpus() if gpu_offload_supported() else []
    if not gpus:
        return MemoryAvailable(ram_total=total, ram_free=free)
    first = gpus[0]
    return MemoryAvailable(total, free, first.total, first.free, first.name)
