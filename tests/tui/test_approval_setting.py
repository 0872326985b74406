"""`bash_approval` in the TUI on a real session at the bwrap level: the modal asks, no keeps the
command from running, yes runs it; `never` (and the default there) never asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.leaf.approval import DECLINED
from frogdesk.sandbox.errors import SandboxError
from frogdesk.sandbox.levels import detect
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.modals import ApproveCommandScreen
from frogdesk.tui.screens.session import SessionScreen
from tests.support.pilot import wait_for
from tests.support.scripted import call, fingerprint, make_repo, write_script

pytestmark = pytest.mark.anyio

REPLIES = [
    "Run.\n</think>\n\n" + call("Bash", command="touch refused-marker"),
    "Run again.\n</think>\n\n" + call("Bash", command="touch approved-marker"),
    "Done.\n</think>\n\nOne was refused, one ran.",
]


@pytest.fixture
def bwrap() -> None:
    try:
        detect("bwrap")
    except SandboxError as exc:
        pytest.skip(str(exc))


def _app(tmp_path: Path, repo: Path, approval: str) -> FrogDeskApp:
    settings = Settings.of(backend="script", sandbox="bwrap", bash_approval=approval)
    script = write_script(tmp_path / f"s-{approval}.jsonl", REPLIES)
    return FrogDeskApp(CoreWorkbench(repo, settings, script=script), settings)


def _worktree(screen: SessionScreen) -> Path:
    assert screen.session is not None
    return Path(screen.session.record.worktree)


async def test_always_at_bwrap_asks_in_the_modal(tmp_path: Path, bwrap: None) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    app = _app(tmp_path, repo, "always")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press(*"run things", "enter")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, ApproveCommandScreen)
                and "refused-marker" in app.screen.command
            ),
            "the first question",
            60,
        )
        assert isinstance(app.screen, ApproveCommandScreen) and app.screen.sandbox == "bwrap"
        await pilot.press("n")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, ApproveCommandScreen)
                and "approved-marker" in app.screen.command
            ),
            "the second question",
            60,
        )
        assert not (_worktree(screen) / "refused-marker").exists()
        await pilot.press("y")
        await wait_for(
            pilot, lambda: screen.last_exit is not None and not screen.running, "the run", 60
        )
        first, second = screen.conversation.cards
        assert first.observation == f"CommandDeclined: {DECLINED}"
        # positive control: the command answered yes ran in the same session and sandbox
        assert second.observation is not None and second.observation.startswith("Exit code: 0")
        assert (_worktree(screen) / "approved-marker").exists()
        assert not (_worktree(screen) / "refused-marker").exists()
        assert screen.status.info.sandbox == "bwrap"
    assert fingerprint(repo) == before


@pytest.mark.parametrize("approval", ["never", "auto"])
async def test_never_and_auto_at_bwrap_do_not_ask(
    tmp_path: Path, bwrap: None, approval: str
) -> None:
    repo = make_repo(tmp_path)
    app = _app(tmp_path, repo, approval)
    asked: list[object] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press(*"run things", "enter")

        def ended() -> bool:
            if isinstance(app.screen, ApproveCommandScreen):
                asked.append(app.screen.command)
            return screen.last_exit is not None and not screen.running

        await wait_for(pilot, ended, "the run", 60)
        assert asked == []
        assert (_worktree(screen) / "refused-marker").exists()
        assert (_worktree(screen) / "approved-marker").exists()
