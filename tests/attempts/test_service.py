"""run_attempts on real sessions (script backend, real git, real sandbox): isolation and failures."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from frogdesk import config
from frogdesk.attempts.errors import AttemptsError
from frogdesk.attempts.service import choose_attempt, run_attempts
from frogdesk.attempts.spec import AttemptsSpec
from frogdesk.attempts.verify import run_check
from frogdesk.engine.chat import (
    Backend,
    BackendInfo,
    EngineEvent,
    GenerationSettings,
    Message,
    ToolSchema,
)
from frogdesk.leaf.events import Notice
from frogdesk.paths import AppPaths
from frogdesk.sessions.parts import default_backend
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.service import SessionService
from tests.attempts.scripts import CHECK, edit_then_answer, three_scripts
from tests.support.plain_shell import PlainShell
from tests.support.scripted import call, fingerprint, make_repo, write_script


def service(**overrides: object) -> SessionService:
    paths = AppPaths.default()
    return SessionService(paths, config.load(paths.config_file, environ={}, overrides=overrides))


class CrashingBackend:
    """The real script backend of one attempt, with its second reply breaking the engine."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.calls = 0

    @property
    def info(self) -> BackendInfo:
        return self.inner.info

    def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> Iterator[EngineEvent]:
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("engine fell over")
        return self.inner.generate(messages, tools, settings, cancel)

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
        return self.inner.count_tokens(messages, tools)

    def close(self) -> None:
        self.inner.close()


def test_a_crash_and_a_timeout_do_not_stop_the_other_attempts(
    tmp_path: Path, sandboxed_bash: str
) -> None:
    repo = make_repo(tmp_path)
    crash = write_script(tmp_path / "crash.jsonl", edit_then_answer("return a * b", "never"))
    slow = write_script(
        tmp_path / "slow.jsonl",
        ["Wait.\n</think>\n\n" + call("Bash", command="sleep 60"), "late\n</think>\n\nlate"],
    )
    right = three_scripts(tmp_path)[1]

    def factory(record: SessionRecord, settings: config.Settings, done: int = 0) -> Backend:
        inner = default_backend(record, settings, done)
        return CrashingBackend(inner) if record.model == str(crash) else inner

    outcome = run_attempts(
        service(max_time=4.0),
        AttemptsSpec(
            "fix add",
            repo,
            3,
            backend="script",
            scripts=(str(crash), str(slow), str(right)),
            check=CHECK,
        ),
        backend_factory=factory,
    )
    by_index = {a.index: a for a in outcome.attempts}
    # the loop turns an engine failure into Leaf's exit reason; the attempt ends on its own
    assert by_index[0].exit_reason == "llm_query_error" and "engine fell over" in by_index[0].error
    assert by_index[0].files_changed == ("calc.py",)  # its work so far is kept for a look
    assert by_index[1].exit_reason == "max_time"
    assert by_index[2].exit_reason == "agent" and by_index[2].check is not None
    assert by_index[2].check.passed
    assert outcome.attempts[0].index == 2 and outcome.chosen == by_index[2].session_id


class _Told:
    """An operator that records what it is told and refuses every command."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def approve(self, command: str) -> bool:
        return False

    def notice(self, notice: Notice) -> None:
        pass

    def progress(self, line: str) -> None:
        self.lines.append(line)


def test_each_attempt_has_its_own_seed_and_the_same_budgets(
    tmp_path: Path, sandboxed_bash: str
) -> None:
    repo = make_repo(tmp_path)
    svc = service(seed=40, max_steps=7)
    told = _Told()
    outcome = run_attempts(
        svc,
        AttemptsSpec(
            "fix add",
            repo,
            3,
            backend="script",
            scripts=tuple(map(str, three_scripts(tmp_path))),
            check="",
        ),
        operator=told,
    )
    # the operator hears the session ids once, when all exist
    ids = sorted(a.session_id for a in outcome.attempts)
    started = [line for line in told.lines if line.startswith("attempts: ")]
    assert len(started) == 1 and sorted(started[0].split()[1:]) == ids
    records = [svc.store.get(a.session_id) for a in outcome.attempts]
    assert [r.settings["seed"] for r in records] == [40, 41, 42]
    assert {r.settings["max_steps"] for r in records} == {7}
    assert len({r.worktree for r in records}) == 3
    assert not outcome.ranked and outcome.chosen is None
    assert "not ranked" in outcome.notes[0]


def test_the_check_cannot_write_outside_its_worktree(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    outside = tmp_path / "outside.txt"
    attack = f"touch inside.txt; echo pwned > {repo}/pwned.txt; echo pwned > {outside}"
    svc = service()
    outcome = run_attempts(
        svc,
        AttemptsSpec(
            "t", repo, 1, backend="script", scripts=(str(three_scripts(tmp_path)[2]),), check=attack
        ),
    )
    (attempt,) = outcome.attempts
    worktree = Path(svc.store.get(attempt.session_id).worktree)
    assert attempt.check is not None  # its exit code depends on how the sandbox hides /tmp
    assert (worktree / "inside.txt").exists()  # the check did run, and could write at home
    assert not outside.exists() and not (repo / "pwned.txt").exists()
    assert fingerprint(repo) == before
    # positive control: the same command, unconfined, does write both files
    control = run_check(PlainShell(), worktree, attack, 30)
    assert control.passed and outside.exists() and (repo / "pwned.txt").exists()


def test_a_check_that_hangs_is_killed_and_fails(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    outcome = run_attempts(
        service(),
        AttemptsSpec(
            "t",
            repo,
            1,
            backend="script",
            scripts=(str(three_scripts(tmp_path)[1]),),
            check="sleep 60",
            check_timeout=1.0,
        ),
    )
    (attempt,) = outcome.attempts
    assert attempt.check is not None and attempt.check.timed_out and not attempt.check.passed
    assert attempt.check.summary == "timed out after 1s"
    assert outcome.chosen is None


def test_choosing_discards_the_others_on_request(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    svc = service()
    outcome = run_attempts(
        svc,
        AttemptsSpec(
            "fix add",
            repo,
            3,
            backend="script",
            scripts=tuple(map(str, three_scripts(tmp_path))),
            check=CHECK,
        ),
    )
    assert outcome.chosen is not None
    with pytest.raises(AttemptsError, match="not one of these attempts"):
        choose_attempt(svc, outcome, "nope", keep_others=False)
    assert choose_attempt(svc, outcome, outcome.chosen, keep_others=True) == []
    gone = choose_attempt(svc, outcome, outcome.chosen, keep_others=False)
    assert len(gone) == 2
    assert [svc.store.get(i).status for i in gone] == ["discarded", "discarded"]
    assert svc.store.get(outcome.chosen).status == "finished"
    assert Path(svc.store.get(outcome.chosen).worktree).is_dir()
    assert not any(Path(svc.store.get(i).worktree).exists() for i in gone)
