"""Starting N attempts from the session screen and reviewing the one the user picks."""

from __future__ import annotations

from textual import work
from textual.screen import Screen

from frogdesk.config import Settings
from frogdesk.core.ports import Workbench
from frogdesk.leaf.events import Notice
from frogdesk.sessions.record import SessionRecord
from frogdesk.tui.messages import WorkFailed
from frogdesk.tui.screens.attempts import (
    AttemptChoice,
    AttemptsRequest,
    AttemptsScreen,
    AttemptsSetupScreen,
)
from frogdesk.tui.widgets.prompt_input import PromptInput
from frogdesk.tui.workers import error_words


class StartsAttempts(Screen[None]):
    """The session screen's `attempts` action: set up, run, compare, then review one."""

    workbench: Workbench
    settings: Settings
    running: bool

    def approve(self, command: str) -> bool:
        """Ask the user about one Bash command (the session screen's own dialog)."""
        raise NotImplementedError

    def notice(self, notice: Notice) -> None:
        """Show a notice of the core (the session screen's conversation)."""
        raise NotImplementedError

    def progress(self, line: str) -> None:
        """Show what the core is doing (the session screen's conversation)."""
        raise NotImplementedError

    def open_review(self, record: SessionRecord) -> None:
        """Review a session's changes (the session screen's review)."""
        raise NotImplementedError

    def action_attempts(self) -> None:
        """Start the task in the prompt as N attempts side by side, then pick one to review."""
        task = self.query_one(PromptInput).value.strip()
        if self.running or not task:
            self.notify("Type the task first; the model must not be working.", severity="warning")
            return
        command, reason = self.workbench.detect_check()
        n = self.settings.loop.attempts if self.settings.loop.attempts > 1 else 3

        def start(request: AttemptsRequest | None) -> None:
            if request is not None:
                self.query_one(PromptInput).value = ""
                self._open_attempts(task, request)

        self.app.push_screen(AttemptsSetupScreen(n, command, reason), start)

    def _open_attempts(self, task: str, request: AttemptsRequest) -> None:
        screen = AttemptsScreen(self.workbench, task, request, self)

        def chosen(choice: AttemptChoice | None) -> None:
            if choice is not None and screen.outcome is not None:
                self._choose_attempt(screen, choice)

        self.app.push_screen(screen, chosen)

    @work(thread=True, name="choose-attempt", exit_on_error=False)
    def _choose_attempt(self, screen: AttemptsScreen, choice: AttemptChoice) -> None:
        assert screen.outcome is not None
        try:
            record, _ = self.workbench.choose_attempt(
                screen.outcome, choice.session_id, choice.keep_others
            )
        except Exception as exc:
            self.post_message(WorkFailed("choosing the attempt", error_words(exc)))
            return
        self.app.call_from_thread(self.open_review, record)
