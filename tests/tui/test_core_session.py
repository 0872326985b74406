"""The TUI on the real core: SessionService, git worktrees, the Leaf loop and the script backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.session import SessionScreen
from tests.support.pilot import wait_for
from tests.support.scripted import fingerprint, fixing_replies, make_repo, write_script

pytestmark = pytest.mark.anyio


@pytest.fixture
def sandbox_level() -> str:
    """Bash runs unattended only inside a sandbox; skip where none can run."""
    from frogdesk.sandbox.levels import detect

    level, reason = detect("auto")
    if level == "none":
        pytest.skip(f"no sandbox on this machine: {reason}")
    return str(level)


def make_app(repo: Path, script: Path, tmp_path: Path) -> tuple[FrogDeskApp, CoreWorkbench]:
    settings = Settings.of(backend="script")
    workbench = CoreWorkbench(repo, settings, script=script)
    return FrogDeskApp(workbench, settings, config_path=tmp_path / "config.toml"), workbench


async def test_scripted_session_end_to_end(tmp_path: Path, sandbox_level: str) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    script = write_script(tmp_path / "fix.jsonl", fixing_replies())
    app, workbench = make_app(repo, script, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press(*"make the tests pass", "enter")
        await wait_for(
            pilot, lambda: screen.last_exit is not None and not screen.running, "the run", 120
        )
        assert screen.last_exit is not None and screen.last_exit.exit_reason == "agent"
        cards = screen.conversation.cards
        assert [c.call.name for c in cards] == ["Read", "Bash", "Edit", "Bash"]
        assert cards[0].observation is not None and cards[0].observation.startswith(
            "calc.py\n1. def add"
        )
        assert cards[1].observation is not None and cards[1].observation.startswith("Exit code: 1")
        assert cards[3].observation is not None and cards[3].observation.startswith("Exit code: 0")
        info = screen.status.info
        assert (info.step, info.changed_files, info.sandbox) == (5, 1, sandbox_level)
        assert "Fixed add() in calc.py" in screen.conversation.query(".content").last().source  # type: ignore[attr-defined]
        assert screen.session is not None
        worktree = Path(screen.session.record.worktree)
        assert "return a + b" in (worktree / "calc.py").read_text(encoding="utf-8")
    assert fingerprint(repo) == before, "the user's repository changed without an approval"
    stored = workbench.sessions()
    assert (
        len(stored) == 1 and stored[0].record.status == "finished" and stored[0].changed_files == 1
    )


async def test_a_new_session_says_what_its_shell_finds(tmp_path: Path, sandbox_level: str) -> None:
    repo = make_repo(tmp_path)
    script = write_script(tmp_path / "fix.jsonl", [fixing_replies()[-1]])
    app, _ = make_app(repo, script, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press(*"say hello", "enter")
        await wait_for(pilot, lambda: not screen.running, "the run", 120)
        notices = [str(n.render()) for n in screen.conversation.query(".notice")]
        [shell] = [n for n in notices if n.startswith("The session's shell finds:")]
        lines = shell.splitlines()[1:]
        tools = {line.split()[0]: line.split(maxsplit=1)[1] for line in lines if line.strip()}
        assert {"python", "python3", "pytest", "node", "npm"} <= set(tools)
        # python3 is on every machine these tests run on; its path is the sandbox's own view
        assert tools["python3"].startswith("/") and "not found" not in tools["python3"]
