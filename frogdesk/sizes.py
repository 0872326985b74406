"""Byte counts for people, the one place they are formatted: file, download and disk sizes in
decimal units as the Hub shows them, memory (RAM, VRAM, address space) in binary units."""

from __future__ import annotations


def human_bytes(n: float) -> str:
    """A file size or a transfer in decimal units (2.80 GB, 512 kB, 7 B)."""
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1000
    return f"{n:.2f} TB"


def gib(n: float) -> str:
    """An amount of memory in binary gigabytes (3.50 GiB), as RAM and VRAM are sold."""
    return f"{n / 2**30:.2f} GiB"


def memory_size(n: float) -> str:
    """An amount of memory in binary units: GiB from one GiB up (3.50 GiB), MiB below (96 MiB),
    KiB under one MiB (192 KiB)."""
    if 0 < abs(n) < 2**20:
        return f"{n / 2**10:.0f} KiB"
    return gib(n) if abs(n) >= 2**30 else f"{n / 2**20:.0f} MiB"
