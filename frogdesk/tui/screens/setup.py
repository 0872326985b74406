"""First run: pick a quant from the Hub listing, download it with progress, load it."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Input, Label, ProgressBar, Static

from frogdesk.config import Settings
from frogdesk.core.chooser import disk_rows_beyond, hub_choices, local_choices, pull_row
from frogdesk.core.eval_summary import beside_drift
from frogdesk.core.last_model import model_pinned, remember, remembered
from frogdesk.core.model_ops import load_backend, loadable_file, local_file, progress_line
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.models.errors import DownloadCancelled, ModelError
from frogdesk.models.listing import source_line
from frogdesk.models.progress import Progress
from frogdesk.models.retry import RetryPolicy
from frogdesk.models.spec import parse_spec
from frogdesk.paths import AppPaths
from frogdesk.sizes import human_bytes
from frogdesk.tui.messages import WorkbenchReady
from frogdesk.tui.untrusted import plain_block
from frogdesk.tui.widgets.fitting_footer import FittingFooter
from frogdesk.tui.widgets.model_rows import PATH_PLACEHOLDER, fill_table, warnings_text
from frogdesk.tui.workers import ShowsWorkerErrors, error_words

if TYPE_CHECKING:
    from frogdesk.engine.chat import Backend
    from frogdesk.models.catalog_row import CatalogRow
    from frogdesk.models.listing import RepoListing

DEFAULT_QUANT = "Q4_K_M"


@dataclass
class ListingReady(Message):
    """The Hub listing (or the saved one) and its catalog rows."""

    listing: RepoListing
    rows: list[CatalogRow]
    measured: dict[str, str]
    notes: list[str] = field(default_factory=list)
    """Names the listing refused, models moved into the shared cache: one line each."""


@dataclass
class DiskListed(Message):
    """The Hub did not answer: the models on disk only, and the one line that says why."""

    rows: list[CatalogRow]
    measured: dict[str, str]
    line: str


@dataclass
class SetupFailed(Message):
    """Listing, download or load failed; `offline` offers a local file instead."""

    error: str
    offline: bool = False


@dataclass
class ModelReady(Message):
    """A model file is on disk and can be loaded."""

    path: Path


@dataclass
class BackendReady(Message):
    """The model is loaded."""

    backend: Backend


class ModelSetupScreen(ShowsWorkerErrors, Screen[None]):
    """Lists the default repo's quants; Enter downloads the highlighted one, then loads it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel download", id="picker_cancel"),
        Binding("ctrl+l", "local_file", "Local GGUF", id="picker_local"),
    ]
    state: reactive[str] = reactive("listing", bindings=True)
    """listing, picking, downloading, loading, ready or failed; the footer follows it."""

    def __init__(
        self,
        settings: Settings,
        repo: Path,
        *,
        endpoint: str = "",
        model_path: Path | None = None,
        listed: ListingReady | None = None,
        model_given: bool = False,
    ) -> None:
        super().__init__()
        self.model_given = model_given
        """--model named the model: it wins over the one remembered, even the default spec."""
        self.listed = listed
        """A listing already made (demos, screenshots): shown instead of asking the Hub."""
        self.settings = settings
        self.repo = repo
        self.endpoint = endpoint
        self.model_path = model_path
        self.paths = AppPaths.default()
        self.rows: list[CatalogRow] = []
        self.listing: RepoListing | None = None
        self.cancel = threading.Event()
        self.latest: Progress | None = None
        self.loaded = 0.0
        """The fraction of the model llama.cpp has loaded (set from the load worker)."""
        self.state = "listing"
        self.start_note = ""
        """Said once under the table: the remembered model's file is gone."""
        self.statuses: deque[str] = deque(maxlen=256)
        """The status lines shown, newest last: still readable once the screen is gone."""

    def compose(self) -> ComposeResult:
        """Title, the quant table, warnings, progress and the local-file field."""
        with Vertical(id="picker"):
            yield Label("Choose a FrogNano quant to download", id="picker-title")
            yield Static("", id="picker-repo", markup=False)
            yield Static("Listing quants…", id="picker-status", markup=False)
            yield DataTable(id="picker-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="picker-warnings", classes="picker-warning", markup=False)
            yield ProgressBar(id="picker-progress", show_eta=False)
            yield Input(placeholder=PATH_PLACEHOLDER, id="picker-local")
        yield FittingFooter()

    def on_mount(self) -> None:
        """List the quants, or load the given model at once."""
        self.query_one(ProgressBar).display = False
        repo = getattr(self.app, "repo", None)
        shown = self.query_one("#picker-repo", Static)
        shown.display = isinstance(repo, Path)
        if isinstance(repo, Path):  # the app's repository (the launch names it)
            shown.update(plain_block(f"Repository: {repo}"))
        self.set_interval(1 / 10, self._show_progress)
        if self.listed is None:
            self._offer_remembered()
        if self.model_path is not None:
            self.post_message(ModelReady(self.model_path))
        elif self.listed is not None:
            self.post_message(self.listed)
        else:
            self._list()

    def _offer_remembered(self) -> None:
        """Load the model last loaded on this machine, unless the settings pin one or the
        caller gave a file of its own; a remembered file that is gone is said in one line and
        the picker lists as usual.

        A given file that is only the unpinned default's (what the launch finds on disk) is
        not the caller's own choice: the remembered model wins over it.
        """
        config_file = getattr(self.app, "config_path", None)
        pinned_by = config_file if isinstance(config_file, Path) else None
        if model_pinned(self.settings, pinned_by, flag=self.model_given):
            return
        if self.model_path is not None and self.model_path != self._default_file():
            return
        last = remembered(self.paths)
        if last is None:
            return
        if last.present:
            self.model_path = last.path
        else:
            self.start_note = last.gone_line()
            self.query_one("#picker-warnings", Static).update(plain_block(self.start_note))

    def busy_with(self) -> str:
        """What quitting would stop here, in words ("" when nothing)."""
        if self.state == "downloading":
            return "A download is running (it resumes next time)"
        if self.state == "loading":
            return "The model is loading"
        return ""

    def _default_file(self) -> Path | None:
        try:
            return local_file(self.settings.model, self.settings)
        except ModelError:
            return None

    def _measured(self, rows: list[CatalogRow], measured: dict[str, str]) -> dict[str, str]:
        """The drift words with each file's newest eval result beside them."""
        files = {row.label: row.local_path for row in rows}
        return beside_drift(measured, files, self.paths.data_dir)

    def _status(self, text: str) -> None:
        self.statuses.append(text)
        self.query_one("#picker-status", Static).update(plain_block(text))

    @work(thread=True, name="list-quants", exit_on_error=False)
    def _list(self) -> None:
        def countdown(seconds: int, attempt: int, reason: str) -> None:
            self.app.call_from_thread(
                self._status,
                f"{reason}; trying again in {seconds} s (try {attempt}). Escape cancels.",
            )

        disk = local_choices(self.settings, self.paths)
        try:
            chosen = hub_choices(
                parse_spec(self.settings.model, self.settings.aliases),
                self.settings,
                self.paths,
                endpoint=self.endpoint or None,
                retry=RetryPolicy(on_wait=countdown, cancel=self.cancel),
            )
        except (ModelError, OSError) as exc:
            if disk.rows:
                measured = self._measured(disk.rows, disk.measured)
                line = f"The Hub is unreachable: {exc}"
                self.post_message(DiskListed(disk.rows, measured, line))
            else:
                self.post_message(SetupFailed(str(exc), offline=True))
            return
        rows = chosen.rows + disk_rows_beyond(chosen.rows, disk)
        measured = self._measured(rows, {**disk.measured, **chosen.measured})
        self.post_message(ListingReady(chosen.listing, rows, measured, chosen.notes))

    def on_listing_ready(self, message: ListingReady) -> None:
        """Fill the table; the cursor starts on the default quant."""
        self.listing = message.listing
        self.rows = [r for r in message.rows if not r.name.mmproj]
        table = self.query_one(DataTable)
        fill_table(table, self.rows, message.measured)
        default = next((i for i, row in enumerate(self.rows) if row.name.quant == DEFAULT_QUANT), 0)
        table.move_cursor(row=default)
        table.focus()

        source = source_line(message.listing)
        notes = [x for x in (self.start_note, *message.notes) if x]
        if notes:
            self.query_one("#picker-warnings", Static).update(plain_block("\n".join(notes)))
        self.state = "picking"
        self._status(
            f"{message.listing.repo} from {source}. Enter downloads the highlighted quant."
        )

    def on_disk_listed(self, message: DiskListed) -> None:
        """The Hub is unreachable: list the models on disk, say so in one line."""
        self.rows = [r for r in message.rows if not r.name.mmproj]
        table = self.query_one(DataTable)
        fill_table(table, self.rows, message.measured)
        table.focus()
        self.state = "picking"
        self._status(f"{message.line}. Enter loads the highlighted model on disk.")
        if self.start_note:
            self.query_one("#picker-warnings", Static).update(plain_block(self.start_note))

    @on(DataTable.RowHighlighted)
    def _warn(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.rows):
            row = self.rows[event.cursor_row]
            self.query_one("#picker-warnings", Static).update(warnings_text(row))

    @on(DataTable.RowSelected)
    def _pick(self, event: DataTable.RowSelected) -> None:
        if self.state != "picking" or not 0 <= event.cursor_row < len(self.rows):
            return
        row = self.rows[event.cursor_row]
        if row.local_path is not None:
            self.post_message(ModelReady(row.local_path))
            return
        self.state = "downloading"
        self.cancel = threading.Event()
        bar = self.query_one(ProgressBar)
        bar.display = True
        bar.update(total=row.size, progress=0)
        self._status(f"Downloading {row.label} ({human_bytes(row.size)}); Escape cancels.")
        self._download(row)

    @work(thread=True, name="download", exit_on_error=False)
    def _download(self, row: CatalogRow) -> None:
        assert self.listing is not None

        def progress(p: Progress) -> None:
            self.latest = p

        try:
            path = pull_row(row, self.listing, self.settings, progress=progress, cancel=self.cancel)
        except DownloadCancelled:
            self.post_message(
                SetupFailed("Download cancelled; the partial file is kept and resumes next time.")
            )
            return
        except (ModelError, OSError) as exc:
            self.post_message(SetupFailed(str(exc)))
            return
        self.post_message(ModelReady(path))

    def _show_progress(self) -> None:
        if self.state == "loading":
            self.query_one(ProgressBar).update(total=100, progress=round(self.loaded * 100))
            return
        latest = self.latest
        if latest is not None and self.state == "downloading":
            self.query_one(ProgressBar).update(total=max(latest.total, 1), progress=latest.done)
            self._status(progress_line(latest) + "   (Escape cancels)")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer "Cancel download" only while there is a download (or the Hub's wait) to cancel."""
        return action != "cancel" or self.state in ("downloading", "listing")

    def action_cancel(self) -> None:
        """Cancel the download in flight, or the wait before the Hub is asked again."""
        if self.state in ("downloading", "listing"):
            self.cancel.set()

    def action_local_file(self) -> None:
        """Focus the local-file field."""
        self.query_one("#picker-local", Input).focus()

    @on(Input.Submitted, "#picker-local")
    def _local(self, event: Input.Submitted) -> None:
        try:
            path = loadable_file(Path(event.value.strip()).expanduser())
        except ModelError as exc:
            self._status(f"{exc}")
            return
        self.post_message(ModelReady(path))

    def on_setup_failed(self, message: SetupFailed) -> None:
        """Say what went wrong and what to do next."""
        self.state = "picking" if self.rows else "failed"
        self.query_one(ProgressBar).display = False
        hint = (
            " Offline with no model: give the path of a local .gguf file below."
            if message.offline
            else ""
        )
        self._status(f"{message.error}{hint}")
        if message.offline:
            self.query_one("#picker-local", Input).focus()

    def on_model_ready(self, message: ModelReady) -> None:
        """Load the model in a worker."""
        self.state = "loading"
        bar = self.query_one(ProgressBar)
        bar.display = True
        bar.update(total=None)
        bar.update(total=100, progress=0)
        self.loaded = 0.0
        self.model_path = message.path
        self._status(f"Loading {message.path.name}…")
        self._load(message.path)

    @work(thread=True, name="load-model", exit_on_error=False)
    def _load(self, path: Path) -> None:
        def progress(fraction: float) -> None:
            self.loaded = fraction  # read by the frame timer on the UI thread

        try:
            backend = load_backend(self.settings, path, progress=progress)
        except Exception as exc:  # any load failure is shown; the user can pick another file
            self.post_message(
                SetupFailed(f"Could not load {path.name}: {error_words(exc)}", offline=True)
            )
            return
        self.post_message(BackendReady(backend))

    def on_backend_ready(self, message: BackendReady) -> None:
        """Open the session screen on the loaded model."""
        self.state = "ready"
        if self.model_path is not None:
            remember(self.paths, self.model_path)
        workbench = CoreWorkbench(self.repo, self.settings, backend=message.backend)
        self.app.post_message(WorkbenchReady(workbench))
