"""Attempts side by side: start N attempts at a task, compare or rank them, pick one to review."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Input, Label, Static

from frogdesk.attempts.rank import RANKING
from frogdesk.attempts.record import AttemptResult, AttemptsOutcome
from frogdesk.attempts.spec import MAX_ATTEMPTS
from frogdesk.core.ports import Operator, Workbench
from frogdesk.core.status import check_source_words, ending_words
from frogdesk.inert import inert_line, inert_text
from frogdesk.leaf.events import LoopEvent, RunFinished, StepStarted
from frogdesk.tui.bindings import attempts_bindings
from frogdesk.tui.messages import WorkFailed
from frogdesk.tui.widgets.fitting_footer import FittingFooter
from frogdesk.tui.workers import ShowsWorkerErrors, error_words


@dataclass(frozen=True)
class AttemptsRequest:
    """What the setup dialog asks for: how many attempts, and the check ("" for none)."""

    n: int
    check: str


@dataclass(frozen=True)
class AttemptChoice:
    """The attempt the user picked, and whether the others stay."""

    session_id: str
    keep_others: bool


class AttemptsSetupScreen(ModalScreen[AttemptsRequest | None]):
    """Asks for N and the check command (prefilled with what the repository suggests)."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape", "drop", "Cancel")]

    def __init__(self, n: int, check: str, found: str) -> None:
        super().__init__()
        self.n = n
        self.check = check
        self.found = found

    def compose(self) -> ComposeResult:
        """Two fields and a start button."""
        with Vertical(classes="dialog"):
            yield Label("Attempts at this task", classes="dialog-title")
            yield Input(str(self.n), id="attempts-n", type="integer")
            note = f"check (detected: {self.found})" if self.found else "check (none detected)"
            yield Label(Text(inert_line(note)))
            yield Input(self.check, id="attempts-check", placeholder="empty: compare only")
            yield Label("", id="attempts-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Start", id="attempts-start", variant="primary")

    def on_mount(self) -> None:
        """Start in the count field."""
        self.query_one("#attempts-n", Input).focus()

    def _start(self) -> None:
        raw = self.query_one("#attempts-n", Input).value.strip()

        if not raw.isdigit() or not 1 <= int(raw) <= MAX_ATTEMPTS:
            self.query_one("#attempts-error", Label).update(
                Text(f"the number of attempts must be 1 to {MAX_ATTEMPTS}")
            )
            return
        self.dismiss(AttemptsRequest(int(raw), self.query_one("#attempts-check", Input).value))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Start."""
        self._start()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in either field starts."""
        self._start()

    def action_drop(self) -> None:
        """Cancel."""
        self.dismiss(None)


@dataclass
class AttemptsFinished(Message):
    """The worker ran every attempt and its check, and read each attempt's patch."""

    outcome: AttemptsOutcome
    patches: dict[str, str]


@dataclass
class AttemptProgress(Message):
    """An attempt started a step or ended (from the worker, coalesced per attempt)."""

    index: int
    text: str


class AttemptDiffScreen(ModalScreen[None]):
    """One attempt's patch, as inert text."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape,d,q", "close", "Back")]

    def __init__(self, title: str, patch: str) -> None:
        super().__init__()
        self.title_text = title
        self.patch = patch

    def compose(self) -> ComposeResult:
        """The title and the patch, scrollable."""
        with Vertical(classes="dialog attempt-diff"):
            yield Label(Text(inert_line(self.title_text)), classes="dialog-title")
            with VerticalScroll():
                patch = inert_text(self.patch) if self.patch else "(no changes)"
                yield Static(Text(patch), id="attempt-patch")

    def action_close(self) -> None:
        """Back to the attempts."""
        self.dismiss(None)


def card_text(attempt: AttemptResult, place: str, ranked: bool) -> Text:
    """One attempt's card: check, changes, steps, tokens, time and the final message."""
    text = Text()
    text.append(f"{place}  {inert_line(attempt.session_id or '(not started)')}\n", style="bold")
    check = attempt.check
    if check is None:
        text.append("no check\n" if not ranked else "check did not run\n", style="dim")
    elif check.passed:
        text.append(f"check passed in {check.seconds:.1f}s\n", style="green")
    else:
        text.append(f"check failed ({check.exit_code}) in {check.seconds:.1f}s\n", style="red")
    if check is not None and check.summary:
        text.append(f"  {inert_line(check.summary)}\n")
    text.append(f"{ending_words(attempt.exit_reason)}\n")
    if attempt.error:
        text.append(f"  {inert_line(attempt.error)}\n", style="red")
    text.append(
        f"{len(attempt.files_changed)} files, +{attempt.lines_added} -{attempt.lines_removed}\n"
    )
    text.append(f"{attempt.n_steps} steps, {attempt.tokens} tokens, {attempt.seconds:.1f}s\n")
    text.append(f"seed {attempt.seed}\n\n", style="dim")
    text.append(
        inert_text(attempt.final_message) if attempt.final_message else "(no final message)"
    )
    return text


class AttemptsScreen(ShowsWorkerErrors, Screen[AttemptChoice | None]):
    """Runs N attempts in a worker, then shows them side by side to compare and pick from."""

    BINDINGS: ClassVar[list[BindingType]] = attempts_bindings()

    def __init__(
        self, workbench: Workbench, task: str, request: AttemptsRequest, operator: Operator
    ) -> None:
        super().__init__()
        self.workbench = workbench
        self.task_text = task
        self.request = request
        self.operator = operator
        """The session screen: asked about held-back commands and checks of every attempt."""
        self.cancel = threading.Event()
        self.outcome: AttemptsOutcome | None = None
        self.selected = 0
        self.keep_others = True
        self.patches: dict[str, str] = {}
        self.progress = [f"attempt {i + 1}: starting" for i in range(request.n)]
        self.running = False
        """The attempts' worker is running."""

    def compose(self) -> ComposeResult:
        """A header line and one card per attempt."""
        header = f"{self.request.n} attempts: {inert_line(self.task_text)}"
        yield Static(Text(header), id="attempts-header")
        with Horizontal(id="attempts-cards"):
            for index in range(self.request.n):
                yield Static(Text(self.progress[index]), classes="attempt-card", id=f"card-{index}")
        yield Static(Text(""), id="attempts-footer")
        yield FittingFooter()

    def on_mount(self) -> None:
        """Start the attempts."""
        self._run()

    def on_unmount(self) -> None:
        """Leaving stops attempts still running."""
        self.cancel.set()

    def busy_with(self) -> str:
        """What quitting would stop here, in words ("" when nothing)."""
        return f"{self.request.n} attempts are running" if self.running else ""

    @work(thread=True, name="attempts", exit_on_error=False)
    def _run(self) -> None:
        self.running = True
        try:
            self._run_attempts()
        finally:
            self.running = False

    def _run_attempts(self) -> None:
        steps = [0] * self.request.n

        def on_event(index: int, event: LoopEvent) -> None:
            if isinstance(event, StepStarted):
                steps[index] = event.step + 1
                self.post_message(
                    AttemptProgress(index, f"attempt {index + 1}: step {steps[index]}")
                )
            elif isinstance(event, RunFinished):
                ended = ending_words(event.exit_reason)
                text = f"attempt {index + 1}: {ended} after {event.n_steps} steps"
                self.post_message(AttemptProgress(index, text))

        try:
            outcome = self.workbench.run_attempts(
                self.task_text,
                self.request.n,
                self.request.check,
                self.operator,
                self.cancel,
                on_event,
            )
        except Exception as exc:
            self.post_message(WorkFailed("running the attempts", error_words(exc)))
            return
        patches = {
            a.session_id: self.workbench.attempt_patch(a.session_id)
            for a in outcome.attempts
            if a.session_id
        }
        self.post_message(AttemptsFinished(outcome, patches))

    def on_attempt_progress(self, message: AttemptProgress) -> None:
        """Show how far an attempt got."""
        if self.outcome is None:
            self.query_one(f"#card-{message.index}", Static).update(Text(message.text))

    def on_work_failed(self, message: WorkFailed) -> None:
        """Say what broke."""
        self.query_one("#attempts-footer", Static).update(
            Text(inert_line(f"Error while {message.what}: {message.error}"), style="red")
        )

    def on_attempts_finished(self, message: AttemptsFinished) -> None:
        """Show the attempts: ranked when a check ran, else in start order as a comparison."""
        self.outcome = outcome = message.outcome
        self.patches = message.patches
        if outcome.ranked:
            source = check_source_words(outcome.check_source)
            check = inert_line(f"{outcome.check_command} ({source})")
            head = f"check: {check}\nranked: {RANKING}"
        else:
            head = "No check command: compare the attempts yourself; they are not ranked."
        self.query_one("#attempts-header", Static).update(Text(head))
        for position, attempt in enumerate(outcome.attempts):
            place = f"#{position + 1}" if outcome.ranked else f"attempt {attempt.index + 1}"
            card = self.query_one(f"#card-{position}", Static)
            card.update(card_text(attempt, place, outcome.ranked))
        self._select(0)

    def _select(self, position: int) -> None:
        if self.outcome is None or not self.outcome.attempts:
            return
        self.selected = position % len(self.outcome.attempts)
        for index in range(len(self.outcome.attempts)):
            self.query_one(f"#card-{index}", Static).set_class(index == self.selected, "selected")
        others = "kept" if self.keep_others else "discarded"
        self.query_one("#attempts-footer", Static).update(
            Text(
                f"selected: {inert_line(self.outcome.attempts[self.selected].session_id)}; "
                f"the others will be {others} (k toggles); Enter reviews it, d shows its diff"
            )
        )

    def action_move(self, step: int) -> None:
        """Select the previous or next attempt."""
        self._select(self.selected + step)

    def action_toggle_keep(self) -> None:
        """Keep or discard the attempts not chosen."""
        self.keep_others = not self.keep_others
        self._select(self.selected)

    @property
    def current(self) -> AttemptResult | None:
        """The selected attempt, once the attempts have finished."""
        if self.outcome is None or not self.outcome.attempts:
            return None
        return self.outcome.attempts[self.selected]

    def action_diff(self) -> None:
        """Show the selected attempt's diff."""
        attempt = self.current
        if attempt is None or not attempt.session_id:
            return
        patch = self.patches.get(attempt.session_id, "")
        self.app.push_screen(AttemptDiffScreen(f"diff of {attempt.session_id}", patch))

    def action_choose(self) -> None:
        """Review the selected attempt."""
        attempt = self.current
        if attempt is None or not attempt.session_id:
            return
        self.dismiss(AttemptChoice(attempt.session_id, self.keep_others))

    def action_leave(self) -> None:
        """Back to the session screen; running attempts are stopped, finished ones kept."""
        self.cancel.set()
        self.dismiss(None)
