"""What this machine offers: CPU threads, RAM, GPUs and their memory, read without side effects."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MEMINFO = Path("/proc/meminfo")
VM_STAT_FREE = ("Pages free", "Pages inactive", "Pages speculative")
"""The `vm_stat` page counts that count as free memory."""


@dataclass(frozen=True)
class MemoryInfo:
    """Total and available system memory in bytes (0 when unknown)."""

    total: int
    available: int


@dataclass(frozen=True)
class GpuInfo:
    """One GPU as the vendor tool reports it; memory in bytes."""

    name: str
    total: int
    free: int
    vendor: str


def logical_cpus() -> int:
    """Logical CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no sched_getaffinity
        return os.cpu_count() or 1


def physical_cores() -> int:
    """Physical cores (llama.cpp runs best with one thread per core); falls back to logical CPUs."""
    if sys.platform == "linux":
        try:
            with open("/proc/cpuinfo", encoding="utf-8") as handle:
                pairs = set()
                physical = core = ""
                for line in handle:
                    key, _, value = line.partition(":")
                    key = key.strip()
                    if key == "physical id":
                        physical = value.strip()
                    elif key == "core id":
                        core = value.strip()
                    elif not line.strip() and core:
                        pairs.add((physical, core))
                        physical = core = ""
                if core:
                    pairs.add((physical, core))
            if pairs:
                return min(len(pairs), logical_cpus())
        except OSError:
            pass
    if sys.platform == "darwin":
        out = _run(["sysctl", "-n", "hw.physicalcpu"])
        if out.strip().isdigit():
            return int(out)
    return logical_cpus()


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's feature flags (x86 `flags`, ARM `Features` in /proc/cpuinfo); empty elsewhere."""
    try:
        with open(cpuinfo, encoding="utf-8") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


def thread_count(configured: int = 0) -> int:
    """Threads for llama.cpp: `configured` when positive, else one per physical core.

    The one rule every part of FrogDesk uses (decoding, quant checks, time estimates).
    """
    return configured if configured > 0 else max(1, physical_cores())


def read_meminfo(path: Path = MEMINFO) -> dict[str, int]:
    """The `kB` fields of /proc/meminfo in bytes ({} when it cannot be read)."""
    values: dict[str, int] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    values[key.strip()] = int(parts[0]) * 1024
    except OSError:
        return {}
    return values


def meminfo_ram(values: dict[str, int]) -> tuple[int, int]:
    """(total, available) from read_meminfo: MemAvailable counts reclaimable cache as free."""
    total = values.get("MemTotal", 0)
    return total, values.get("MemAvailable", values.get("MemFree", 0))


def vm_stat_free(out: str, labels: tuple[str, ...] = VM_STAT_FREE) -> int:
    """Bytes in the given page counts of macOS `vm_stat` output (page size read from it)."""
    page = int(m.group(1)) if (m := re.search(r"page size of (\d+) bytes", out)) else 4096
    pages = 0
    for label in labels:
        found = re.search(rf"{label}:\s+(\d+)", out)
        pages += int(found.group(1)) if found else 0
    return pages * page


def macos_ram(labels: tuple[str, ...] = VM_STAT_FREE, *, check: bool = False) -> tuple[int, int]:
    """(total, free) on macOS from sysctl and vm_stat; `check` raises when either fails."""
    total_text = _run(["sysctl", "-n", "hw.memsize"], check=check).strip()
    total = int(total_text) if total_text.isdigit() else 0
    return total, vm_stat_free(_run(["vm_stat"], check=check), labels)


def memory() -> MemoryInfo:
    """System RAM: /proc/meminfo on Linux (capped by a cgroup limit), sysctl/vm_stat on macOS."""
    if sys.platform == "linux":
        values = read_meminfo()
        if not values:
            return MemoryInfo(0, 0)
        total, available = meminfo_ram(values)
        # Respect a cgroup memory limit (containers, CI) when it is lower.
        limit = _cgroup_limit()
        if limit and limit < total:
            available = min(available, limit)
            total = limit
        return MemoryInfo(total, available)
    if sys.platform == "darwin":
        return MemoryInfo(*macos_ram())
    return MemoryInfo(0, 0)


def _cgroup_limit() -> int:
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="utf-8") as handle:
            text = handle.read().strip()
        return int(text) if text.isdigit() else 0
    except OSError:
        return 0


def parse_nvidia_smi(out: str) -> list[GpuInfo]:
    """GPUs from `nvidia-smi --query-gpu=memory.total,memory.free,name
    --format=csv,noheader,nounits` output (MiB figures); unreadable lines are skipped."""
    found: list[GpuInfo] = []
    for line in out.strip().splitlines():
        fields = [f.strip() for f in line.split(",", 2)]  # the name may itself hold commas
        if len(fields) < 3 or not fields[0].isdigit() or not fields[1].isdigit():
            continue
        found.append(GpuInfo(fields[2], int(fields[0]) * 2**20, int(fields[1]) * 2**20, "nvidia"))
    return found


def nvidia_gpus(timeout: float = 10) -> list[GpuInfo]:
    """NVIDIA GPUs as nvidia-smi reports them; [] without nvidia-smi or when it fails."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    query = "--query-gpu=memory.total,memory.free,name"
    return parse_nvidia_smi(_run([exe, query, "--format=csv,noheader,nounits"], timeout=timeout))


def gpus() -> list[GpuInfo]:
    """NVIDIA GPUs via nvidia-smi, Apple Silicon's unified memory; [] when none can be read."""
    found = nvidia_gpus(timeout=5)
    if sys.platform == "darwin" and platform.machine() == "arm64":
        ram = memory()
        # Metal may use about three quarters of unified memory by default.
        found.append(
            GpuInfo("Apple Silicon (unified memory)", ram.total * 3 // 4, ram.available, "apple")
        )
    return found


def gpu_present_hint() -> str:
    """A vendor name when a GPU seems present even if its memory cannot be read."""
    if shutil.which("nvidia-smi") or os.path.exists("/dev/nvidia0"):
        return "nvidia"
    if os.path.exists("/dev/kfd"):
        return "amd"
    if sys.platform == "darwin" and platform.machine() == "arm64":
        return "apple"
    return ""


def _run(cmd: list[str], *, timeout: float = 5, check: bool = False) -> str:
    """Stdout of a command; "" when it cannot run (`check` raises instead, also on failure)."""
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, check=check
        ).stdout
    except (OSError, subprocess.SubprocessError):
        if check:
            raise
        return ""
