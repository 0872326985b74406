"""The opening every session on a model shares, evaluated once and kept on disk.

A session's transcript begins with Leaf's system prompt and the tool schemas; rendered
for one model they are the same tokens in every session and attempt. The first
conversation on a model captures its sequence state on passing them, and the file is
kept in the cache folder under the key of everything the state depends on (the model
file's sha256, the llama.cpp build, the options) and the tokens themselves. A later
session whose context is still empty loads it instead of decoding the opening again.
The file is a cache: one that cannot be used is removed and the opening decoded, in a
line of the log, never a failure.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

from frogdesk.durable import sweep_temps
from frogdesk.engine.chat import Backend, Message, ToolSchema
from frogdesk.engine.llama.errors import SavedStateError
from frogdesk.engine.registry import opening_owner
from frogdesk.sessions.saved_states import state_key_of, write_state_file

KEEP = 4
"""Opening files kept (the newest used): a few models or system prompts in turn."""
SUFFIX = ".opening"

_LOG = logging.getLogger("frogdesk.llama")  # the engine's lines, routed to the log file


def opening_file(folder: Path, key: dict[str, object], tokens: Sequence[int]) -> Path:
    """Where the opening of `tokens` under `key` is kept."""
    doc = json.dumps([key, list(tokens)], sort_keys=True, separators=(",", ":"), default=str)
    return folder / f"{hashlib.sha256(doc.encode()).hexdigest()[:32]}{SUFFIX}"


def openings_on_disk(folder: Path) -> tuple[int, int]:
    """How many opening files `folder` holds and their bytes (never fails)."""
    count = total = 0
    with contextlib.suppress(OSError):
        for path in folder.glob(f"*{SUFFIX}"):
            with contextlib.suppress(OSError):
                total += os.lstat(path).st_size
                count += 1
    return count, total


def load_opening(
    backend: Backend,
    folder: Path,
    data_dir: Path,
    cap: int,
    messages: Sequence[Message],
    tools: Sequence[ToolSchema],
    *,
    enable_thinking: bool,
) -> str:
    """Start an empty conversation from the saved opening of `messages`; a line for the log
    saying so or why not ("" when there is nothing to do: another backend kind, a context
    that already holds a conversation, no shared opening in `messages`).

    Without a usable file the backend is asked to capture the opening as it decodes it,
    for `save_opening`.
    """
    llama = opening_owner(backend)
    if llama is None or llama.transcript.tokens or cap <= 0:
        return ""
    # late: loads llama_cpp
    from frogdesk.engine.llama.conversation.saved_state import install, read_state

    tokens = llama.conversation.opening_tokens(messages, tools, enable_thinking=enable_thinking)
    if not tokens:
        return ""
    started = time.monotonic()
    path: Path | None = None
    try:
        key = state_key_of(llama, data_dir)
        path = opening_file(folder, key, tokens)
        state = read_state(path, cap)
        if list(state.tokens) != tokens:
            raise SavedStateError("its tokens are not the opening's")
        install(llama, state, key, messages, tools, enable_thinking=enable_thinking)
    except FileNotFoundError:
        llama.conversation.keep_opening = True
        return ""
    except (SavedStateError, OSError, RuntimeError, ValueError) as exc:
        llama.conversation.keep_opening = True
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()
        return f"the shared opening is decoded again: {exc}"
    with contextlib.suppress(OSError):
        os.utime(path)  # the newest used is kept longest
    seconds = time.monotonic() - started
    return f"the shared opening ({len(tokens):,} tokens) loaded from saved state in {seconds:.2f} s"


def save_opening(backend: Backend, folder: Path, data_dir: Path, cap: int) -> str:
    """Keep the opening the backend captured, once per key; a line for the log ("" when
    there was nothing to keep or it is kept already)."""
    llama = opening_owner(backend)
    if llama is None or llama.conversation.opening_state is None:
        return ""
    # late: loads llama_cpp
    from frogdesk.engine.llama.conversation.saved_state import captured_opening

    try:
        state = captured_opening(llama, state_key_of(llama, data_dir))
    except OSError as exc:
        return f"the shared opening is not saved: the model file cannot be read ({exc.strerror})"
    llama.conversation.opening_state = None  # its bytes are freed once written
    if state is None or len(state.data) > cap:
        return ""
    path = opening_file(folder, state.key, state.tokens)
    if path.exists():
        return ""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"the shared opening is not saved ({exc.strerror})"
    failed = write_state_file(path, state)
    if failed:
        return f"the shared opening is not saved ({failed})"
    _keep_newest(folder, KEEP)
    with contextlib.suppress(OSError):
        sweep_temps(folder)  # what a writer killed midway left (its process is gone)
    return f"the shared opening ({len(state.tokens):,} tokens) saved for the next sessions"


def _keep_newest(folder: Path, keep: int) -> None:
    found: list[tuple[float, Path]] = []
    with contextlib.suppress(OSError):
        for path in folder.glob(f"*{SUFFIX}"):
            with contextlib.suppress(OSError):
                found.append((os.lstat(path).st_mtime, path))
    for _, path in sorted(found, reverse=True)[keep:]:
        with contextlib.suppress(OSError):
            path.unlink()


def log_line(line: str) -> None:
    """Put an opening line in the log file (the user sees only the faster start)."""
    if line:
        _LOG.info("%s", line)
