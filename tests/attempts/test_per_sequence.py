"""The single-attempt engine's guarantees, per sequence of the shared llama context.

N attempts run at once, each with tool results of its own, so their conversations part
after the first reply. Per attempt: only new tokens are ever decoded (no re-read), its
decode calls cover its own token transcript without gaps, each
turn boundary of the hybrid model has a snapshot of that sequence's own state, and an
edit on one attempt goes back to its own snapshot without touching the others.

Neither tokens nor logits are compared with a single-attempt run here: while attempts run
at once, which of them share a batch depends on thread timing, a ubatch attends over as
many KV cells as its longest sequence holds (padded to 256) and the hybrid layers run in
ubatches of several rows, so the logits' rounding differs from run to run and a greedy
near-tie may fall either way. With the same batch shapes (one attempt at a time) the
logits are equal, and attempts at once sample the same short replies: see test_llama.py.
"""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest

from frogdesk.engine.chat import GenerationSettings, Message, Reply
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.shared import SharedLlama
from frogdesk.leaf.events import LoopEvent
from frogdesk.leaf.loop import LoopConfig, run_loop
from frogdesk.leaf.records import LoopResult
from frogdesk.leaf.runner import ToolRunner
from frogdesk.leaf.schemas import SYSTEM_PROMPT, tool_schemas
from tests.support.plain_shell import PlainShell

pytestmark = pytest.mark.llama

N = 3
TURNS = 3
OPTIONS = LlamaOptions(n_ctx=4096, n_threads=2, speculative=False)
OPENING = [Message("system", SYSTEM_PROMPT), Message("user", "Fix the failing test in calc.py.")]


def observation(attempt: int, turn: int) -> Message:
    """A tool result of this attempt's own (the attempts see different files)."""
    lines = "\n".join(
        f"{k}. value_{attempt}_{turn}_{k} = compute({k}, {attempt})" for k in range(6)
    )
    return Message("tool", f"calc_{attempt}.py\n{lines}")


def greedy(turn: int) -> GenerationSettings:
    return GenerationSettings(temperature=0.0, max_tokens=8, seed=turn)


def reply(backend: LlamaBackend, messages: list[Message], settings: GenerationSettings) -> Reply:
    out = Reply()
    for event in backend.generate(messages, tool_schemas(), settings):
        out.add(event)
    assert out.finish is not None and out.usage is not None
    return out


def assistant(r: Reply) -> Message:
    return Message("assistant", r.content, r.reasoning)


def conversation(backend: LlamaBackend, attempt: int) -> tuple[list[Message], list[Reply]]:
    """TURNS replies, each followed by this attempt's tool result."""
    messages, replies = list(OPENING), []
    for turn in range(TURNS):
        r = reply(backend, messages, greedy(turn))
        replies.append(r)
        messages += [assistant(r), observation(attempt, turn)]
    return messages, replies


def usage(r: Reply) -> tuple[int, int, int, int]:
    assert r.usage is not None
    u = r.usage
    return u.prompt_tokens, u.evaluated_tokens, u.reused_tokens, u.completion_tokens


@pytest.mark.slow
@pytest.mark.parametrize("model", ["smollm2", "qwen35"])
def test_each_attempt_keeps_its_own_transcript_snapshots_and_never_rereads(
    model: str, request: pytest.FixtureRequest
) -> None:
    path: Path = request.getfixturevalue(f"{model}_gguf")
    shared = SharedLlama(path, N, OPTIONS)
    try:
        results: dict[int, tuple[list[Message], list[Reply]]] = {}
        threads = [
            threading.Thread(
                target=lambda i=i: results.__setitem__(i, conversation(shared.backends[i], i))
            )
            for i in range(N)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert shared.stats.widest == N
        for i in range(N):
            replies = results[i][1]
            for before, after in itertools.pairwise(replies):
                prompt, _, _, completion = usage(before)
                # everything up to the previous reply's last sampled token was evaluated
                known = prompt + completion - 1
                assert usage(after)[2] == known
                assert usage(after)[1] == usage(after)[0] - known
        transcripts = [shared.backends[i].transcript for i in range(N)]
        # the attempts parted: each transcript holds its own tool results
        assert len({tuple(t.tokens) for t in transcripts}) == N
        if shared.model.is_hybrid:
            for t in transcripts:
                states = [b.state for b in t.boundaries if b.captured]
                assert len(states) >= TURNS and all(states)
            # each sequence snapshotted its own state, not a neighbour's
            last = [
                next(b.state for b in reversed(t.boundaries) if b.captured) for t in transcripts
            ]
            assert len(set(last)) == N

        # An edit of attempt 1's last tool result goes back to attempt 1's own boundary;
        # the others then go on from exactly where they were.
        messages_1 = results[1][0]
        edited = [*messages_1[:-1], Message("tool", "calc_1.py\n1. nothing here")]
        again = reply(shared.backends[1], edited, greedy(TURNS))
        assert usage(again)[2] > usage(results[1][1][0])[0]  # not re-read from the start
        ends = {}
        for i in (0, 2):
            messages = results[i][0]
            prompt, _, _, completion = usage(results[i][1][-1])
            on = reply(shared.backends[i], messages, greedy(TURNS))
            assert usage(on)[2] == prompt + completion - 1
            ends[i] = on
        assert again.finish is not None and ends[0].finish is not None
        for t in [shared.backends[i].transcript for i in range(N)]:
            # each sequence's decode calls cover its transcript once, without gaps: nothing
            # was read twice, nothing skipped (the opening counts once, in the owner's calls)
            position = 0
            for start, count in t.schedule:
                assert start == position
                position += count
            assert position == t.n_past
    finally:
        shared.close()


@pytest.mark.slow
def test_leaf_loops_that_time_out_or_fall_over_leave_the_others_running(
    smollm2_gguf: Path, tmp_path: Path
) -> None:
    """Real Leaf loops on the shared context: one runs out of wall time while the opening is
    read or mid-reply, one's event handler raises mid-reply; the third ends on its own."""
    shared = SharedLlama(smollm2_gguf, N, OPTIONS)
    runner = ToolRunner(tmp_path, PlainShell())
    results: dict[int, LoopResult] = {}
    seen: dict[int, int] = {1: 0}

    def falls_over(_event: LoopEvent) -> None:
        seen[1] += 1
        if seen[1] == 3:
            raise RuntimeError("the attempt's event handler fell over")

    configs = {
        0: LoopConfig(max_time=0.05, max_tokens_per_turn=2000, temperature=0.0),
        1: LoopConfig(max_steps=1, max_tokens_per_turn=64, temperature=0.0),
        2: LoopConfig(max_steps=1, max_tokens_per_turn=16, temperature=0.0),
    }
    handlers = {0: None, 1: falls_over, 2: None}

    def attempt(i: int) -> None:
        messages = [Message("system", SYSTEM_PROMPT), Message("user", "Fix calc.py.")]
        results[i] = run_loop(
            shared.backends[i], tool_schemas(), runner, configs[i], messages,
            on_event=handlers[i],
        )  # fmt: skip

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(N)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        assert not any(thread.is_alive() for thread in threads)
        transcript = shared.backends[2].transcript
    finally:
        shared.close()
    assert results[0].exit_reason == "max_time"
    assert results[1].exit_reason == "llm_query_error"
    assert "fell over" in results[1].error
    # the third attempt ran its reply to its own end
    assert results[2].exit_reason in ("max_tokens_per_turn", "max_turns", "agent")
    assert len(results[2].steps) == 1 and transcript.n_past > shared.prefix_evaluated
