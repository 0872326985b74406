"""Issue 32: a long prompt's prefill is heard batch by batch, and `frogdesk run` shows it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from frogdesk.commands.progress import ProgressPrinter
from frogdesk.engine.chat import GenerationSettings, Message
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.load.options import LlamaOptions


@pytest.mark.llama
def test_the_prefill_reports_each_batch_up_to_the_whole_prompt(smollm2_gguf: Path) -> None:
    # Small batches keep the prompt short: several batches of 32 tokens.
    backend = LlamaBackend(smollm2_gguf, LlamaOptions(n_ctx=1024, n_batch=32, speculative=False))
    heard: list[tuple[int, int]] = []
    try:
        backend.watch_prefill(lambda done, total: heard.append((done, total)))
        long_task = "Count the words in this sentence please. " * 15
        messages = [Message(role="user", content=long_task)]
        settings = GenerationSettings(max_tokens=2, seed=1, enable_thinking=False)
        list(backend.generate(messages, [], settings))
        first = list(heard)
        # The next turn reads only its new tokens: a prefill of its own, from 0 again.
        heard.clear()
        messages.append(Message(role="assistant", content="ok"))
        messages.append(Message(role="user", content="And now?"))
        list(backend.generate(messages, [], settings))
    finally:
        backend.close()
    total = first[0][1]
    assert total > 3 * 32  # several batches
    assert first[0] == (0, total) and first[-1] == (total, total)
    done = [d for d, t in first]
    assert done == sorted(done) and all(t == total for _, t in first)
    assert len(set(done)) >= 3  # heard between batches, not only at the ends
    assert heard[0][0] == 0 and heard[-1][0] == heard[-1][1] < total


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_printer_shows_tokens_rate_and_eta_once_a_prefill_is_slow() -> None:
    clock = _Clock()
    out = io.StringIO()
    printer = ProgressPrinter(out, clock=clock)
    printer.prefill(0, 600)
    clock.now += 0.2
    printer.prefill(600, 600)
    assert out.getvalue() == ""  # a quick prefill says nothing; the reply line has its tokens
    printer.prefill(0, 3000)
    clock.now += 2.0
    printer.prefill(1000, 3000)
    clock.now += 1.0
    printer.prefill(1500, 3000)  # off a terminal: not a line per batch
    clock.now += 2.0
    printer.prefill(3000, 3000)
    assert out.getvalue().splitlines() == [
        "  prompt: 1,000/3,000 tokens, 500 tok/s, 4s left",
        "  prompt: 3,000/3,000 tokens, 600 tok/s",
    ]
    quiet = io.StringIO()
    silent = ProgressPrinter(quiet, quiet=True, clock=clock)
    silent.prefill(0, 3000)
    clock.now += 5.0
    silent.prefill(3000, 3000)
    assert quiet.getvalue() == ""
