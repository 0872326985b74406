"""Switching the session's quant: the model chooser (models on disk, the repo's quants on the Hub,
a path), the cost, then a load."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, ProgressBar, Static

from frogdesk.config import Settings
from frogdesk.core.chooser import local_choices, pull_row, remote_choices, session_repo
from frogdesk.core.eval_summary import beside_drift
from frogdesk.core.last_model import remember
from frogdesk.core.model_ops import loadable_file, progress_line
from frogdesk.models.errors import DownloadCancelled, ModelError
from frogdesk.models.progress import Progress
from frogdesk.models.retry import RetryPolicy
from frogdesk.paths import AppPaths
from frogdesk.sizes import human_bytes
from frogdesk.tui.untrusted import plain_block
from frogdesk.tui.widgets.model_rows import PATH_PLACEHOLDER, fill_table, warnings_text
from frogdesk.tui.workers import ShowsWorkerErrors

if TYPE_CHECKING:
    from frogdesk.core.chooser import LocalChoices, RemoteChoices
    from frogdesk.models.catalog_row import CatalogRow
    from frogdesk.models.listing import RepoListing
    from frogdesk.models.local_model import LocalModel
    from frogdesk.models.switch_plan import SwitchPlan

PriceSwitch = Callable[[Path], "SwitchPlan"]
"""Prices moving the session to the model at a path (the core's `price_switch`; blocking)."""


@dataclass
class LocalListed(Message):
    """The models on disk, as the chooser shows them."""

    choices: LocalChoices


@dataclass
class RemoteListed(Message):
    """The repo's quants not on disk, or why the Hub offers none."""

    choices: RemoteChoices


@dataclass
class CostReady(Message):
    """The announcement for switching to one model, or why it cannot be used."""

    path: Path
    text: str
    ok: bool


@dataclass
class Pulled(Message):
    """A Hub quant is on disk now (`path`), or its download stopped (`error`)."""

    label: str
    path: Path | None
    error: str = ""


class QuantSwitchScreen(ShowsWorkerErrors, ModalScreen[Path | None]):
    """Pick a model on disk, a quant of the session's repo on the Hub, or give a path; the
    switch cost is shown and Enter again confirms it.

    The table is the first-run picker's: the same columns, fit, warnings and measured drift.
    A Hub quant is downloaded first (Escape cancels; the partial file resumes next time).
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Cancel", id="quant_close")]

    def __init__(self, settings: Settings, price: PriceSwitch, model: str = "") -> None:
        super().__init__()
        self.settings = settings
        self.price = price
        self.model = model
        """The session's model (spec or path): the quants of its Hub repo are offered."""
        self.models: list[LocalModel] = []
        self.rows: list[CatalogRow] = []
        self.remote: list[CatalogRow] = []
        self.listing: RepoListing | None = None
        self.pulled: dict[str, Path] = {}
        """Hub rows downloaded while the switch is open, by label."""
        self.announced: Path | None = None
        self.cancel = threading.Event()
        self.pulling = ""
        """The label of the row being downloaded ("" when none)."""
        self.latest: Progress | None = None

    def compose(self) -> ComposeResult:
        """The models, the Hub line, the path field, the download bar and the cost line."""
        with Vertical(classes="dialog"):
            yield Label("Switch quant (the conversation stays)", classes="dialog-title")
            yield DataTable(id="quant-table", cursor_type="row")
            yield Static("", id="quant-warnings", classes="picker-warning", markup=False)
            yield Static("", id="quant-hub", markup=False)
            yield Input(placeholder=PATH_PLACEHOLDER, id="quant-path")
            yield ProgressBar(id="quant-progress", show_eta=False)
            yield Static(
                "Enter shows the cost of switching; Enter again switches.",
                id="quant-cost",
                markup=False,
            )

    def on_mount(self) -> None:
        """List the models on disk, then the Hub's quants, in a worker."""
        self.query_one(ProgressBar).display = False
        self.set_interval(1 / 10, self._show_progress)
        self._list()

    @work(thread=True, name="list-models", exit_on_error=False)
    def _list(self) -> None:
        paths = AppPaths.default()
        disk = local_choices(self.settings, paths)
        files = {row.label: row.local_path for row in disk.rows}
        measured = beside_drift(disk.measured, files, paths.data_dir)
        self.post_message(LocalListed(dataclasses.replace(disk, measured=measured)))
        repo = session_repo(self.model, self.settings, paths)
        if repo:

            def countdown(seconds: int, attempt: int, reason: str) -> None:
                self.app.call_from_thread(
                    self.query_one("#quant-hub", Static).update,
                    plain_block(f"{reason}; asking the Hub again in {seconds} s (try {attempt})"),
                )

            retry = RetryPolicy(on_wait=countdown, cancel=self.cancel)
            found = remote_choices(self.settings, paths, repo, retry=retry)
            self.post_message(RemoteListed(found))

    def _say(self, text: str) -> None:
        self.query_one("#quant-cost", Static).update(plain_block(text))

    def on_local_listed(self, message: LocalListed) -> None:
        """Fill the table with the models on disk."""
        self.models = message.choices.models
        self.rows = message.choices.rows
        table = self.query_one(DataTable)
        fill_table(table, self.rows, message.choices.measured)
        if not self.models:
            self._say(
                "No other model on disk: give a .gguf path above, or pull one with "
                "`frogdesk models pull`."
            )
            self.query_one("#quant-path", Input).focus()
            return
        table.focus()

    def on_remote_listed(self, message: RemoteListed) -> None:
        """Add the Hub's quants under the models on disk; say where they came from, or why not."""
        found = message.choices
        self.listing = found.listing
        self.remote = found.rows
        lines = [found.line, *found.notes]
        self.query_one("#quant-hub", Static).update(plain_block("\n".join(x for x in lines if x)))
        if self.remote:
            table = self.query_one(DataTable)
            fill_table(table, self.remote, found.measured)
            if not self.models:
                table.focus()

    def _row(self, index: int) -> CatalogRow | None:
        everything = self.rows + self.remote
        return everything[index] if 0 <= index < len(everything) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The highlighted model's warnings under the table."""
        row = self._row(event.cursor_row)
        if row is not None:
            self.query_one("#quant-warnings", Static).update(warnings_text(row))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """A path: checked, then the same cost announcement and confirmation as a row."""
        try:
            path = loadable_file(Path(event.value.strip()).expanduser())
        except ModelError as exc:
            self._say(str(exc))
            self.announced = None
            return
        if self.announced == path:
            self._switch(path)
            return
        self._cost(path)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """First Enter announces the cost (a Hub quant is downloaded first), a second Enter on
        the same row switches."""
        if self.pulling:
            return
        row = self._row(event.cursor_row)
        if row is None:
            return
        if event.cursor_row < len(self.models):
            path: Path | None = self.models[event.cursor_row].path
        else:
            path = self.pulled.get(row.label)
        if path is None:
            self._start_pull(row)
            return
        if self.announced == path:
            self._switch(path)
            return
        self._cost(path)

    def busy_with(self) -> str:
        """What quitting would stop here, in words ("" when nothing)."""
        return f"{self.pulling} is downloading (it resumes next time)" if self.pulling else ""

    def _switch(self, path: Path) -> None:
        """Close on the confirmed model; it is remembered as this machine's last one."""
        remember(AppPaths.default(), path)
        self.dismiss(path)

    def _start_pull(self, row: CatalogRow) -> None:
        self.pulling = row.label
        self.announced = None
        self.cancel = threading.Event()
        self.latest = None
        bar = self.query_one(ProgressBar)
        bar.display = True
        bar.update(total=max(row.size, 1), progress=0)
        self._say(f"Downloading {row.label} ({human_bytes(row.size)}); Escape cancels.")
        self._pull(row)

    @work(thread=True, name="pull-quant", exit_on_error=False)
    def _pull(self, row: CatalogRow) -> None:
        assert self.listing is not None

        def progress(p: Progress) -> None:
            self.latest = p  # read by the frame timer on the UI thread

        try:
            path = pull_row(row, self.listing, self.settings, progress=progress, cancel=self.cancel)
        except DownloadCancelled:
            self.post_message(
                Pulled(row.label, None, "Download cancelled; the partial file resumes next time.")
            )
            return
        except (ModelError, OSError) as exc:
            self.post_message(Pulled(row.label, None, f"Download failed: {exc}"))
            return
        self.post_message(Pulled(row.label, path))

    def _show_progress(self) -> None:
        latest = self.latest
        if self.pulling and latest is not None:
            self.query_one(ProgressBar).update(total=max(latest.total, 1), progress=latest.done)
            self._say(progress_line(latest) + "   (Escape cancels)")

    def on_pulled(self, message: Pulled) -> None:
        """The download ended: price the switch to the new file, or say why it stopped."""
        self.pulling = ""
        self.latest = None
        self.query_one(ProgressBar).display = False
        if message.path is None:
            self._say(message.error)
            return
        self.pulled[message.label] = message.path
        self._say(f"Downloaded {message.path.name}; pricing the switch…")
        self._cost(message.path)

    @work(thread=True, name="switch-cost", exit_on_error=False)
    def _cost(self, path: Path) -> None:
        try:
            plan = self.price(path)
        except Exception as exc:
            self.post_message(CostReady(path, f"Cannot switch: {exc}", False))
            return
        warnings = "".join(f"\n{w.level}: {w.text}" for w in plan.warnings)
        self.post_message(
            CostReady(path, f"{plan.cost.describe()}. Enter again to switch.{warnings}", True)
        )

    def on_cost_ready(self, message: CostReady) -> None:
        """Show the announcement; arm the confirmation."""
        self._say(message.text)
        self.announced = message.path if message.ok else None

    def action_close(self) -> None:
        """Cancel the download in flight; otherwise keep the current model."""
        if self.pulling:
            self.cancel.set()
            return
        self.cancel.set()
        self.dismiss(None)
