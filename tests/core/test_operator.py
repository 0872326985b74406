"""One operator per session: given once when the workbench hands a session out, it answers for
that session's runs only; a later start (the last writer, before) no longer takes them over."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreSession, CoreWorkbench
from frogdesk.leaf.approval import DECLINED
from frogdesk.leaf.events import LoopEvent, Notice, ToolFinished
from frogdesk.sandbox.errors import SandboxError
from frogdesk.sandbox.levels import detect
from frogdesk.sessions.service import UNASKED_WARNING
from tests.support.scripted import call, fingerprint, make_repo, write_script


@dataclass
class Recording:
    """An operator that answers every question the same way and remembers it."""

    answer: bool
    asked: list[str] = field(default_factory=list)
    told: list[Notice] = field(default_factory=list)

    def approve(self, command: str) -> bool:
        self.asked.append(command)
        return self.answer

    def notice(self, notice: Notice) -> None:
        self.told.append(notice)

    def progress(self, line: str) -> None:
        self.told.append(Notice(line))


@pytest.fixture
def bwrap() -> None:
    try:
        detect("bwrap")
    except SandboxError as exc:
        pytest.skip(str(exc))


def _observations(session: CoreSession) -> list[str]:
    seen: list[str] = []

    def emit(event: LoopEvent) -> None:
        if isinstance(event, ToolFinished):
            seen.append(event.observation)

    session.run("", threading.Event(), emit)
    session.close()
    return seen


def test_the_operator_is_told_when_nothing_will_ask(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    script = write_script(tmp_path / "s.jsonl", ["Done.\n</think>\n\nok"])
    told = Recording(True)
    for approval in ("never", "always"):  # the second is the control: nothing to warn about
        settings = Settings.of(backend="script", sandbox="none", bash_approval=approval)
        bench = CoreWorkbench(repo, settings, script=script)
        _observations(bench.start(bench._spec("t"), told))
    assert [n.text for n in told.told] == [UNASKED_WARNING]


def test_each_session_asks_its_own_operator(tmp_path: Path, bwrap: None) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    script = write_script(
        tmp_path / "s.jsonl",
        ["Run.\n</think>\n\n" + call("Bash", command="touch marker"), "Done.\n</think>\n\nok"],
    )
    settings = Settings.of(backend="script", sandbox="bwrap", bash_approval="always")
    bench = CoreWorkbench(repo, settings, script=script)
    refuses, allows = Recording(False), Recording(True)
    first = bench.start(bench._spec("first"), refuses)
    second = bench.start(bench._spec("second"), allows)  # once, this took over every session
    assert _observations(first) == [f"CommandDeclined: {DECLINED}"]
    assert (refuses.asked, allows.asked) == (["touch marker"], [])
    assert not (Path(first.record.worktree) / "marker").exists()
    # positive control: the second session's operator says yes, and its command runs
    assert _observations(second)[0].startswith("Exit code: 0\n")
    assert allows.asked == ["touch marker"] and refuses.asked == ["touch marker"]
    assert (Path(second.record.worktree) / "marker").exists()
    # a reopened session is given its operator again, once, for all its runs
    assert bench.open_session(first.record.id, allows).operator is allows
    assert fingerprint(repo) == before


def test_attempts_ask_the_operator_before_their_check(tmp_path: Path, bwrap: None) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    script = write_script(tmp_path / "s.jsonl", ["Done.\n</think>\n\nok"])
    settings = Settings.of(backend="script", sandbox="bwrap", bash_approval="always")
    bench = CoreWorkbench(repo, settings, script=script)
    check = "touch checked-marker"
    for operator in (Recording(False), Recording(True)):  # the second is the positive control
        outcome = bench.run_attempts(
            "t", 2, check, operator, threading.Event(), lambda _index, _event: None
        )
        assert operator.asked == [check, check]
        for attempt in outcome.attempts:
            assert attempt.check is not None
            marker = Path(bench.service.store.get(attempt.session_id).worktree) / "checked-marker"
            assert attempt.check.passed == operator.answer == marker.exists()
            if not operator.answer:
                assert DECLINED in attempt.check.summary
    assert fingerprint(repo) == before
