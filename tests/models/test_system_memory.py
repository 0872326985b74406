"""Reading free memory: /proc/meminfo's format, and no VRAM without a GPU-enabled llama.cpp."""

from __future__ import annotations

import shutil
from pathlib import Path

from frogdesk.models.system_memory import available_memory, gpu_offload_supported

MEMINFO = """MemTotal:       16318412 kB
MemFree:          512000 kB
MemAvailable:    8123456 kB
Buffers:          100000 kB
"""


def test_meminfo_available_not_free(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(MEMINFO)
    memory = available_memory(meminfo)
    assert memory.ram_total == 16318412 * 1024
    assert memory.ram_free == 8123456 * 1024  # MemAvailable counts reclaimable cache


def test_meminfo_without_available_falls_back_to_free(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 1000 kB\nMemFree: 600 kB\n")
    assert available_memory(meminfo).ram_free == 600 * 1024


def test_this_machine() -> None:
    memory = available_memory()
    assert 0 < memory.ram_free <= memory.ram_total
    if not gpu_offload_supported() or shutil.which("nvidia-smi") is None:
        assert not memory.has_gpu and memory.vram_free is None


def test_nvidia_smi_output() -> None:
    from frogdesk.models.system_memory import parse_nvidia_smi

    out = "24564, 23012, NVIDIA GeForce RTX 4090\n8192, 100, NVIDIA T1000\n"
    assert parse_nvidia_smi(out) == (24564 * 2**20, 23012 * 2**20, "NVIDIA GeForce RTX 4090")
    assert parse_nvidia_smi("") is None
    assert parse_nvidia_smi("[N/A], [N/A], GPU\n") is None
