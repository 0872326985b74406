"""The session screen: conversation, prompt, status bar; runs the loop in a thread worker."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Input
from textual.widgets._collapsible import CollapsibleTitle

from frogdesk.config import Settings
from frogdesk.core.history import UserTurn
from frogdesk.core.ports import AgentSession, Workbench
from frogdesk.core.status import ending_words, sent_back_words, status_words
from frogdesk.engine.kinds import kind_of
from frogdesk.leaf.events import (
    LoopEvent,
    Notice,
    RunFinished,
    StepStarted,
    StepUsage,
    ToolFinished,
)
from frogdesk.leaf.records import add_drafts
from frogdesk.models.switch_plan import SwitchPlan
from frogdesk.sessions.record import SessionRecord
from frogdesk.tui.bindings import session_bindings
from frogdesk.tui.gil import decode_switch_interval
from frogdesk.tui.messages import ChangedFiles, QuantSwitched, RunEnded, SessionOpened, WorkFailed
from frogdesk.tui.screens.attempts_flow import StartsAttempts
from frogdesk.tui.screens.modals import ApproveCommandScreen, StopAnswer, StopChoiceScreen
from frogdesk.tui.screens.quant import QuantSwitchScreen
from frogdesk.tui.screens.review import ReviewOutcome, ReviewScreen
from frogdesk.tui.screens.sessions import SessionsScreen
from frogdesk.tui.stream import EventBuffer
from frogdesk.tui.widgets.conversation import Conversation
from frogdesk.tui.widgets.fitting_footer import FittingFooter
from frogdesk.tui.widgets.prompt_input import PromptInput
from frogdesk.tui.widgets.queued import QueuedMessages
from frogdesk.tui.widgets.status_bar import StatusBar, draft_fields, short_model
from frogdesk.tui.workers import ShowsWorkerErrors, error_words

FRAME_SECONDS = 1 / 15
"""Streamed tokens reach the screen at most this often: faster than a 4B model decodes on a
laptop CPU, and rare enough that repainting leaves the decode threads their cores."""

SPEED_SECONDS = 0.5
"""The live tokens-per-second readout changes at most this often: readable, and a repaint
less on most frames."""

_CHANGING_TOOLS = {"Write", "Edit", "Bash"}


class SessionScreen(StartsAttempts, ShowsWorkerErrors, Screen[None]):
    """One agent session; the loop runs in a worker and streams into an EventBuffer.

    The screen is its sessions' operator: it asks about the Bash commands the
    `bash_approval` setting holds back (a modal) and shows the core's notices.
    """

    BINDINGS = session_bindings()

    def __init__(
        self,
        workbench: Workbench,
        settings: Settings,
        syntax_style: str,
        *,
        repo: Path | None = None,
    ) -> None:
        super().__init__()
        self.workbench = workbench
        self.repo = repo
        """The repository open (said at the top of the conversation), when known."""
        self.settings = settings
        self.syntax_style = syntax_style
        self.session: AgentSession | None = None
        self.buffer = EventBuffer()
        self.cancel = threading.Event()
        self.running = False
        self.loading_model = ""
        """The file a quant switch is loading ("" when none)."""
        self.last_exit: RunFinished | None = None
        self._generating = False
        self._speed_shown = 0.0
        self._prompt_shown = 0.0
        self._drafts: dict[str, dict[str, int]] = {}
        """Drafted and accepted tokens of the open session, by drafter."""
        # The frame timer and the end of a run both flush; one at a time keeps the events in order.
        self._flushing = asyncio.Lock()

    def compose(self) -> ComposeResult:
        """Conversation above, prompt and status bar below."""
        yield Conversation(self.syntax_style, id="conversation")
        yield QueuedMessages(id="queued")
        yield PromptInput(id="prompt", placeholder="Describe a task for the model, then Enter")
        yield StatusBar(id="status")
        yield FittingFooter()

    def on_mount(self) -> None:
        """Fill the status bar and start the frame timer."""
        info = self.workbench.backend_info()
        self.status.update_info(
            model=short_model(info.model),
            quant=info.quant,
            device=info.device,
            dialect=info.dialect,
            sandbox=self.workbench.sandbox_level(),
            context_budget=min(
                self.settings.loop.max_context_tokens,
                info.context_size or self.settings.loop.max_context_tokens,
            ),
            max_steps=self.settings.loop.max_steps,
        )
        self.set_interval(FRAME_SECONDS, self.flush, name="stream-frame")
        self.query_one(PromptInput).focus()
        if kind_of(info.kind).remote_endpoint:
            self._ask_server_model()
        if self.repo is not None:
            self.call_later(
                self.conversation.add_notice,
                f"Repository: {self.repo}\nThe model works on a copy; nothing changes here "
                "until you apply a review (Ctrl+R).",
            )

    @work(thread=True, name="server-model", exit_on_error=False)
    def _ask_server_model(self) -> None:
        model = self.workbench.server_model()
        if model:
            self.app.call_from_thread(self.status.update_info, model=model)

    def on_unmount(self) -> None:
        """Leaving the screen (or quitting) stops the run, so no worker outlives the app."""
        self.cancel.set()

    @property
    def status(self) -> StatusBar:
        """The status bar."""
        return self.query_one(StatusBar)

    @property
    def conversation(self) -> Conversation:
        """The conversation view."""
        return self.query_one(Conversation)

    @property
    def queued(self) -> QueuedMessages:
        """The messages typed while the model works."""
        return self.query_one(QueuedMessages)

    # -- prompting ---------------------------------------------------------

    @on(Input.Submitted, "#prompt")
    async def submit_prompt(self, event: Input.Submitted) -> None:
        """Start a session with the task, or send more guidance to the stopped one."""
        text = event.value.strip()
        if not text and self.session is not None and not self.running:
            await self.conversation.add_notice("Continuing.")
            self.start("")
            return
        if not text:
            return
        prompt = self.query_one(PromptInput)
        prompt.remember(text)
        prompt.value = ""
        if self.running:  # the next user message: sent when the model's turn ends
            await self.queued.add(text)
            return
        await self.conversation.add_user(text)
        self.start(text)

    def start(self, prompt: str) -> None:
        """Run the loop on a prompt (opening a session first when there is none)."""
        self.running = True
        self.cancel = threading.Event()
        self.status.update_info(state="starting")
        if self.session is None:
            self._open_session(prompt)
        else:
            self._run(self.session, prompt)

    @work(thread=True, name="open-session", exit_on_error=False)
    def _open_session(self, task: str) -> None:
        try:
            session = self.workbench.new_session(task, self)
        except Exception as exc:  # shown to the user by the WorkFailed handler
            self.post_message(WorkFailed("opening the session", error_words(exc)))
            return
        tools = session.toolchain()
        if tools:
            self.buffer.push(Notice("The session's shell finds:\n" + "\n".join(tools)))
        self.post_message(SessionOpened(session, task))

    async def on_session_opened(self, message: SessionOpened) -> None:
        """Run the prompt on the new (or reopened) session."""
        self.session = message.session
        # the session's own draft counts: a resumed session goes on from its stored totals
        self._drafts = {k: dict(v) for k, v in message.session.record.drafts.items()}
        # the rate shown was another session's (or another run's): none until this one decodes
        self.status.update_info(tokens_per_second=0.0, **draft_fields(self._drafts))
        if message.run:
            self.running = True
            self._run(message.session, message.prompt)
            return
        self.running = False
        self.last_exit = None
        record = message.session.record
        words = status_words(record)
        conversation = self.conversation
        async with self._flushing:  # no frame of a stream in between the stored turns
            await conversation.clear()
            for item in message.history:
                if isinstance(item, UserTurn):
                    await conversation.add_user(item.text)
                else:
                    await conversation.apply([item])
        if record.status == "finished" and record.exit_reason == "agent":
            hint = "Write a message to continue it; Ctrl+R reviews its changes."
        else:
            hint = "Enter on an empty prompt continues; or type more guidance."
        await conversation.add_notice(f"Opened session {record.id} ({words}).\n{hint}")
        # The state changes last, once the stored conversation is on screen.
        self.status.update_info(
            state=words, step=record.n_steps, changed_files=message.session.changed_files()
        )
        self.query_one(PromptInput).focus()

    @work(thread=True, name="agent-run", exit_on_error=False)
    def _run(self, session: AgentSession, prompt: str) -> None:
        cancel = self.cancel

        def emit(event: LoopEvent) -> None:
            self.buffer.push(event)
            if isinstance(event, ToolFinished) and event.call.name in _CHANGING_TOOLS:
                self.post_message(ChangedFiles(session.changed_files()))

        # the loaded model tells the status bar how far a long prompt's prefill has read
        self.workbench.watch_prefill(self.buffer.prefill)
        try:
            with decode_switch_interval():
                session.run(prompt, cancel, emit)
            changed = session.changed_files()
        except Exception as exc:
            self.post_message(WorkFailed("running the model", error_words(exc)))
            return
        finally:
            self.workbench.watch_prefill(None)
            self.buffer.prefill_ended()
        self.post_message(RunEnded(changed))

    # -- streaming ----------------------------------------------------------

    async def flush(self) -> None:
        """Show what the worker produced since the last frame (UI thread, at FRAME_SECONDS)."""
        async with self._flushing:
            events = self.buffer.drain()
            if events:
                self._update_status(events)
                await self.conversation.apply(events)
        now = time.monotonic()
        if self._generating and now - self._speed_shown >= SPEED_SECONDS:
            rate = self.buffer.live_rate()
            if rate is not None:
                self._speed_shown = now
                self.status.update_info(tokens_per_second=rate)
        self._show_prompt_progress(now)

    def _show_prompt_progress(self, now: float) -> None:
        """The prefill's tokens read, rate and time left, at most every SPEED_SECONDS."""
        prompt = self.buffer.prompt_progress()
        if prompt is None:
            if self.status.info.prompt_total:
                self.status.update_info(prompt_read=0, prompt_total=0, prompt_rate=0.0)
        elif now - self._prompt_shown >= SPEED_SECONDS or not self.status.info.prompt_total:
            self._prompt_shown = now
            self.status.update_info(
                prompt_read=prompt.read, prompt_total=prompt.total, prompt_rate=prompt.rate
            )

    def _update_status(self, events: list[LoopEvent]) -> None:
        for event in events:
            if isinstance(event, StepStarted):
                self._generating = True
                self.status.update_info(step=event.step + 1, state="generating")
            elif isinstance(event, StepUsage):
                self._generating = False
                usage = event.usage
                info = self.status.info
                add_drafts(self._drafts, usage)
                self.status.update_info(
                    context_used=usage.prompt_tokens + usage.completion_tokens,
                    tokens_per_second=usage.decode_rate or info.tokens_per_second,
                    state="running tools",
                    **draft_fields(self._drafts),
                )
            elif isinstance(event, RunFinished):
                self._generating = False
                self.last_exit = event
                self.status.update_info(state=ending_words(event.exit_reason))

    def on_changed_files(self, message: ChangedFiles) -> None:
        """Keep the worktree state in the status bar current."""
        self.status.update_info(changed_files=message.count)

    async def on_run_ended(self, message: RunEnded) -> None:
        """Show the rest of the stream, then ask what next if the user stopped it."""
        await self.flush()
        self.running = False
        self._generating = False
        self.status.update_info(changed_files=message.changed_files)
        if self.last_exit is not None and self.last_exit.exit_reason == "cancelled":
            await self._unqueue()
            self.app.push_screen(StopChoiceScreen(), self._after_stop)
            return
        self.query_one(PromptInput).focus()
        queued = await self.queued.take_all()
        if queued and self.session is not None:
            text = "\n\n".join(queued)
            await self.conversation.add_user(text)
            self.start(text)

    async def _unqueue(self) -> None:
        """A stopped run sends nothing queued: the messages go back into the prompt."""
        queued = await self.queued.take_all()
        if queued:
            prompt = self.query_one(PromptInput)
            prompt.value = " ".join([*queued, prompt.value]).strip()
            prompt.cursor_position = len(prompt.value)
            await self.conversation.add_notice("The queued message is back in the prompt.")

    async def on_work_failed(self, message: WorkFailed) -> None:
        """A worker raised: say so in the conversation and stay usable."""
        await self.flush()
        self.running = False
        self._generating = False
        self.status.update_info(state="error")
        await self.conversation.add_notice(f"Error while {message.what}: {message.error}", "error")
        await self._unqueue()

    # -- control -------------------------------------------------------------

    def action_stop(self) -> None:
        """Stop generation or the running tool now."""
        if self.running:
            self.cancel.set()
            self.status.update_info(state="stopping")

    async def _after_stop(self, answer: tuple[StopAnswer, str] | None) -> None:
        choice, text = answer or ("back", "")
        if choice == "back":  # the question closes; the session stays stopped as it is
            self.query_one(PromptInput).focus()
        elif choice == "continue":
            await self.conversation.add_notice("Continuing.")
            self.start("")
        elif choice == "guidance":
            self.query_one(PromptInput).remember(text)
            await self.conversation.add_user(text)
            self.start(text)
        else:
            self.status.update_info(state="ended")
            self.query_one(PromptInput).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Up takes a queued message back only from the empty prompt (else it is history or
        scrolling); card keys only when there are cards. None: listed, but the key passes on."""
        if action == "edit_queued":
            prompt = self.query_one(PromptInput)
            return (bool(self.queued.texts) and prompt.has_focus and not prompt.value) or None
        if action == "card":
            return bool(self.conversation.cards) or None
        return True

    async def action_edit_queued(self) -> None:
        """Put the newest queued message back into the prompt: edit and Enter re-queues it,
        or clear it to drop it."""
        text = await self.queued.take_last()
        if text is not None:
            prompt = self.query_one(PromptInput)
            prompt.value = text
            prompt.cursor_position = len(text)

    def action_card(self, step: int) -> None:
        """Focus the previous (-1) or next (1) tool card; past the last, the prompt again.
        Reasoning blocks are skipped: Tab still visits everything."""
        cards = self.conversation.cards
        focused = self.focused
        inside = [i for i, card in enumerate(cards) if focused in card.walk_children()]
        current = inside[0] if inside else None
        if current is None:
            target = len(cards) - 1 if step < 0 else 0
        elif current + step >= len(cards):
            self.query_one(PromptInput).focus()
            return
        else:
            target = max(0, current + step)
        cards[target].query_one(CollapsibleTitle).focus()

    def action_new_session(self) -> None:
        """Leave this session (it stays stored: Ctrl+S) for a fresh task prompt on the same
        repository and model."""
        if self.running:
            self.notify("Stop the model first (Escape).", severity="warning")
            return
        style = getattr(self.app, "syntax_style", self.syntax_style)
        self.app.switch_screen(SessionScreen(self.workbench, self.settings, style, repo=self.repo))

    def action_toggle_reasoning(self) -> None:
        """Collapse or expand the reasoning blocks."""
        conversation = self.conversation
        conversation.set_reasoning_collapsed(not conversation.reasoning_collapsed)

    def notice(self, notice: Notice) -> None:
        """Show a notice of the core in the conversation (from the worker, like the events)."""
        self.buffer.push(notice)

    def progress(self, line: str) -> None:
        """Show what a long operation of the core is doing (the plan of N attempts)."""
        self.buffer.push(Notice(line))

    def approve(self, command: str) -> bool:
        """Ask the user about one Bash command (called from the worker; waits for the answer)."""
        answer: Future[bool] = Future()

        def done(result: bool | None) -> None:
            answer.set_result(bool(result))

        question = ApproveCommandScreen(command, self.workbench.sandbox_level())
        self.app.call_from_thread(self.app.push_screen, question, done)
        while not answer.done():
            if self.cancel.wait(0.05):
                self.app.call_from_thread(self._drop_approval)
                return False
        return answer.result()

    # -- other screens -------------------------------------------------------------

    def action_review(self) -> None:
        """Review the session's changes."""
        if self.session is None or self.running:
            self.notify("Nothing to review yet, or the model is still working.", severity="warning")
            return
        self.open_review(self.session.record)

    def open_review(self, record: SessionRecord) -> None:
        """Review a session's changes; sending them back continues it here."""

        def done(outcome: ReviewOutcome | None) -> None:
            if outcome is not None and outcome[0] == "send_back":
                self.running = True
                self.status.update_info(state="sending back")
                self.call_later(self.conversation.add_user, sent_back_words(outcome[1]))
                self._send_back(record.id, outcome[1])

        screen = ReviewScreen(self.workbench, record.id, self.syntax_style)
        self.app.push_screen(screen, done)

    @work(thread=True, name="send-back", exit_on_error=False)
    def _send_back(self, session_id: str, comment: str) -> None:
        try:
            _, session = self.workbench.send_back(session_id, comment, self)
        except Exception as exc:
            self.post_message(WorkFailed("sending the review back", error_words(exc)))
            return
        self.cancel = threading.Event()
        self.post_message(SessionOpened(session, ""))

    def action_sessions(self) -> None:
        """List this repository's sessions to resume or discard."""

        if self.running:
            self.notify("Stop the model first (Escape).", severity="warning")
            return

        def chosen(session_id: str | None) -> None:
            if session_id:
                self.open_session(session_id)

        self.app.push_screen(SessionsScreen(self.workbench), chosen)

    def open_session(self, session_id: str) -> None:
        """Open a stored session (of any status) in a worker: its conversation is shown."""
        self.status.update_info(state="opening")
        self._open_stored(session_id)

    @work(thread=True, name="open-stored-session", exit_on_error=False)
    def _open_stored(self, session_id: str) -> None:
        try:
            session = self.workbench.open_session(session_id, self)
            history = list(session.history())
        except Exception as exc:
            self.post_message(WorkFailed("opening the session", error_words(exc)))
            return
        self.post_message(SessionOpened(session, "", run=False, history=history))

    def action_switch_quant(self) -> None:
        """Move the session to another model on disk, after announcing the cost."""

        if self.running:
            self.notify("Stop the model first (Escape).", severity="warning")
            return
        if not kind_of(self.workbench.backend_info().kind).local_model:
            self.notify("This backend has no quants to switch.", severity="warning")
            return
        session_id = self.session.record.id if self.session is not None else None

        def chosen(path: Path | None) -> None:
            if path is not None:
                self.status.update_info(state=f"loading {path.name}")
                self._switch(path, session_id)

        context_tokens = self.status.info.context_used

        def price(path: Path) -> SwitchPlan:
            return self.workbench.price_switch(str(path), session_id, context_tokens)

        model = self.session.record.model if self.session is not None else ""
        self.app.push_screen(QuantSwitchScreen(self.settings, price, model), chosen)

    def busy_with(self) -> str:
        """What quitting would stop here, in words ("" when nothing)."""
        if self.running:
            return "The model or a command is running"
        if self.loading_model:
            return f"{self.loading_model} is loading"
        return ""

    @work(thread=True, name="switch-quant", exit_on_error=False)
    def _switch(self, path: Path, session_id: str | None) -> None:
        self.loading_model = path.name
        try:
            self._load_switched(path, session_id)
        finally:
            self.loading_model = ""

    def _load_switched(self, path: Path, session_id: str | None) -> None:
        self.cancel = threading.Event()
        shown = [-1]

        def progress(fraction: float) -> None:
            percent = int(fraction * 100)
            if percent // 5 != shown[0] // 5:  # a repaint every 5 %, from the load thread
                shown[0] = percent
                self.app.call_from_thread(
                    self.status.update_info, state=f"loading {path.name} {percent}%"
                )

        try:
            switched = self.workbench.switch_model(
                str(path), session_id, self, cancel=self.cancel, progress=progress
            )
        except Exception as exc:
            self.post_message(WorkFailed(f"loading {path.name}", error_words(exc)))
            return
        self.post_message(QuantSwitched(switched.info))

    async def on_quant_switched(self, message: QuantSwitched) -> None:
        """Show the new model; the conversation stays."""
        info = message.info
        self.status.update_info(
            model=info.model,
            quant=info.quant,
            device=info.device,
            state="ready",
            dialect=info.dialect,
        )
        await self.conversation.add_notice(
            f"Switched to {short_model(info.model)} {info.quant}; the next run re-reads the conversation."
        )

    def _drop_approval(self) -> None:
        if isinstance(self.app.screen, ApproveCommandScreen):
            self.app.screen.dismiss(False)
