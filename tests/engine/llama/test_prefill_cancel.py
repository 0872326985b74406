"""A stop during a long prompt's prefill is heard after the ubatch in flight: the reply ends
cancelled before the whole prompt (or even the whole batch) is read, and the next turn reads
on from where it stopped."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from frogdesk.engine.chat import Finished, GenerationSettings, Message, Usage
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.load.options import LlamaOptions

BATCH, UBATCH = 64, 32
LONG_TASK = "Count the words in this sentence please. " * 15


def _generate(backend: LlamaBackend, cancel: threading.Event) -> tuple[Usage, Finished]:
    messages = [Message(role="user", content=LONG_TASK)]
    settings = GenerationSettings(max_tokens=2, seed=1, enable_thinking=False)
    events = list(backend.generate(messages, [], settings, cancel))
    usage = [e for e in events if isinstance(e, Usage)]
    finished = [e for e in events if isinstance(e, Finished)]
    assert len(usage) == 1 and len(finished) == 1
    return usage[0], finished[0]


@pytest.mark.llama
def test_a_cancel_during_the_prefill_stops_it_at_the_next_batch(smollm2_gguf: Path) -> None:
    options = LlamaOptions(n_ctx=1024, n_batch=BATCH, n_ubatch=UBATCH, speculative=False)
    backend = LlamaBackend(smollm2_gguf, options)
    try:
        cancel = threading.Event()
        read: set[int] = set()

        def heard(done: int, total: int) -> None:
            if 0 < done < total:
                read.add(done)
                cancel.set()  # the user stops it once the first ubatch is read

        backend.watch_prefill(heard)
        usage, finished = _generate(backend, cancel)
        assert finished.reason == "cancelled"
        assert usage.prompt_tokens > 2 * BATCH  # several batches were left to read
        # one llama_decode call of one ubatch, not the batch of two it belongs to
        assert usage.evaluated_tokens == UBATCH and read == {UBATCH}
        assert backend.transcript.n_past == UBATCH  # the context holds what was read, no more

        # Positive control: the same prompt, not stopped, is read whole by the same loop.
        backend.watch_prefill(None)
        usage, finished = _generate(backend, threading.Event())
        assert finished.reason != "cancelled"
        assert usage.reused_tokens == UBATCH  # it went on from what was read before the stop
        assert usage.reused_tokens + usage.evaluated_tokens == usage.prompt_tokens
    finally:
        backend.close()
