"""`bash_approval` in `frogdesk run`, at any sandbox level: asked on a real terminal (pty),
refused with the way forward without one, never asked under `never`, allow-listed commands
run unasked under `untrusted`. Each refusal has its positive control: the same command,
approved (or not held back), does run."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from frogdesk.commands.operator import NO_TERMINAL
from frogdesk.leaf.approval import DECLINED
from frogdesk.paths import AppPaths
from frogdesk.sandbox.errors import SandboxError
from frogdesk.sandbox.levels import detect
from frogdesk.sessions.store import SessionStore
from tests.support.pty_answer import answer_on_pty
from tests.support.scripted import call, fingerprint, make_repo, write_script

QUESTION = b"[y/N] "
REFUSED = f"CommandDeclined: {DECLINED}"


@pytest.fixture(scope="module")
def bwrap() -> str:
    """The bwrap level, or a skip saying why it cannot run here."""
    try:
        detect("bwrap")
    except SandboxError as exc:
        pytest.skip(str(exc))
    return "bwrap"


@dataclass
class Run:
    """What one `frogdesk run` did: its terminal (or stderr), its summary, its session."""

    screen: str
    questions: int
    summary: dict[str, object]
    worktree: Path
    observations: list[str]


def _script(tmp: Path, commands: list[str]) -> Path:
    replies = [f"Step {i}.\n</think>\n\n" + call("Bash", command=c) for i, c in enumerate(commands)]
    return write_script(tmp / "s.jsonl", [*replies, "Done.\n</think>\n\nok"])


def _argv(repo: Path, script: Path, sandbox: str, approve: str | None) -> list[str]:
    argv = [sys.executable, "-m", "frogdesk", "run", "t", "--repo", str(repo)]
    argv += ["--script", str(script), "--sandbox", sandbox, "--json"]
    return argv + (["--approve", approve] if approve else [])


def _finish(screen: str, questions: int, stdout: str) -> Run:
    summary = json.loads(stdout.strip().splitlines()[-1])
    store = SessionStore(AppPaths.default().sessions_dir)
    session_id = str(summary["session_id"])
    record = store.get(session_id)
    steps = store.read_transcript(session_id).steps
    observations = [o.observation for step in steps for o in step.observations]
    return Run(screen, questions, summary, Path(record.worktree), observations)


def on_terminal(
    repo: Path, script: Path, sandbox: str, approve: str | None, answers: list[str]
) -> Run:
    """`frogdesk run` with stdin and stderr on a pseudo-terminal; each question gets the next
    answer (a question past the answers fails the test)."""
    args = _argv(repo, script, sandbox, approve)[3:]  # after `python -m frogdesk`
    done = answer_on_pty(args, QUESTION, answers, pipe_stdout=True)
    return _finish(done.screen, done.asked, done.stdout)


def without_terminal(repo: Path, script: Path, sandbox: str, approve: str | None) -> Run:
    """`frogdesk run` with stdin not a terminal (a pipe from /dev/null), as in CI or a script."""
    done = subprocess.run(
        _argv(repo, script, sandbox, approve),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return _finish(done.stderr, done.stderr.count(QUESTION.decode()), done.stdout)


@pytest.mark.parametrize("source", ["flag", "setting"])
def test_always_at_bwrap_asks_and_no_means_the_command_never_runs(
    tmp_path: Path, bwrap: str, source: str
) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    if source == "setting":
        config = AppPaths.default().config_file
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text('bash_approval = "always"\n', encoding="utf-8")
    script = _script(tmp_path, ["touch refused-marker", "touch approved-marker"])
    run = on_terminal(repo, script, bwrap, "always" if source == "flag" else None, ["n", "y"])
    assert run.questions == 2
    assert "touch refused-marker" in run.screen.split("[y/N]")[0]
    assert run.observations[0] == REFUSED
    assert not (run.worktree / "refused-marker").exists()
    # positive control: the next command, answered yes, ran in the same sandbox
    assert run.observations[1].startswith("Exit code: 0\n")
    assert (run.worktree / "approved-marker").exists()
    assert "sandbox: bwrap" in run.screen
    assert fingerprint(repo) == before


def test_always_without_a_terminal_refuses_and_says_how_to_go_on(
    tmp_path: Path, bwrap: str
) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    script = _script(tmp_path, ["touch refused-marker", "touch refused-too"])
    run = without_terminal(repo, script, bwrap, "always")
    assert run.observations == [REFUSED, REFUSED]
    assert run.screen.count(NO_TERMINAL) == 1  # said once, not per command
    assert not (run.worktree / "refused-marker").exists()
    assert not (run.worktree / "refused-too").exists()
    assert run.summary["exit_reason"] == "agent"  # a refusal is an observation, not an end
    assert fingerprint(repo) == before
    # positive control: `--approve never`, as the message says, runs them
    again = without_terminal(repo, script, bwrap, "never")
    assert all(o.startswith("Exit code: 0\n") for o in again.observations)
    assert (again.worktree / "refused-marker").exists() and NO_TERMINAL not in again.screen


def test_never_and_auto_at_bwrap_run_without_asking(tmp_path: Path, bwrap: str) -> None:
    repo = make_repo(tmp_path)
    script = _script(tmp_path, ["touch ran-marker"])
    for approve in ("never", None):  # None: the default, auto
        run = on_terminal(repo, script, bwrap, approve, [])
        assert run.questions == 0
        assert run.observations[0].startswith("Exit code: 0\n")
        assert (run.worktree / "ran-marker").exists()


def test_auto_at_none_asks_and_never_there_warns(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    script = _script(tmp_path, ["touch refused-marker"])
    run = on_terminal(repo, script, "none", None, ["n"])
    assert run.questions == 1 and run.observations == [REFUSED]
    assert not (run.worktree / "refused-marker").exists()
    # positive control: asked and answered yes, it runs
    run = on_terminal(repo, script, "none", None, ["y"])
    assert run.questions == 1 and (run.worktree / "refused-marker").exists()
    # never at none runs unasked, and the user is told
    run = on_terminal(repo, script, "none", "never", [])
    assert run.questions == 0 and (run.worktree / "refused-marker").exists()
    assert "without asking you" in run.screen
    assert fingerprint(repo) == before


def test_untrusted_runs_allowlisted_commands_and_holds_back_the_rest(
    tmp_path: Path, bwrap: str
) -> None:
    repo = make_repo(tmp_path)
    commands = [
        "ls",
        "git status",
        "ls; touch chained-marker",
        "git status && touch and-marker",
        "ls $(touch subst-marker)",
        "cat calc.py > redirect-marker",
    ]
    run = without_terminal(repo, _script(tmp_path, commands), bwrap, "untrusted")
    assert run.observations[0].startswith("Exit code: 0\n") and "calc.py" in run.observations[0]
    assert run.observations[1].startswith("Exit code: 0\n")
    assert run.observations[2:] == [REFUSED] * 4
    made = ["chained-marker", "and-marker", "subst-marker", "redirect-marker"]
    assert [m for m in made if (run.worktree / m).exists()] == []
    # positive control: the same commands, not held back, create every marker
    again = without_terminal(repo, _script(tmp_path, commands), bwrap, "never")
    assert [m for m in made if (again.worktree / m).exists()] == made
