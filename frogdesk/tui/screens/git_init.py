"""Asked when the app opens on a folder that is no git repository, before any model loads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Button, Label, Static

from frogdesk.core.repo_setup import INIT_QUESTION, init_repository
from frogdesk.errors import FrogDeskError
from frogdesk.tui.untrusted import plain_block

Then = Callable[[App[object]], object]
"""What the app does once the folder is a repository (open the picker or a session)."""

DECLINED = (
    "FrogDesk works on a git repository so that every change can be reviewed and undone; "
    "nothing was changed in {path}."
)


class GitInitScreen(Screen[None]):
    """Offers `git init` and a first commit of the folder; declining leaves the app."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "init", "Initialise", id="git_init_yes"),
        Binding("n,escape", "decline", "Quit", id="git_init_no"),
    ]

    def __init__(self, folder: Path, then: Then) -> None:
        super().__init__()
        self.folder = folder
        self.then = then
        self.busy = False

    def compose(self) -> ComposeResult:
        """The question, the folder, two buttons and a line for what happened."""
        with Vertical(classes="dialog", id="git-init"):
            yield Label(INIT_QUESTION, classes="dialog-title", markup=False)
            yield Static(plain_block(str(self.folder)), id="git-init-folder")
            with Horizontal(classes="dialog-buttons"):
                yield Button(Content("Initialise [y]"), id="git-init-yes", variant="primary")
                yield Button(Content("Quit [n]"), id="git-init-no")
            yield Static("", id="git-init-status", markup=False)

    def on_mount(self) -> None:
        """Focus the buttons so the single keys work."""
        self.query_one("#git-init-yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """The buttons do what the keys do."""
        if event.button.id == "git-init-yes":
            self.action_init()
        else:
            self.action_decline()

    def action_init(self) -> None:
        """Make the folder a repository (in a worker: a big folder takes a while to add)."""
        if not self.busy:
            self.busy = True
            self.query_one("#git-init-status", Static).update("Running git init…")
            self._init()

    def action_decline(self) -> None:
        """Leave the app, saying why nothing can be done here."""
        if not self.busy:
            self.app.exit(return_code=2, message=DECLINED.format(path=self.folder))

    @work(thread=True, name="git-init", exit_on_error=False)
    def _init(self) -> None:
        try:
            line = init_repository(self.folder)
        except FrogDeskError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._done, line)

    def _failed(self, error: str) -> None:
        self.busy = False
        self.query_one("#git-init-status", Static).update(plain_block(f"git init failed: {error}"))

    def _done(self, line: str) -> None:
        self.app.notify(line, markup=False)
        self.then(self.app)
