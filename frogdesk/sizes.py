"""Byte counts for people: file sizes in decimal units as the Hub shows them, memory in GiB."""

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
