"""Switching the session's quant: the models on disk, the cost announced, then a load in a worker."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from frogdesk.config import Settings
from frogdesk.tui.untrusted import plain_block, plain_cell
from frogdesk.tui.workers import ShowsWorkerErrors

if TYPE_CHECKING:
    from frogdesk.models.local import LocalModel


@dataclass
class LocalListed(Message):
    """The models on disk."""

    models: list[LocalModel]


@dataclass
class CostReady(Message):
    """The announcement for switching to one model, or why it cannot be used."""

    path: Path
    text: str
    ok: bool


class QuantSwitchScreen(ShowsWorkerErrors, ModalScreen[Path | None]):
    """Pick a model on disk; the switch cost is shown and Enter again confirms it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Cancel", id="quant_close")]

    def __init__(self, settings: Settings, context_tokens: int) -> None:
        super().__init__()
        self.settings = settings
        self.context_tokens = context_tokens
        self.models: list[LocalModel] = []
        self.announced: Path | None = None

    def compose(self) -> ComposeResult:
        """The models on disk and the cost line."""
        with Vertical(classes="dialog"):
            yield Label("Switch quant (the conversation stays)", classes="dialog-title")
            yield DataTable(id="quant-table", cursor_type="row")
            yield Static(
                "Enter shows the cost of switching; Enter again switches.",
                id="quant-cost",
                markup=False,
            )

    def on_mount(self) -> None:
        """List the models on disk in a worker."""
        self.query_one(DataTable).add_columns("model", "quant", "size")
        self._list()

    @work(thread=True, name="list-local", exit_on_error=False)
    def _list(self) -> None:
        from frogdesk.models.local import all_local
        from frogdesk.paths import AppPaths

        models = [
            m for m in all_local(AppPaths.default().models_dir) if m.complete and not m.name.mmproj
        ]
        self.post_message(LocalListed(models))

    def on_local_listed(self, message: LocalListed) -> None:
        """Fill the table."""
        self.models = message.models
        table = self.query_one(DataTable)
        for model in message.models:
            table.add_row(
                plain_cell(model.repo or model.path.parent.name),
                plain_cell(model.name.quant or ""),
                f"{model.size / 1e9:.2f} GB",
            )
        if not message.models:
            self.query_one("#quant-cost", Static).update(
                "No other model on disk: pull one with `frogdesk models pull`."
            )
        table.focus()

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
        from frogdesk.models.switch import plan_switch

        try:
            plan = plan_switch(str(path), self.settings, self.context_tokens)
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
