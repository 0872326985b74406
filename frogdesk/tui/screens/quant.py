"""Switching the session's quant: the model chooser (models on disk, a path), the cost, then a load."""

from __future__ import annotations

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
from textual.widgets import DataTable, Input, Label, Static

from frogdesk.config import Settings
from frogdesk.core.chooser import local_choices
from frogdesk.models.errors import ModelError
from frogdesk.models.resolve import check_loadable
from frogdesk.paths import AppPaths
from frogdesk.tui.untrusted import plain_block
from frogdesk.tui.widgets.model_rows import PATH_PLACEHOLDER, fill_table, warnings_text
from frogdesk.tui.workers import ShowsWorkerErrors

if TYPE_CHECKING:
    from frogdesk.core.chooser import LocalChoices
    from frogdesk.models.catalog import CatalogRow
    from frogdesk.models.local import LocalModel
    from frogdesk.models.switch import SwitchPlan

PriceSwitch = Callable[[Path], "SwitchPlan"]
"""Prices moving the session to the model at a path (the core's `price_switch`; blocking)."""


@dataclass
class LocalListed(Message):
    """The models on disk, as the chooser shows them."""

    choices: LocalChoices


@dataclass
class CostReady(Message):
    """The announcement for switching to one model, or why it cannot be used."""

    path: Path
    text: str
    ok: bool


class QuantSwitchScreen(ShowsWorkerErrors, ModalScreen[Path | None]):
    """Pick a model on disk or give a path; the switch cost is shown and Enter again confirms it.

    The table is the first-run picker's: the same columns, fit, warnings and measured drift.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Cancel", id="quant_close")]

    def __init__(self, settings: Settings, price: PriceSwitch) -> None:
        super().__init__()
        self.settings = settings
        self.price = price
        self.models: list[LocalModel] = []
        self.rows: list[CatalogRow] = []
        self.announced: Path | None = None

    def compose(self) -> ComposeResult:
        """The models on disk and the cost line."""
        with Vertical(classes="dialog"):
            yield Label("Switch quant (the conversation stays)", classes="dialog-title")
            yield DataTable(id="quant-table", cursor_type="row")
            yield Static("", id="quant-warnings", classes="picker-warning", markup=False)
            yield Input(placeholder=PATH_PLACEHOLDER, id="quant-path")
            yield Static(
                "Enter shows the cost of switching; Enter again switches.",
                id="quant-cost",
                markup=False,
            )

    def on_mount(self) -> None:
        """List the models on disk in a worker."""
        self._list()

    @work(thread=True, name="list-local", exit_on_error=False)
    def _list(self) -> None:

        self.post_message(LocalListed(local_choices(self.settings, AppPaths.default())))

    def on_local_listed(self, message: LocalListed) -> None:
        """Fill the table."""
        self.models = message.choices.models
        self.rows = message.choices.rows
        table = self.query_one(DataTable)
        fill_table(table, self.rows, message.choices.measured)
        if not self.models:
            self.query_one("#quant-cost", Static).update(
                "No other model on disk: give a .gguf path above, or pull one with "
                "`frogdesk models pull`."
            )
            self.query_one("#quant-path", Input).focus()
            return
        table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The highlighted model's warnings under the table."""
        if 0 <= event.cursor_row < len(self.rows):
            warnings = warnings_text(self.rows[event.cursor_row])
            self.query_one("#quant-warnings", Static).update(warnings)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """A path: checked, then the same cost announcement and confirmation as a row."""
        try:
            path = check_loadable(Path(event.value.strip()).expanduser())
        except ModelError as exc:
            self.query_one("#quant-cost", Static).update(plain_block(str(exc)))
            self.announced = None
            return
        if self.announced == path:
            self.dismiss(path)
            return
        self._cost(path)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """First Enter announces the cost, a second Enter on the same row switches."""
        if not 0 <= event.cursor_row < len(self.models):
            return
        path = self.models[event.cursor_row].path
        if self.announced == path:
            self.dismiss(path)
            return
        self._cost(path)

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
        self.query_one("#quant-cost", Static).update(plain_block(message.text))
        self.announced = message.path if message.ok else None

    def action_close(self) -> None:
        """Keep the current model."""
        self.dismiss(None)
