"""Ctrl+Q asks first whenever quitting would stop something (attempts, a download, a model
loading), says what, and quits at once when nothing runs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Label

from frogdesk.attempts.record import AttemptResult, AttemptsOutcome
from frogdesk.config import Settings
from frogdesk.leaf.events import LoopEvent
from frogdesk.tui.app import FrogDeskApp, QuitQuestion
from frogdesk.tui.screens.attempts import AttemptsRequest, AttemptsScreen
from frogdesk.tui.screens.setup import ModelSetupScreen
from tests.support.hub_server import REPO, RunningHub
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo

pytestmark = pytest.mark.anyio


class _HeldAttempts:
    """Attempts that run until `release` is set (or the screen cancels them)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()

    def run_attempts(
        self,
        task: str,
        n: int,
        check: str,
        operator: object,
        cancel: threading.Event,
        on_event: Callable[[int, LoopEvent], None],
    ) -> AttemptsOutcome:
        self.started.set()
        while not (self.release.wait(0.05) or cancel.is_set()):
            pass
        return AttemptsOutcome((AttemptResult(0, "", 1, "agent"),), check, "")

    def attempt_patch(self, session_id: str) -> str:
        return ""


def _question(app: FrogDeskApp) -> str:
    assert isinstance(app.screen, QuitQuestion)
    return str(app.screen.query_one(".dialog-title", Label).render())


async def test_running_attempts_are_asked_about_then_quit_at_once_when_done() -> None:
    held = _HeldAttempts()
    screen = AttemptsScreen(held, "task", AttemptsRequest(3, ""), lambda _: False)  # type: ignore[arg-type]
    app = FrogDeskApp(None, Settings.of(backend="script"), first_screen=lambda _: screen)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, held.started.is_set, "the attempts to start")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitQuestion), "the question")
        assert _question(app).startswith("3 attempts are running. Quit anyway?")
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is screen, "the question to close")
        assert app.is_running and screen.running
        held.release.set()
        await wait_for(pilot, lambda: screen.outcome is not None, "the attempts to end")
        await pilot.press("ctrl+q")  # the control: nothing runs now
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")


async def test_a_download_in_the_picker_is_asked_about(hub: RunningHub, tmp_path: Path) -> None:
    settings = Settings.of(model=f"{REPO}:Q4_K_M", hf_endpoint=hub.endpoint)
    picker = ModelSetupScreen(settings, make_repo(tmp_path))
    app = FrogDeskApp(
        None, settings, config_path=tmp_path / "config.toml", first_screen=lambda _: picker
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: picker.state == "picking", "the quant list", 60)
        picker.state = "downloading"  # what Enter on a row sets as the download starts
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitQuestion), "the question")
        assert _question(app).startswith("A download is running (it resumes next time).")
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is picker, "the question to close")
        picker.state = "picking"
        await pilot.press("ctrl+q")  # the control: picking quits at once
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")
