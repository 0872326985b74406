"""The disk reserve is judged one look ahead while a command runs: a writer fast enough to pass
the reserve between two looks is stopped at the look before, a slow one near the reserve is
not, and a command that has ended is judged on what it wrote, not on a guess.

The file system's usage is played back (`usage` is statvfs); the real stop of a fast filler
on a small tmpfs is tests/attacks/test_limits.py's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from frogdesk.sandbox import diskwatch
from frogdesk.sandbox.diskwatch import DiskBudget, Fs

MiB = 1 << 20


def _played(monkeypatch: pytest.MonkeyPatch, grown_mib: list[int]) -> None:
    """Each call of usage() returns the next growth (used bytes from 0)."""
    values: Iterator[int] = iter(grown_mib)
    monkeypatch.setattr(diskwatch, "usage", lambda path: (next(values) * MiB, 0))


def _budget() -> DiskBudget:
    # 100 MiB free at the start, 50 MiB reserved: 50 MiB of room (plus the slack)
    return DiskBudget([Fs(Path("/"), used0=0, free0=100 * MiB)], reserve=50 * MiB, cap=0, held=0)


def test_a_fast_writer_is_stopped_one_look_before_it_passes_the_reserve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _played(monkeypatch, [0, 20, 40])
    budget = _budget()
    assert budget.breach() is None
    assert budget.breach() is None  # 20 MiB, and 20 more by the next look: within 50
    reason = budget.breach()  # 40 MiB, and 20 more by the next look: past the room
    assert reason is not None and "sandbox_disk_reserve" in reason


def test_a_slow_writer_near_the_reserve_runs_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # the control: the same 40 MiB reached slowly is within the room at every look
    _played(monkeypatch, [30, 38, 39, 40, 41])
    budget = _budget()
    assert [budget.breach() for _ in range(5)] == [None] * 5


def test_an_ended_command_is_judged_on_what_it_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    _played(monkeypatch, [0, 40, 40, 52])
    budget = _budget()
    assert budget.breach() is None
    assert budget.breach(final=True) is None  # it wrote 40 fast, then ended: no guess
    assert budget.breach() is None  # running again: nothing grew since
    assert budget.breach(final=True) is not None  # past the room: stopped all the same
