"""The sessions of this repository: open one (any status), or discard it with its worktree."""

from __future__ import annotations

import datetime
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Label

from frogdesk.core.ports import SessionSummary, Workbench
from frogdesk.core.status import status_words
from frogdesk.inert import inert_line
from frogdesk.tui.screens.modals import ConfirmScreen
from frogdesk.tui.untrusted import plain_cell
from frogdesk.tui.widgets.fitting_footer import FittingFooter
from frogdesk.tui.workers import ShowsWorkerErrors

COLUMNS = ("id", "status", "applied", "task", "steps", "changed", "started")
_PADDING = 2
"""Cells a DataTable column takes beside its content (one each side)."""
_SCROLLBAR = 2
"""Cells kept for the vertical scrollbar a long list shows."""
_TASK_MIN, _STATUS_MIN = 12, 10


def started_words(created_at: float, now: float) -> str:
    """When a session started, in at most 7 cells: `14:05` today, `Dec 02` this year,
    `2025-12` before (the id says the exact second)."""
    started = datetime.datetime.fromtimestamp(created_at)
    today = datetime.datetime.fromtimestamp(now)
    if started.date() == today.date():
        return started.strftime("%H:%M")
    return started.strftime("%b %d" if started.year == today.year else "%Y-%m")


def cut(text: str, cells: int) -> str:
    """`text` in at most `cells` cells, an ellipsis at the end where it was cut."""
    if cell_len(text) <= cells:
        return text
    while text and cell_len(text) + 1 > cells:
        text = text[:-1]
    return text + "…"


def table_rows(
    summaries: Sequence[SessionSummary], room: int, now: float
) -> tuple[list[int], list[tuple[str, ...]]]:
    """Column widths and row texts that fit the table in `room` cells: the task is cut
    first (with an ellipsis), then the status, then the id shows its unique tail only."""
    rows = [
        tuple(
            inert_line(cell)  # made inert before measuring: an escape is wider than its byte
            for cell in (
                s.record.id,
                status_words(s.record),
                s.applied,
                s.record.task,
                str(s.record.n_steps),
                str(s.changed_files),
                started_words(s.record.created_at, now),
            )
        )
        for s in summaries
    ]
    widths = [max([cell_len(c), *(cell_len(r[i]) for r in rows)]) for i, c in enumerate(COLUMNS)]
    room -= _PADDING * len(COLUMNS)
    over = sum(widths) - room
    for column, least in ((3, _TASK_MIN), (1, _STATUS_MIN)):
        if over > 0:
            cut_by = min(over, max(0, widths[column] - least))
            widths[column] -= cut_by
            over -= cut_by
    if over > 0:  # the id's random tail tells the sessions apart; the time has its column
        rows = [("…" + r[0].rsplit("-", 1)[-1], *r[1:]) if "-" in r[0] else r for r in rows]
        widths[0] = max([len(COLUMNS[0]), *(cell_len(r[0]) for r in rows)])
    shown = [tuple(cut(cell, widths[i]) for i, cell in enumerate(row)) for row in rows]
    return widths, shown


@dataclass
class SessionsListed(Message):
    """The stored sessions, read by a worker."""

    sessions: list[SessionSummary]


class SessionsScreen(ShowsWorkerErrors, Screen[str | None]):
    """Lists sessions newest first; Enter opens one (dismisses with its id), d discards."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", id="sessions_open"),
        Binding("d", "discard", "Discard", id="sessions_discard"),
        Binding("escape", "close", "Back", id="sessions_close"),
    ]

    def __init__(self, workbench: Workbench) -> None:
        super().__init__()
        self.workbench = workbench
        self.summaries: list[SessionSummary] = []

    def compose(self) -> ComposeResult:
        """A title and the table."""
        with Vertical(id="picker"):
            yield Label("Sessions in this repository", id="picker-title")
            yield DataTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
        yield FittingFooter()

    def on_mount(self) -> None:
        """Read the sessions in a worker."""
        self.query_one(DataTable).add_columns(*COLUMNS)
        self._read()

    @work(thread=True, name="list-sessions", exit_on_error=False)
    def _read(self) -> None:
        self.post_message(SessionsListed(list(self.workbench.sessions())))

    def on_sessions_listed(self, message: SessionsListed) -> None:
        """Fill the table."""
        self.summaries = message.sessions
        self._fill()
        self.query_one(DataTable).focus()

    def on_resize(self, event: events.Resize) -> None:
        """Fit the columns to the new width."""
        self.call_after_refresh(self._fill)

    def _fill(self) -> None:
        """Lay the rows out for the table's width, keeping the highlighted row."""
        table = self.query_one(DataTable)
        row = table.cursor_row
        # the room around the table: the table's own width follows its columns
        room = (self.query_one("#picker").content_size.width or self.size.width) - _SCROLLBAR
        widths, rows = table_rows(self.summaries, room, time.time())
        table.clear(columns=True)
        for label, width in zip(COLUMNS, widths, strict=True):
            table.add_column(label, width=width, key=label)
        for summary, cells in zip(self.summaries, rows, strict=True):
            # plain cells: ids, tasks and states are shown as typed, never as markup
            table.add_row(*(plain_cell(c) for c in cells), key=summary.record.id)
        if self.summaries:
            table.move_cursor(row=min(max(row, 0), len(self.summaries) - 1))

    def _chosen(self) -> SessionSummary | None:
        table = self.query_one(DataTable)
        if not self.summaries or not 0 <= table.cursor_row < len(self.summaries):
            return None
        return self.summaries[table.cursor_row]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row opens it."""
        self.action_open()

    def action_open(self) -> None:
        """Open the highlighted session: its conversation, to review or continue it."""
        chosen = self._chosen()
        if chosen is None:
            return
        if chosen.record.status == "discarded":
            self.notify("That session was discarded; its worktree is gone.", severity="warning")
            return
        self.dismiss(chosen.record.id)

    def action_discard(self) -> None:
        """Discard the highlighted session after confirmation."""
        chosen = self._chosen()
        if chosen is None or chosen.record.status == "discarded":
            return
        question = f"Discard session {inert_line(chosen.record.id)} and remove its worktree ({chosen.changed_files} files changed)?"

        def answer(yes: bool | None) -> None:
            if yes:
                self._discard(chosen.record.id)

        self.app.push_screen(ConfirmScreen(question), answer)

    @work(thread=True, name="discard-session", exit_on_error=False)
    def _discard(self, session_id: str) -> None:
        self.workbench.discard(session_id)
        self.post_message(SessionsListed(list(self.workbench.sessions())))

    def action_close(self) -> None:
        """Back without opening one."""
        self.dismiss(None)
