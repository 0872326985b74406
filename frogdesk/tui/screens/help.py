"""The `?` help: every key of the screen underneath, as currently mapped."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static


class HelpScreen(ModalScreen[None]):
    """Lists the active bindings with their keys and descriptions."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help_close")
    ]

    def __init__(self, rows: list[tuple[str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        """A title and one line per key."""
        with VerticalScroll(classes="dialog help"):
            yield Label(
                Content("Keys (remap them under [keys] in config.toml)"), classes="dialog-title"
            )
            width = max((len(key) for key, _ in self.rows), default=4)
            text = "\n".join(f"{key:<{width}}  {what}" for key, what in self.rows)
            yield Static(text, markup=False, classes="help-keys")
            yield Static(
                "Ctrl+P opens the command palette with every action. Mouse works everywhere.",
                classes="help-note",
            )

    async def action_dismiss(self, result: None = None) -> None:
        """Close the help."""
        self.dismiss(None)
