"""The `?` help: every key of the screen underneath, as currently mapped, FrogDesk's first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Label, Static, TextArea

KeyRow = tuple[str, str]
"""(keys as displayed, what they do)."""

KeyGroup = tuple[str, list[KeyRow]]
"""A heading and its rows."""

TEXT_EDITING = "Text editing"
"""The heading of the keys a focused text field owns (listed last)."""


def _group_of(node: DOMNode, screen: Screen[object]) -> tuple[int, str]:
    """Where a binding's owner lists: this screen, everywhere, the focused item, text editing."""
    if node is screen:
        return 0, "This screen"
    if isinstance(node, App):
        return 1, "Everywhere"
    if isinstance(node, (Input, TextArea)):
        return 3, TEXT_EDITING
    return 2, "Focused item"


def key_groups(app: App[Any], screen: Screen[Any]) -> list[KeyGroup]:
    """Every described binding active on a screen, as remapped, grouped: the app's own keys
    first, the focused text field's editing keys last."""
    groups: dict[tuple[int, str], list[KeyRow]] = {}
    seen: set[KeyRow] = set()
    for key, active in screen.active_bindings.items():
        binding = active.binding
        if not binding.description:
            continue
        row = (app.get_key_display(binding) or key, binding.description)
        if row in seen:
            continue
        seen.add(row)
        groups.setdefault(_group_of(active.node, screen), []).append(row)
    return [(heading, rows) for (_, heading), rows in sorted(groups.items())]


class HelpScreen(ModalScreen[None]):
    """Lists the active bindings with their keys and descriptions, under headings."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help_close")
    ]

    def __init__(self, groups: Sequence[KeyGroup]) -> None:
        super().__init__()
        self.groups = list(groups)

    @property
    def rows(self) -> list[KeyRow]:
        """Every row, in the order shown."""
        return [row for _, rows in self.groups for row in rows]

    def compose(self) -> ComposeResult:
        """A title, then a heading and one line per key for each group."""
        with VerticalScroll(classes="dialog help"):
            yield Label(
                Content("Keys (remap them under [keys] in config.toml)"), classes="dialog-title"
            )
            width = max((len(key) for key, _ in self.rows), default=4)
            for heading, rows in self.groups:
                text = "\n".join(f"  {key:<{width}}  {what}" for key, what in rows)
                yield Static(f"{heading}\n{text}", markup=False, classes="help-keys")
            yield Static(
                "Ctrl+P opens the command palette with every action. Mouse works everywhere.",
                classes="help-note",
            )

    async def action_dismiss(self, result: None = None) -> None:
        """Close the help."""
        self.dismiss(None)
