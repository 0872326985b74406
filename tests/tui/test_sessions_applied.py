"""The sessions lists say whether a session was applied and undone, and a send-back's comment
shows in the conversation (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable

from frogdesk.config import Settings
from frogdesk.core.reviewing import apply_reviewed, load_review, undo_latest
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.service import SessionService
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.review import CommentScreen, ReviewScreen
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.screens.sessions import SessionsScreen
from tests.support.finished_session import FIX_AND_NOTE, finished_session
from tests.support.pilot import wait_for
from tests.support.scripted import frogdesk, make_repo, write_script

pytestmark = pytest.mark.anyio


async def _listed(service: SessionService, record: SessionRecord) -> tuple[str, str]:
    """The applied cell of the session's row in the TUI's list, and the summary behind it."""
    app = FrogDeskApp(
        None,
        Settings(),
        first_screen=lambda app: SessionsScreen(
            CoreWorkbench(Path(record.repo), service.settings, paths=service.paths)
        ),
    )
    async with app.run_test(size=(140, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionsScreen)
        await wait_for(pilot, lambda: bool(screen.summaries), "the list")
        table = screen.query_one(DataTable)
        labels = [str(c.label) for c in table.ordered_columns]
        cell = table.get_row_at(0)[labels.index("applied")]
        return str(cell), screen.summaries[0].applied


def _cli_state(record: SessionRecord) -> tuple[str, dict[str, object]]:
    listed = frogdesk("sessions", "list", cwd=Path(record.repo))
    assert listed.returncode == 0, listed.stderr
    [line] = [line for line in listed.stdout.splitlines() if line.startswith(record.id)]
    rows = json.loads(frogdesk("sessions", "list", "--json", cwd=Path(record.repo)).stdout)
    [row] = [r for r in rows if r["id"] == record.id]
    return line, row["applied"]


async def test_the_lists_say_applied_then_undone(tmp_path: Path) -> None:
    service, record = finished_session(tmp_path)
    assert await _listed(service, record) == ("not applied", "not applied")
    line, state = _cli_state(record)
    assert "not applied" in line and state["state"] == "not applied"
    review = load_review(service.store, record.id)
    assert apply_reviewed(review, review.diff.hunk_ids()).applied
    assert await _listed(service, record) == ("applied", "applied")
    line, state = _cli_state(record)
    assert " applied " in line and "not applied" not in line
    assert state == {"state": "applied", "applies": 1, "undone": 0, "damaged": False}
    undone = undo_latest(service.store, record.id)
    assert undone is not None and undone.ok
    assert await _listed(service, record) == ("undone", "undone")
    line, state = _cli_state(record)
    assert " undone " in line and state["undone"] == 1


async def test_the_send_back_comment_shows_in_the_conversation(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    replies = [*FIX_AND_NOTE, "OK.\n</think>\n\nDropped the note as asked."]
    settings = Settings.of(backend="script")
    workbench = CoreWorkbench(repo, settings, script=write_script(tmp_path / "s.jsonl", replies))
    app = FrogDeskApp(workbench, settings, config_path=tmp_path / "c.toml")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press(*"fix add", "enter")
        await wait_for(pilot, lambda: screen.last_exit is not None and not screen.running, "run")
        await pilot.press("ctrl+r")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ReviewScreen) and bool(app.screen.views),
            "the review",
        )
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, CommentScreen), "the comment")
        screen.last_exit = None
        await pilot.press(*"no notes please", "enter")
        await wait_for(
            pilot,
            lambda: screen.last_exit is not None and not screen.running,
            "the continued run",
            120,
        )
        said = [str(s.render()) for s in screen.conversation.query(".user-prompt")]
        assert said[0] == "fix add"
        assert said[-1] == "Sent back from the review: no notes please"
