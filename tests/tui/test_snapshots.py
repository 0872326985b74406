"""SVG snapshots of the picker, the session screen mid-run and the review screen, in both themes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.sessions.record import SessionRecord
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.review import ReviewScreen
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.screens.setup import ModelSetupScreen
from frogdesk.tui.widgets.prompt_input import PromptInput
from tests.support.demo import demo_listing, mid_run
from tests.support.pilot import wait_for
from tests.support.scripted import call, make_repo, write_script
from tests.support.workbench import ReplaySession, ReplayWorkbench

THEMES = ["frogdesk-dark", "frogdesk-light"]
SIZE = (120, 36)


@pytest.mark.parametrize("theme", THEMES)
def test_picker(theme: str, snap_compare: Any, tmp_path: Path) -> None:
    settings = Settings.of(theme=theme)
    app = FrogDeskApp(
        None,
        settings,
        first_screen=lambda app: ModelSetupScreen(settings, tmp_path, listed=demo_listing()),
    )

    async def ready(pilot: Pilot[None]) -> None:
        await wait_for(pilot, lambda: getattr(app.screen, "state", "") == "picking", "the list")

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


@pytest.mark.parametrize("theme", THEMES)
def test_session_mid_run(theme: str, snap_compare: Any) -> None:
    record = SessionRecord("20261129-demo", "/repo", "/wt", "base", "make the tests pass", "script")
    session = ReplaySession(record, [mid_run()], pause_at=len(mid_run()) - 1, changed=1)
    workbench = ReplayWorkbench(session)
    app = FrogDeskApp(workbench, Settings.of(theme=theme))

    async def mid(pilot: Pilot[None]) -> None:
        await pilot.press(*"make the tests in tests/test_calc.py pass", "enter")
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_for(
            pilot,
            lambda: len(screen.conversation.cards) == 2 and screen.status.info.step == 2,
            "the run",
        )
        # The prompt's cursor blinks; held on, the picture no longer depends on when it is taken.
        screen.query_one(PromptInput).cursor_blink = False
        await pilot.pause(0.1)

    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=mid)
    finally:
        session.gate.set()


@pytest.mark.parametrize("theme", THEMES)
def test_review(theme: str, snap_compare: Any, tmp_path: Path) -> None:
    from frogdesk.paths import AppPaths
    from frogdesk.sessions.record import SessionSpec
    from frogdesk.sessions.service import SessionService

    repo = make_repo(tmp_path)
    script = write_script(
        tmp_path / "s.jsonl",
        [
            "Fix.\n</think>\n\n"
            + call(
                "Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"
            ),
            "Note.\n</think>\n\n" + call("Write", file_path="CHANGES.md", content="add() fixed\n"),
            "Done.\n</think>\n\nFixed.",
        ],
    )
    settings = Settings.of(backend="script", theme=theme)
    service = SessionService(AppPaths.default(), settings)
    active = service.start(SessionSpec("fix add", repo, backend="script", script=str(script)))
    service.run(active)
    record = active.record
    app = FrogDeskApp(
        None,
        settings,
        first_screen=lambda app: ReviewScreen(
            CoreWorkbench(repo, settings, script=script), record.id, app.syntax_style
        ),
    )

    async def decided(pilot: Pilot[None]) -> None:
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: bool(screen.views), "the diff")
        await pilot.press("j", "a")
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SIZE, run_before=decided)
