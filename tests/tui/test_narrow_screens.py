"""At 80x24 the sessions table shows every column and the review footer its main actions."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import DataTable, Footer
from textual.widgets._footer import FooterKey

from frogdesk.config import Settings
from frogdesk.core.ports import SessionSummary
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.paths import AppPaths
from frogdesk.sessions.record import SessionRecord, SessionSpec
from frogdesk.sessions.service import SessionService
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.review import ReviewScreen
from frogdesk.tui.screens.sessions import COLUMNS, SessionsScreen, started_words, table_rows
from tests.support.pilot import wait_for
from tests.support.scripted import call, make_repo, write_script
from tests.support.workbench import ReplaySession, ReplayWorkbench

pytestmark = pytest.mark.anyio

LONG_TASK = "Fix the off-by-one in the pagination of the search results page and add a test"


def finished(session_id: str, task: str) -> SessionRecord:
    record = SessionRecord(session_id, "/repo", "/wt", "base", task, "script")
    record.status, record.exit_reason, record.n_steps = "finished", "agent", 12
    record.created_at = time.time()
    return record


async def test_the_sessions_table_fits_80_columns_with_every_column(tmp_path: Path) -> None:
    record = finished("20261202-052012-a1b2c3", LONG_TASK)
    workbench = ReplayWorkbench(ReplaySession(record, [], changed=4))
    app = FrogDeskApp(workbench, Settings(), config_path=tmp_path / "config.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+s")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionsScreen) and bool(app.screen.summaries),
            "the list",
        )
        table = app.screen.query_one(DataTable)
        await pilot.pause()
        assert [str(c.label) for c in table.columns.values()] == list(COLUMNS)
        used = sum(c.get_render_width(table) for c in table.columns.values())
        assert used <= table.size.width, (used, table.size.width)
        row = [str(cell) for cell in table.get_row_at(0)]
        assert row[4:] == ["12", "4", time.strftime("%H:%M", time.localtime(record.created_at))]
        assert row[3].endswith("…") and LONG_TASK.startswith(row[3][:-1])  # cut first
        assert row[1].startswith("finished")
        await pilot.resize_terminal(200, 24)
        await wait_for(
            pilot, lambda: str(table.get_row_at(0)[3]) == LONG_TASK, "the whole task when wide"
        )
        assert [str(c) for c in table.get_row_at(0)][:2] == [record.id, "finished: final answer"]
        await pilot.press("enter")  # still opens the session, whatever its row shows
        await wait_for(pilot, lambda: not isinstance(app.screen, SessionsScreen), "the open")


def test_rows_cut_the_task_then_the_status_then_the_id() -> None:
    now = time.time()
    summary = SessionSummary(finished("20261202-052012-a1b2c3", LONG_TASK), 4, "not applied")
    _, rows = table_rows([summary], 200, now)
    assert rows[0][3] == LONG_TASK and rows[0][0] == summary.record.id
    for room in (100, 80, 74, 60):
        widths, rows = table_rows([summary], room, now)
        assert sum(widths) + 2 * len(COLUMNS) <= room or room < 74, (room, widths)
        assert all(len(cell) <= widths[i] for i, cell in enumerate(rows[0]))
    assert table_rows([summary], 74, now)[1][0][0] == "…a1b2c3"
    assert started_words(now - 400 * 86400, now).count("-") == 1  # another year: year-month


def _review_app(tmp_path: Path) -> FrogDeskApp:
    repo = make_repo(tmp_path)
    settings = Settings.of(backend="script")
    service = SessionService(AppPaths.default(), settings)
    edit = call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b")
    script = write_script(tmp_path / "s.jsonl", ["Fix.\n</think>\n\n" + edit, "Fixed."])
    active = service.start(SessionSpec("fix add", repo, backend="script", script=str(script)))
    service.run(active)
    return FrogDeskApp(
        None,
        settings,
        first_screen=lambda app: ReviewScreen(
            CoreWorkbench(repo, settings, paths=service.paths), active.record.id, app.syntax_style
        ),
    )


async def test_the_review_footer_keeps_apply_undo_and_send_back_at_80_columns(
    tmp_path: Path,
) -> None:
    app = _review_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: bool(screen.views), "the diff")
        footer = screen.query_one(Footer)

        def shown() -> list[str]:
            keys = footer.query(FooterKey)
            return [k.action for k in keys if k.display and k.region.width]

        await wait_for(pilot, lambda: "help" in shown(), "the footer")
        await pilot.pause()
        actions = shown()
        for action in ("apply", "undo", "send_back", "approve_hunk", "reject_hunk", "help"):
            assert action in actions, actions
        for key in footer.query(FooterKey):
            if key.display and key.region.width:
                assert key.region.height == 1 and key.region.right <= 80, key.description
        order = [a for a in actions if a in ("approve_hunk", "apply", "send_back")]
        assert order == ["approve_hunk", "apply", "send_back"]  # each still in its place
