"""Free RAM and free VRAM of this machine, read at call time (Linux, macOS, nvidia-smi)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


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


def _linux_ram(meminfo: Path) -> tuple[int, int]:
    values: dict[str, int] = {}
    for line in meminfo.read_text().splitlines():
        match = re.match(r"(\w+):\s+(\d+)\s*kB", line)
        if match:
            values[match.group(1)] = int(match.group(2)) * 1024
    total = values.get("MemTotal", 0)
    free = values.get("MemAvailable", values.get("MemFree", 0))
    return total, free


def _macos_ram() -> tuple[int, int]:
    total = int(
        subprocess.run(
            ["sysctl", "-n", "hw.memsize"], capture_output=True, text=True, check=True
        ).stdout
    )
    out = subprocess.run(["vm_stat"], capture_output=True, text=True, check=True).stdout
    page = int(m.group(1)) if (m := re.search(r"page size of (\d+) bytes", out)) else 4096
    pages = 0
    for label in ("Pages free", "Pages inactive", "Pages speculative", "Pages purgeable"):
        m = re.search(rf"{label}:\s+(\d+)", out)
        pages += int(m.group(1)) if m else 0
    return total, pages * page


def gpu_offload_supported() -> bool:
    """The installed llama.cpp was built with a GPU backend."""
    try:
        import llama_cpp

        return bool(llama_cpp.llama_supports_gpu_offload())
    except (ImportError, OSError, AttributeError):
        return False


def _nvidia() -> tuple[int, int, str] | None:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "--query-gpu=memory.total,memory.free,name", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_nvidia_smi(out)


def parse_nvidia_smi(out: str) -> tuple[int, int, str] | None:
    """(total, free, name) of the first GPU from `nvidia-smi --query-gpu=memory.total,memory.free,name
    --format=csv,noheader,nounits` output (MiB figures), or None when it cannot be read."""
    first = out.strip().splitlines()[0] if out.strip() else ""
    fields = [f.strip() for f in first.split(",")]
    if len(fields) < 3 or not fields[0].isdigit() or not fields[1].isdigit():
        return None
    return int(fields[0]) * 2**20, int(fields[1]) * 2**20, ",".join(fields[2:])


def available_memory(meminfo: Path = Path("/proc/meminfo")) -> MemoryAvailable:
    """RAM now free (MemAvailable on Linux) and, with a GPU-enabled llama.cpp, free VRAM."""
    if sys.platform == "darwin":
        total, free = _macos_ram()
    elif meminfo.exists():
        total, free = _linux_ram(meminfo)
    else:
        total, free = 0, 0
    gpu = _nvidia() if gpu_offload_supported() else None
    if gpu is None:
        return MemoryAvailable(ram_total=total, ram_free=free)
    return MemoryAvailable(total, free, vram_total=gpu[0], vram_free=gpu[1], gpu_name=gpu[2])
