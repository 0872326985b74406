"""Attempts started from a workbench that has the model loaded (the TUI's) load no second copy."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from frogdesk.attempts.record import AttemptsOutcome
from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.engine.chat import GenerationSettings, Message
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.paths import AppPaths
from frogdesk.sessions.operator import NOBODY
from tests.support.scripted import make_repo

pytestmark = [pytest.mark.llama, pytest.mark.slow]


def attempts(bench: CoreWorkbench) -> AttemptsOutcome:
    return bench.run_attempts(
        "fix add in calc.py",
        2,
        "true",
        operator=NOBODY,
        cancel=threading.Event(),
        on_event=lambda _index, _event: None,
    )


def test_attempts_share_the_loaded_model_and_leave_it_loaded(
    tmp_path: Path, smollm2_gguf: Path, sandboxed_bash: str
) -> None:
    repo = make_repo(tmp_path)
    settings = Settings.of(
        model=str(smollm2_gguf), threads=2, context_size=2048, max_steps=1,
        max_tokens_per_turn=8, temperature=0.6, seed=5, speculative=False,
    )  # fmt: skip
    backend = LlamaBackend(smollm2_gguf, LlamaOptions(n_ctx=2048, n_threads=2))
    bench = CoreWorkbench(repo, settings, backend=backend, paths=AppPaths.default())
    try:
        before = LlamaModel.loads
        outcome = attempts(bench)
        assert LlamaModel.loads == before  # the attempts ran on the loaded model's weights
        assert len(outcome.attempts) == 2
        # each ran (8 tokens per reply cut it short) and was checked in its worktree
        assert all(a.session_id and a.exit_reason for a in outcome.attempts), outcome.attempts
        assert all(a.check is not None and a.check.exit_code == 0 for a in outcome.attempts)
        # the session's own backend (its model and context) still works afterwards
        hello = [Message("user", "Say hello.")]
        events = list(backend.generate(hello, [], GenerationSettings(max_tokens=4, seed=1)))
        assert events and backend.transcript.n_past > 0

        # positive control: the same attempts with no model loaded load exactly one
        bench.backend = None
        attempts(bench)
        assert LlamaModel.loads == before + 1
    finally:
        backend.close()
