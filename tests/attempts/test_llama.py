"""N attempts as N sequences of one llama context: shared prefix, same logits, independence."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from frogdesk.engine.chat import EngineEvent, Finished, GenerationSettings, Message, Usage
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.shared import SharedLlama
from frogdesk.leaf.schemas import SYSTEM_PROMPT, tool_schemas

N = 3
OPENING = [Message("system", SYSTEM_PROMPT), Message("user", "Fix the failing test in calc.py.")]
GREEDY = GenerationSettings(temperature=0.0, max_tokens=12, seed=3)
OPTIONS = LlamaOptions(n_ctx=2048, n_threads=2)


def run_all(shared: SharedLlama) -> dict[int, list[EngineEvent]]:
    events: dict[int, list[EngineEvent]] = {}

    def attempt(i: int) -> None:
        events[i] = list(shared.backends[i].generate(OPENING, tool_schemas(), GREEDY))

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(N)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return events


def finished(events: list[EngineEvent]) -> Finished:
    return next(e for e in events if isinstance(e, Finished))


def usage(events: list[EngineEvent]) -> Usage:
    return next(e for e in events if isinstance(e, Usage))


@pytest.mark.parametrize("model", ["smollm2", "qwen35"])
def test_prefix_once_and_every_attempt_as_if_alone(
    model: str, smollm2_gguf: Path, qwen35_gguf: Path
) -> None:
    path = smollm2_gguf if model == "smollm2" else qwen35_gguf
    alone = LlamaBackend(path, OPTIONS)
    try:
        reference = list(alone.generate(OPENING, tool_schemas(), GREEDY))
        reference_logits = alone.last_logits()
        ref_usage = usage(reference)
    finally:
        alone.close()
    shared = SharedLlama(path, N, OPTIONS)
    try:
        events = run_all(shared)
        stats = shared.stats
    finally:
        shared.close()
    prefix = shared.prefix_evaluated
    generation_prompt = ref_usage.evaluated_tokens - prefix
    assert prefix > 0 and generation_prompt > 0
    for i in range(N):
        used = usage(events[i])
        # the opening was evaluated once, for all: each attempt read only its generation prompt
        assert used.reused_tokens == prefix and used.evaluated_tokens == generation_prompt
        assert finished(events[i]).raw_tokens == finished(reference).raw_tokens
    generated = len(finished(reference).raw_tokens)
    # the opening once, then per attempt its generation prompt and each sampled token but
    # the last (a reply cut by the cap does not evaluate its last token)
    assert stats.tokens == prefix + N * (generation_prompt + generated - 1)
    assert sum(stats.per_sequence.values()) == stats.tokens
    assert stats.widest == N  # decode steps of all attempts went into shared batches
    if model == "smollm2":
        # one attempt at a time on the shared context (the batch shapes of the run alone):
        # the logits after its reply are identical to the run alone
        again = SharedLlama(path, N, OPTIONS)
        try:
            for i in range(N):
                list(again.backends[i].generate(OPENING, tool_schemas(), GREEDY))
                assert again.backends[i].last_logits() == reference_logits
        finally:
            again.close()


def test_an_attempt_that_breaks_off_does_not_stop_the_others(smollm2_gguf: Path) -> None:
    shared = SharedLlama(smollm2_gguf, N, OPTIONS)
    results: dict[int, Finished | str] = {}
    cancel = threading.Event()

    def crashing() -> None:
        stream = shared.backends[0].generate(OPENING, tool_schemas(), GREEDY)
        try:
            for count, _event in enumerate(stream):
                if count == 3:
                    raise RuntimeError("the attempt's loop fell over")
        except RuntimeError as exc:
            results[0] = str(exc)
        finally:
            stream.close()

    def cancelled() -> None:
        stream = shared.backends[1].generate(OPENING, tool_schemas(), GREEDY, cancel)
        for count, event in enumerate(stream):
            if count == 2:
                cancel.set()
            if isinstance(event, Finished):
                results[1] = event

    def steady() -> None:
        events = list(shared.backends[2].generate(OPENING, tool_schemas(), GREEDY))
        results[2] = finished(events)

    threads = [threading.Thread(target=f) for f in (crashing, cancelled, steady)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        assert not any(thread.is_alive() for thread in threads)
    finally:
        shared.close()
    assert results[0] == "the attempt's loop fell over"
    stopped = results[1]
    assert isinstance(stopped, Finished) and stopped.reason == "cancelled"
    steady_end = results[2]
    assert isinstance(steady_end, Finished) and steady_end.reason in ("length", "stop")
    assert len(steady_end.raw_tokens) > 0


def test_each_sequence_gets_the_context_asked_up_to_the_training_length(smollm2_gguf: Path) -> None:
    """Two sequences of 8,192 (SmolLM2's training length) get 8,192 each, not 4,096: the
    training length bounds one sequence, not the whole multi-sequence context."""
    options = LlamaOptions(n_ctx=8192, n_threads=2)
    shared = SharedLlama(smollm2_gguf, 2, options)
    try:
        assert shared.model.n_ctx_train == 8192
        assert shared.n_ctx_seq == 8192
    finally:
        shared.close()


def test_one_sequence_is_still_capped_at_the_training_length(smollm2_gguf: Path) -> None:
    """The control: asking one sequence for twice the training length gives the training
    length, so the check above is the cap moving, not the cap gone."""
    shared = SharedLlama(smollm2_gguf, 1, LlamaOptions(n_ctx=16384, n_threads=2))
    try:
        assert shared.n_ctx_seq == 8192
    finally:
        shared.close()
