"""The sessions of this repository: open one (any status), or discard it with its worktree."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import ClassVar

from textual import work
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
        self.query_one(DataTable).add_columns(
            "id", "status", "applied", "task", "steps", "changed", "started"
        )
        self._read()

    @work(thread=True, name="list-sessions", exit_on_error=False)
    def _read(self) -> None:
        self.post_message(SessionsListed(list(self.workbench.sessions())))

    def on_sessions_listed(self, message: SessionsListed) -> None:
        """Fill the table."""
        self.summaries = message.sessions
        table = self.query_one(DataTable)
        table.clear()
        for summary in message.sessions:
            record = summary.record
            started = datetime.datetime.fromtimestamp(record.created_at).strftime("%Y-%m-%d %H:%M")
            task = record.task if len(record.task) <= 50 else record.task[:49] + "…"
            table.add_row(
                plain_cell(record.id),
                plain_cell(status_words(record)),
                summary.applied,
                plain_cell(task),
                str(record.n_steps),
                str(summary.changed_files),
                started,
                key=record.id,
            )
        table.focus()

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
