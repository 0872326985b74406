"""What this machine offers: CPU threads, RAM, GPUs and their memory, read without side effects."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass


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


def memory() -> MemoryInfo:
    """System RAM: /proc/meminfo on Linux, sysctl/vm_stat on macOS."""
    if sys.platform == "linux":
        values: dict[str, int] = {}
        try:
            with open("/proc/meminfo", encoding="utf-8") as handle:
                for line in handle:
                    key, _, rest = line.partition(":")
                    parts = rest.split()
                    if parts and parts[0].isdigit():
                        values[key] = int(parts[0]) * 1024
        except OSError:
            return MemoryInfo(0, 0)
        total = values.get("MemTotal", 0)
        available = values.get("MemAvailable", values.get("MemFree", 0))
        # Respect a cgroup memory limit (containers, CI) when it is lower.
        limit = _cgroup_limit()
        if limit and limit < total:
            available = min(available, limit)
            total = limit
        return MemoryInfo(total, available)
    if sys.platform == "darwin":
        total_text = _run(["sysctl", "-n", "hw.memsize"]).strip()
        total = int(total_text) if total_text.isdigit() else 0
        free_pages = 0
        page = 4096
        for line in _run(["vm_stat"]).splitlines():
            if "page size of" in line:
                digits = "".join(ch for ch in line.split("page size of")[1] if ch.isdigit())
                page = int(digits or page)
            if line.startswith(("Pages free", "Pages inactive", "Pages speculative")):
                free_pages += int(line.split(":")[1].strip().rstrip(".") or 0)
        return MemoryInfo(total, free_pages * page)
    return MemoryInfo(0, 0)


def _cgroup_limit() -> int:
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="utf-8") as handle:
            text = handle.read().strip()
        return int(text) if text.isdigit() else 0
    except OSError:
        return 0


def gpus() -> list[GpuInfo]:
    """NVIDIA GPUs via nvidia-smi, Apple Silicon's unified memory; [] when none can be read."""
    found: list[GpuInfo] = []
    if shutil.which("nvidia-smi"):
        out = _run(
            [
                "nvidia-smi",
                "--query-gpu=name,memory.total,memory.free",
                "--format=csv,noheader,nounits",
            ]
        )
        for line in out.splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                mib = 1024 * 1024
                found.append(GpuInfo(parts[0], int(parts[1]) * mib, int(parts[2]) * mib, "nvidia"))
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


def _run(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
