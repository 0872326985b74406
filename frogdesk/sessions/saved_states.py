"""Where a session's saved engine state lives, how it is written and loaded, and its size cap.

A session that stops keeps its llama backend's state in `engine.state` beside its
transcript, so reopening it loads the state instead of reading the transcript again.
Anything that makes the state unusable is said in one line and the transcript is read
instead: the state is a cache, never the record of the session.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from frogdesk.durable import fsync_dir, temp_name
from frogdesk.engine.chat import Backend, Message, ToolSchema
from frogdesk.engine.llama.errors import SavedStateError
from frogdesk.engine.registry import state_owner
from frogdesk.quantcheck.store import file_sha256
from frogdesk.sizes import gib

if TYPE_CHECKING:
    from frogdesk.engine.llama.conversation.replying import ConversationBackend
    from frogdesk.engine.llama.conversation.saved_state import EngineState

STATE_FILE = "engine.state"
"""The saved engine state's name in a session's folder."""


@dataclass(frozen=True)
class StatesOnDisk:
    """The saved states under a sessions folder: how many and their bytes."""

    count: int
    total: int


def state_file(session_dir: Path) -> Path:
    """The saved-state file of the session kept in `session_dir`."""
    return session_dir / STATE_FILE


def state_key_of(backend: ConversationBackend, data_dir: Path) -> dict[str, object]:
    from frogdesk.engine.llama.conversation.saved_state import state_key  # late: loads llama_cpp

    return state_key(backend, file_sha256(backend.model.path, data_dir))


def states_on_disk(sessions_dir: Path) -> StatesOnDisk:
    """The saved states of every session under `sessions_dir` (never fails)."""
    count = total = 0
    with contextlib.suppress(OSError):
        for folder in sessions_dir.iterdir():
            with contextlib.suppress(OSError):
                info = os.lstat(state_file(folder))
                count += 1
                total += info.st_size
    return StatesOnDisk(count, total)


def discard_state(session_dir: Path) -> bool:
    """Remove the session's saved state; whether there was one."""
    try:
        os.unlink(state_file(session_dir))
    except FileNotFoundError:
        return False
    fsync_dir(session_dir)
    return True


def _make_room(sessions_dir: Path, keep: Path, needed: int, cap: int) -> None:
    """Remove the oldest other saved states until `needed` more bytes fit under `cap`."""
    found: list[tuple[float, int, Path]] = []
    with contextlib.suppress(OSError):
        for folder in sessions_dir.iterdir():
            path = state_file(folder)
            if path == keep:
                continue
            with contextlib.suppress(OSError):
                info = os.lstat(path)
                found.append((info.st_mtime, info.st_size, path))
    total = sum(size for _, size, _ in found)
    for _, size, path in sorted(found):
        if total + needed <= cap:
            break
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        total -= size


def save_state(backend: Backend, session_dir: Path, data_dir: Path, cap: int) -> str:
    """Keep the backend's state beside the session; one line saying what happened ("" when
    there is nothing to keep: another backend kind, the cap 0, nothing evaluated).

    The write is atomic (temp, fsync, rename, folder fsync): a kill leaves the old state
    or none. A full disk, or a state over `cap`, leaves the old state, which still loads
    as the start of the transcript.
    """
    llama = state_owner(backend)
    if llama is None or cap <= 0:
        return ""
    from frogdesk.engine.llama.conversation.saved_state import capture  # late: loads llama_cpp

    try:
        state = capture(llama, state_key_of(llama, data_dir))
    except OSError as exc:
        return f"engine state not saved: the model file cannot be read ({exc.strerror})"
    if state is None:
        return ""
    target = state_file(session_dir)
    if len(state.data) > cap:
        return (
            f"engine state not saved: its {gib(len(state.data))} are over "
            f"saved_state_max_bytes ({gib(cap)})"
        )
    _make_room(session_dir.parent, target, len(state.data), cap)
    failed = write_state_file(target, state)
    if failed:
        return f"engine state not saved ({failed}): the next resume reads the transcript"
    return ""


def write_state_file(target: Path, state: EngineState) -> str:
    """Write `state` to `target` atomically (temp, fsync, rename, folder fsync): a kill
    leaves the old file or none. "" when written, else why not in a few words."""
    from frogdesk.engine.llama.conversation.saved_state import write_to  # late: loads llama_cpp

    tmp = temp_name(target)
    try:
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
        with os.fdopen(fd, "wb") as handle:
            write_to(handle, state)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return str(exc.strerror or exc)
    fsync_dir(target.parent)
    return ""


def load_state(
    backend: Backend,
    session_dir: Path,
    data_dir: Path,
    cap: int,
    messages: Sequence[Message],
    tools: Sequence[ToolSchema],
    *,
    enable_thinking: bool,
) -> str:
    """Load the session's saved state into a fresh backend; one line saying so or why not
    ("" for a backend without state or a session that never saved one)."""
    llama = state_owner(backend)
    if llama is None:
        return ""
    # late: loads llama_cpp
    from frogdesk.engine.llama.conversation.saved_state import install, read_state

    path = state_file(session_dir)
    started = time.monotonic()
    try:
        state = read_state(path, max(cap, 0))
        tokens = install(llama, state, state_key_of(llama, data_dir), messages, tools,
                         enable_thinking=enable_thinking)  # fmt: skip
    except FileNotFoundError:
        return "" if not messages else "no saved state: reading the transcript again"
    except SavedStateError as exc:
        return f"reading the transcript again: {exc}"
    except OSError as exc:
        return f"reading the transcript again: the saved state cannot be read ({exc.strerror})"
    except (RuntimeError, ValueError) as exc:  # llama.cpp refusing it: the backend is fresh
        return f"reading the transcript again: {exc}"
    seconds = time.monotonic() - started
    return f"resumed from saved state in {seconds:.1f} s ({tokens:,} tokens not read again)"
