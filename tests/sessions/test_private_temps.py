"""A write killed midway leaves its temp file in the session's private writes folder; the next
FrogDesk that starts removes it once its writer is surely gone, and never one in progress."""

from __future__ import annotations

import os
import time
from pathlib import Path

from frogdesk.config import Settings
from frogdesk.durable import WRITER_STALE
from frogdesk.paths import AppPaths
from frogdesk.sessions.service import SessionService


def test_a_killed_writes_temp_is_swept_at_start_and_a_live_one_is_kept(isolated_home: Path) -> None:
    paths = AppPaths.default()
    writes = paths.worktrees_dir / "20261202-000000-abcdef.sandbox" / "writes"
    writes.mkdir(parents=True)
    killed = writes / ".calc.py.999999-d21bdfb1.tmp"
    killed.write_text("half a file")
    old = time.time() - WRITER_STALE - 60
    os.utime(killed, (old, old))
    # The control: a temp of a writer that is alive (this process), being written now.
    live = writes / f".calc.py.{os.getpid()}-0badf00d.tmp"
    live.write_text("in progress")
    SessionService(paths, Settings.of(backend="script"))
    assert not killed.exists()
    assert live.read_text() == "in progress"
