"""The review screen shows what apply writes (issue 32): an edited hunk is drawn as edited,
byte for byte what lands, and `p` with hunks still pending says what it left out."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static, TextArea

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.service import SessionService
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.review import EditHunkScreen, ReviewScreen
from frogdesk.tui.widgets.hunk_view import HunkView
from tests.support.finished_session import finished_session
from tests.support.pilot import wait_for

pytestmark = pytest.mark.anyio


def _app(service: SessionService, record: SessionRecord) -> FrogDeskApp:
    return FrogDeskApp(
        None,
        Settings(),
        first_screen=lambda app: ReviewScreen(
            CoreWorkbench(Path(record.repo), service.settings, paths=service.paths),
            record.id,
            app.syntax_style,
        ),
    )


def _rows(view: HunkView) -> list[tuple[str, str]]:
    """The drawn rows of a unified hunk: (mark, text), read from the table on the screen."""
    content = view.content
    assert isinstance(content, Group)
    header, table = content.renderables[:2]
    assert isinstance(header, Text) and isinstance(table, Table)
    marks = [str(c) for c in table.columns[2]._cells]
    texts = [c.plain if isinstance(c, Text) else str(c) for c in table.columns[3]._cells]
    return list(zip(marks, texts, strict=True))


def _header(view: HunkView) -> str:
    content = view.content
    assert isinstance(content, Group)
    header = content.renderables[0]
    assert isinstance(header, Text)
    return header.plain


async def _open(app: FrogDeskApp, pilot: object) -> ReviewScreen:
    screen = app.screen
    assert isinstance(screen, ReviewScreen)
    summary = screen.query_one("#review-summary", Static)

    def shown() -> bool:  # the summary is written last, once every hunk is mounted
        return len(screen.views) == 2 and "hunks:" in str(summary.render())

    await wait_for(pilot, shown, "the diff")  # type: ignore[arg-type]
    return screen


async def test_an_edited_hunk_is_drawn_as_apply_writes_it(tmp_path: Path) -> None:
    service, record = finished_session(tmp_path)
    repo = Path(record.repo)
    app = _app(service, record)
    async with app.run_test(size=(120, 40)) as pilot:
        review = await _open(app, pilot)
        calc = next(v for v in review.views if v.change.path == "calc.py")
        note = next(v for v in review.views if v.change.path == "CHANGES.md")
        review._select(review.views.index(calc))
        # Control: before the edit the model's line is drawn as added.
        assert ("+", "    return a + b") in _rows(calc)
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditHunkScreen), "the editor")
        editor = app.screen.query_one(TextArea)
        editor.text = editor.text.replace(
            "    return a + b", "    return b + a  # the edit\n    # one more line"
        )
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is review, "the review again")
        await pilot.pause()
        rows = _rows(calc)
        assert calc.decision == "approved" and calc.edited
        assert "(edited)" in _header(calc)
        assert "+1,3" in _header(calc)  # the new side's line count follows the edit
        assert ("+", "    return a + b") not in rows
        assert ("+", "    return b + a  # the edit") in rows
        assert ("+", "    # one more line") in rows
        shown_new_side = "".join(text + "\n" for mark, text in rows if mark in (" ", "+"))
        review._select(review.views.index(note))
        await pilot.press("a")
        await pilot.press("p")
        await wait_for(pilot, lambda: not review.busy and bool(review.last_report), "the apply")
        assert review.last_report.startswith("applied 2 file"), review.last_report
        # The hunk covers the whole file: what was drawn is, byte for byte, what was written.
        assert (repo / "calc.py").read_bytes() == shown_new_side.encode("utf-8")
        # Reopened, the review still draws the edit (decisions are read back from disk).
    again = _app(service, record)
    async with again.run_test(size=(120, 40)) as pilot:
        review = await _open(again, pilot)
        calc = next(v for v in review.views if v.change.path == "calc.py")
        assert ("+", "    return b + a  # the edit") in _rows(calc)
        assert "(edited)" in _header(calc)


async def test_apply_with_pending_hunks_says_what_it_left_out(tmp_path: Path) -> None:
    service, record = finished_session(tmp_path)
    repo = Path(record.repo)
    app = _app(service, record)
    async with app.run_test(size=(120, 40)) as pilot:
        review = await _open(app, pilot)
        calc = next(v for v in review.views if v.change.path == "calc.py")
        review._select(review.views.index(calc))
        await pilot.press("a")  # CHANGES.md stays pending
        await pilot.press("p")
        await wait_for(pilot, lambda: not review.busy and bool(review.last_report), "the apply")
        assert (repo / "calc.py").read_text(encoding="utf-8").endswith("return a + b\n")
        assert not (repo / "CHANGES.md").exists()  # only approved hunks land
        summary = str(review.query_one("#review-summary", Static).render())
        for text in (review.last_report, summary):
            assert "1 pending hunk not applied" in text, text
        # All decided: the report names no pending hunk.
        review.last_report = ""
        await pilot.press("u")
        await wait_for(pilot, lambda: not review.busy and bool(review.last_report), "the undo")
        review._select(review.views.index(next(v for v in review.views if v is not calc)))
        await pilot.press("r")
        review.last_report = ""
        await pilot.press("p")
        await wait_for(pilot, lambda: not review.busy and bool(review.last_report), "the apply")
        assert review.last_report.startswith("applied 1 file")
        assert "pending" not in review.last_report
