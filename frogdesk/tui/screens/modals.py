"""Small modal questions: after a stop, Bash approval, yes/no confirmation."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from frogdesk.inert import command_warning, inert_command
from frogdesk.tui.untrusted import plain_block

StopAnswer = Literal["continue", "guidance", "end", "back"]
"""`back` (Escape) closes the question and changes nothing: the session stays stopped."""


class StopChoiceScreen(ModalScreen[tuple[StopAnswer, str]]):
    """Asked after the user stopped a run: continue, give more guidance, or end."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "choose('continue')", "Continue", id="stop_continue"),
        Binding("g", "choose('guidance')", "Guidance", id="stop_guidance"),
        Binding("e", "choose('end')", "End", id="stop_end"),
        Binding("escape", "choose('back')", "Back", id="stop_back"),
    ]

    def compose(self) -> ComposeResult:
        """A question, three buttons and a guidance field."""
        with Vertical(classes="dialog"):
            yield Label(
                "Stopped. What next? (Escape: back, nothing changes)", classes="dialog-title"
            )
            yield Input(placeholder="more guidance for the model (Enter sends)", id="guidance")
            with Horizontal(classes="dialog-buttons"):
                yield Button(Content("Continue [c]"), id="continue", variant="primary")
                yield Button(Content("Send guidance [g]"), id="guidance-button")
                yield Button(Content("End [e]"), id="end", variant="error")

    def on_mount(self) -> None:
        """Focus the buttons so the single keys work."""
        self.query_one("#continue", Button).focus()

    def action_choose(self, answer: StopAnswer) -> None:
        """Answer with one of the three choices."""
        if answer == "guidance":
            field = self.query_one("#guidance", Input)
            if not field.value.strip():
                field.focus()
                return
            self.dismiss(("guidance", field.value.strip()))
            return
        self.dismiss((answer, ""))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Buttons map to the same choices as the keys."""
        mapping: dict[str | None, StopAnswer] = {
            "continue": "continue",
            "guidance-button": "guidance",
            "end": "end",
        }
        self.action_choose(mapping.get(event.button.id, "end"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the guidance field sends it."""
        event.stop()
        self.action_choose("guidance")


class ApproveCommandScreen(ModalScreen[bool]):
    """Asks before one Bash command the `bash_approval` setting holds back, at any level."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Run it", id="approve_yes"),
        Binding("n,escape", "answer(False)", "Refuse", id="approve_no"),
    ]

    def __init__(self, command: str, sandbox: str = "none") -> None:
        super().__init__()
        self.command = command
        self.sandbox = sandbox
        """The level the command would run at: the question says it."""

    def compose(self) -> ComposeResult:
        """The command and two buttons."""
        if self.sandbox == "none":
            title = "Run this command without a sandbox?"
        else:
            title = f"Run this command (in the {self.sandbox} sandbox)?"
        with Vertical(classes="dialog"):
            yield Label(title, classes="dialog-title")
            yield Static(Content(inert_command(self.command)), classes="dialog-command")
            warning = command_warning(self.command)
            if warning:
                yield Static(warning, classes="dialog-warning", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button(Content("Run [y]"), id="yes", variant="warning")
                yield Button(Content("Refuse [n]"), id="no", variant="primary")

    def action_answer(self, answer: bool) -> None:
        """Dismiss with the answer."""
        self.dismiss(answer)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Buttons answer like the keys."""
        self.dismiss(event.button.id == "yes")


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm_yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm_no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        """The question and two buttons."""
        with Vertical(classes="dialog"):
            yield Label(plain_block(self.question), classes="dialog-title")
            with Horizontal(classes="dialog-buttons"):
                yield Button(Content("Yes [y]"), id="yes", variant="warning")
                yield Button(Content("No [n]"), id="no", variant="primary")

    def action_answer(self, answer: bool) -> None:
        """Dismiss with the answer."""
        self.dismiss(answer)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Buttons answer like the keys."""
        self.dismiss(event.button.id == "yes")
