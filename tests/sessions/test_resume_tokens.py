"""`frogdesk run --backend llama`, then `sessions resume` in a new process: the model re-reads its own tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from tests.support.scripted import frogdesk, make_repo

pytestmark = [pytest.mark.llama, pytest.mark.slow]

CUT_EXITS = {"max_tokens_per_turn", "max_turns"}


def test_a_resumed_llama_session_reads_exactly_the_tokens_it_generated(
    tmp_path: Path, qwen35_gguf: Path, sandboxed_bash: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the re-read is what this pins: no saved engine state (tests/engine/test_saved_state.py)
    monkeypatch.setenv("FROGDESK_SAVED_STATE_MAX_BYTES", "0")
    repo = make_repo(tmp_path)
    common = ["--max-context", "2048", "--max-tokens-per-turn", "24", "--json"]
    first = frogdesk(
        "run", "Fix the failing test in test_calc.py.", "--repo", str(repo), "--backend", "llama",
        "--model", str(qwen35_gguf), "--max-steps", "1", "--temperature", "0", "--seed", "7",
        *common, timeout=600,
    )  # fmt: skip
    summary = json.loads(first.stdout)
    assert summary["exit_reason"] in CUT_EXITS, first.stderr
    store = SessionStore(AppPaths.default().sessions_dir)
    transcript = store.read_transcript(summary["session_id"])
    [step] = transcript.steps
    assert step.usage is not None and step.finish == "length"
    sampled = transcript.raw_tokens[0]
    assert len(sampled) == step.usage.completion_tokens == 24
    # The restored message carries both; the random model's tokens are not its text's split.
    [reply] = [m for m in transcript.conversation() if m.role == "assistant"]
    assert reply.raw == transcript.raw_texts[0] and reply.raw_tokens == sampled
    b = LlamaBackend(qwen35_gguf, LlamaOptions(n_ctx=2048, n_threads=2))
    try:
        assert b.model.detokenize(list(sampled)) == reply.raw
        assert b.model.tokenize(reply.raw) != list(sampled)
        # The original process held prompt + sampled + `<|im_end|>\n`; next comes the prompt.
        between = b.model.tokenize("<|im_end|>\n<|im_start|>assistant\n<think>\n")
    finally:
        b.close()

    resumed = frogdesk("sessions", "resume", summary["session_id"], "--max-steps", "2", *common,
                       timeout=600)  # fmt: skip
    assert json.loads(resumed.stdout)["n_steps"] == 2, resumed.stderr
    after = store.read_transcript(summary["session_id"])
    usage = after.steps[1].usage
    assert usage is not None
    assert usage.reused_tokens == 0  # a new process: everything is read again...
    # ...and it is exactly what the first process held, plus the next generation prompt.
    assert usage.prompt_tokens == step.usage.prompt_tokens + len(sampled) + len(between)
    assert after.raw_tokens[0] == sampled
