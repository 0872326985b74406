"""A llama backend's sequence state as bytes on disk: its key, tokens, checksum, save and load.

A saved state lets a reopened session skip reading its transcript again. The file holds
the state of sequence 0 (KV cache and, for hybrid models, the recurrent state), the exact
tokens it evaluated with the decode calls that made it, and the key of everything the
state depends on. Every byte read back is treated as hostile: sizes are bounded, the
checksum and the key are checked, and the tokens must be the transcript's own before
llama.cpp is handed the data.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import llama_cpp

from frogdesk.engine.chat import Message, ToolSchema
from frogdesk.engine.llama.conversation.replying import ConversationBackend
from frogdesk.engine.llama.errors import SavedStateError

MAGIC = b"FDSEQST1"
"""The first bytes of a saved-state file (format 1)."""
_FIXED = struct.Struct("<8sIQ32s")
"""magic, header length, payload length, sha256 of header + payload."""
MAX_HEADER = 64 << 20
"""The largest header read back (the token list of a 1M-token context fits)."""


@dataclass(frozen=True)
class EngineState:
    """Sequence 0's state with the tokens it holds and the key it was saved under."""

    key: dict[str, Any]
    tokens: tuple[int, ...]
    schedule: tuple[tuple[int, int], ...]
    """The decode calls (start, count) that made the state, in order."""
    data: bytes


def state_key(backend: ConversationBackend, model_id: str) -> dict[str, Any]:
    """Everything a state depends on besides its tokens: model file, llama.cpp build, options.

    `model_id` names the model file's contents (its sha256).
    """
    options = backend.options
    hybrid = backend.model.is_hybrid
    system = llama_cpp.llama_print_system_info()
    return {
        "model": model_id,
        "llama_cpp": llama_cpp.__version__,
        "system": system.decode("utf-8", "replace") if isinstance(system, bytes) else str(system),
        "n_ctx": backend.context.n_ctx,
        "n_batch": backend.context.n_batch,
        "n_ubatch": options.ubatch,
        "type_kv": options.kv_cache_type,
        "flash_attn": options.flash_attn_for(hybrid),
        "n_gpu_layers": options.n_gpu_layers,
        "n_vocab": backend.model.n_vocab,
        "hybrid": hybrid,
    }


def capture(backend: ConversationBackend, key: dict[str, Any]) -> EngineState | None:
    """The backend's evaluated state now, or None when it holds nothing or is out of step."""
    t = backend.transcript
    if t.n_past <= 0 or t.n_past > len(t.tokens):
        return None
    # An interrupt between a decode and its bookkeeping leaves more cells than n_past says.
    if backend.context.held_positions()[1] + 1 != t.n_past:
        return None
    if sum(n for _, n in t.schedule) != t.n_past:
        return None
    data = backend.context.save_sequence()
    if not data:
        return None
    return EngineState(
        dict(key), tuple(t.tokens[: t.n_past]), tuple((s, n) for s, n in t.schedule), data
    )


def captured_opening(backend: ConversationBackend, key: dict[str, Any]) -> EngineState | None:
    """The state the backend captured on passing the shared opening (None: none captured)."""
    opening = backend.conversation.opening_state
    if opening is None or sum(n for _, n in opening.schedule) != len(opening.tokens):
        return None
    return EngineState(dict(key), opening.tokens, opening.schedule, opening.data)


def _header(state: EngineState) -> bytes:
    doc = {
        "key": state.key,
        "tokens": list(state.tokens),
        "schedule": [list(call) for call in state.schedule],
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def write_to(handle: BinaryIO, state: EngineState) -> int:
    """Write `state` in the file format; the bytes written."""
    header = _header(state)
    digest = hashlib.sha256(header)
    digest.update(state.data)
    handle.write(_FIXED.pack(MAGIC, len(header), len(state.data), digest.digest()))
    handle.write(header)
    handle.write(state.data)
    return _FIXED.size + len(header) + len(state.data)


def read_state(path: Path, max_bytes: int) -> EngineState:
    """The state in `path`, checked for shape, size (at most `max_bytes`) and checksum.

    Raises SavedStateError saying what is wrong, FileNotFoundError when there is none.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SavedStateError("the saved state is not a regular file")
        if info.st_size > max_bytes:
            raise SavedStateError(f"the saved state is larger than the cap ({info.st_size} bytes)")
        fixed = handle.read(_FIXED.size)
        if len(fixed) != _FIXED.size:
            raise SavedStateError("the saved state is truncated")
        magic, header_len, payload_len, checksum = _FIXED.unpack(fixed)
        if magic != MAGIC:
            raise SavedStateError("the saved state is not in a format this FrogDesk reads")
        if header_len > MAX_HEADER or _FIXED.size + header_len + payload_len != info.st_size:
            raise SavedStateError("the saved state is truncated or damaged (sizes disagree)")
        header = handle.read(header_len)
        data = handle.read(payload_len)
    if len(header) != header_len or len(data) != payload_len:
        raise SavedStateError("the saved state is truncated")
    digest = hashlib.sha256(header)
    digest.update(data)
    if digest.digest() != checksum:
        raise SavedStateError("the saved state is damaged (checksum mismatch)")
    return _parse(header, data)


def _parse(header: bytes, data: bytes) -> EngineState:
    try:
        doc = json.loads(header)
    except ValueError:
        raise SavedStateError("the saved state's header is not JSON") from None
    if not isinstance(doc, dict):
        raise SavedStateError("the saved state's header is not an object")
    key, tokens, schedule = doc.get("key"), doc.get("tokens"), doc.get("schedule")
    if not isinstance(key, dict) or not isinstance(tokens, list) or not isinstance(schedule, list):
        raise SavedStateError("the saved state's header lacks its key or tokens")
    if not tokens or not all(type(t) is int and 0 <= t < 1 << 31 for t in tokens):
        raise SavedStateError("the saved state's tokens are not token ids")
    calls: list[tuple[int, int]] = []
    pos = 0
    for call in schedule:
        if not (isinstance(call, list) and len(call) == 2 and all(type(v) is int for v in call)):
            raise SavedStateError("the saved state's decode calls are malformed")
        start, count = call
        if start != pos or count <= 0:
            raise SavedStateError("the saved state's decode calls do not cover its tokens")
        calls.append((start, count))
        pos += count
    if pos != len(tokens):
        raise SavedStateError("the saved state's decode calls do not cover its tokens")
    return EngineState(key, tuple(tokens), tuple(calls), data)


def key_difference(saved: dict[str, Any], wanted: dict[str, Any]) -> str:
    """Which parts of two keys differ, in words ("" when they are the same)."""
    names = sorted(k for k in set(saved) | set(wanted) if saved.get(k) != wanted.get(k))
    words = {"model": "another model file", "llama_cpp": "another llama.cpp"}
    return ", ".join(words.get(name, name) for name in names)


def install(
    backend: ConversationBackend,
    state: EngineState,
    key: dict[str, Any],
    messages: Sequence[Message],
    tools: Sequence[ToolSchema],
    *,
    enable_thinking: bool,
) -> int:
    """Load `state` into a fresh backend as the evaluated start of `messages`; tokens loaded.

    The key and the tokens are checked before llama.cpp sees the data: the state must be
    saved under `key` and hold a prefix of the tokens `messages` render to (a transformer
    may keep the common part of a longer state). Afterwards the context holds exactly
    `transcript.tokens[:n_past]`; the rest is decoded by the next reply. Raises
    SavedStateError (the backend is then as fresh as before).
    """
    with backend._busy:
        return install_unlocked(backend, state, key, messages, tools,
                                enable_thinking=enable_thinking)  # fmt: skip


def install_unlocked(
    backend: ConversationBackend,
    state: EngineState,
    key: dict[str, Any],
    messages: Sequence[Message],
    tools: Sequence[ToolSchema],
    *,
    enable_thinking: bool,
) -> int:
    """`install`, for a caller that already holds the backend (inside its `generate`)."""
    differs = key_difference(state.key, key)
    if differs:
        raise SavedStateError(f"the state was saved with {differs}")
    if backend.drafting is not None and backend.drafting.mtp is not None:
        raise SavedStateError("the MTP draft head must read the transcript itself")
    conversation = backend.conversation
    t = conversation.transcript
    if t.tokens or t.n_past:
        raise SavedStateError("the backend already holds a conversation")
    plan = conversation.plan(
        messages, tools, enable_thinking=enable_thinking, generation_prompt=False
    )
    if plan.prompt_len > backend.context.n_ctx:
        raise SavedStateError("the conversation no longer fits the context")
    saved = list(state.tokens)
    common = _common_prefix(saved, plan.tokens)
    if common < len(saved) and (backend.model.is_hybrid or common == 0):
        raise SavedStateError("the state holds tokens the transcript does not")
    conversation.apply(plan)
    try:
        _set_data(backend, state.data, len(saved))
        if common < len(saved) and not backend.context.trim(common):
            raise SavedStateError("could not drop the tokens the transcript does not hold")
    except BaseException:
        conversation.forget()
        raise
    conversation.loaded(common, _cut_schedule(state.schedule, common))
    return common


def _set_data(backend: ConversationBackend, data: bytes, n_tokens: int) -> None:
    """Hand the bytes to llama.cpp and check that the sequence then holds positions 0..n-1."""
    target = backend.context
    if not target.load_sequence(data):
        raise SavedStateError("llama.cpp refused the saved state")
    # a recurrent cell holds only its newest position, so a hybrid memory's minimum is that one
    first = n_tokens - 1 if backend.model.is_hybrid else 0
    if target.held_positions() != (first, n_tokens - 1):
        raise SavedStateError("the saved state does not hold the tokens its header names")


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _cut_schedule(schedule: Sequence[tuple[int, int]], end: int) -> list[tuple[int, int]]:
    """The decode calls of the first `end` tokens (a batch's rows do not depend on later rows)."""
    out: list[tuple[int, int]] = []
    for start, count in schedule:
        if start >= end:
            break
        out.append((start, min(count, end - start)))
    return out
