"""The Workbench the faces use in real life: the SessionService on one loaded backend (the
TUI), or on a backend loaded per session (the CLI's `run` and `sessions resume`)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from frogdesk.attempts.backends import attempt_backends, llama_fit, loaded_model
from frogdesk.attempts.record import AttemptsOutcome
from frogdesk.attempts.service import choose_attempt, run_attempts
from frogdesk.attempts.spec import AttemptsSpec
from frogdesk.attempts.verify import detect_check
from frogdesk.config import Settings
from frogdesk.core.chooser import pull_missing
from frogdesk.core.history import HistoryItem, history_items
from frogdesk.core.model_ops import load_backend
from frogdesk.core.ports import AgentSession, AttemptEvents, SessionSummary, Switched
from frogdesk.core.reviewing import (
    SessionReview,
    apply_all,
    apply_reviewed,
    show_review,
    undo_latest,
)
from frogdesk.engine.chat import Backend, BackendInfo
from frogdesk.engine.kinds import kind_of
from frogdesk.engine.openai.backend import OpenAIBackend
from frogdesk.engine.openai.errors import EndpointError
from frogdesk.engine.registry import watch_prefill
from frogdesk.leaf.events import LoopEvent
from frogdesk.models.move_cost import plan_switch
from frogdesk.models.progress import ProgressCallback
from frogdesk.models.retry import NO_RETRY, RetryPolicy
from frogdesk.models.switch_plan import SwitchPlan
from frogdesk.paths import AppPaths
from frogdesk.review.apply import ApplyResult
from frogdesk.review.decisions import HunkDecisions
from frogdesk.review.decisions_store import save_decisions
from frogdesk.review.records import ApplyState, apply_state
from frogdesk.review.undo import UndoResult
from frogdesk.sandbox.levels import detect
from frogdesk.sandbox.tool_report import toolchain_summary
from frogdesk.sessions.active import ActiveSession, shown_status
from frogdesk.sessions.errors import SessionBusyError, SessionClosedError, SessionNotFoundError
from frogdesk.sessions.factories import BackendFactory
from frogdesk.sessions.move import measured_prefill_rate
from frogdesk.sessions.operator import NOBODY, Operator
from frogdesk.sessions.parts import default_backend, resolve_model_path
from frogdesk.sessions.patch import worktree_diff
from frogdesk.sessions.record import SessionRecord, SessionSpec
from frogdesk.sessions.sendback import SentBack
from frogdesk.sessions.service import SessionOutcome, SessionService
from frogdesk.sessions.store import DAMAGED_LINES_FILE, TRANSCRIPT_FILE, DamagedSession


def session_spec(
    task: str,
    repo: Path,
    settings: Settings,
    *,
    backend: str | None = None,
    model: str = "",
    script: Path | None = None,
) -> SessionSpec:
    """What a new session runs on: a script when one is given and no backend is, else
    `backend` (the settings' by default) with `model` or the settings' model for it."""
    if backend is None and script is not None:
        return SessionSpec(task, repo, backend="script", script=str(script))
    kind = backend or settings.engine.backend
    default = settings.engine.openai_model if kind_of(kind).remote_endpoint else settings.model
    return SessionSpec(
        task,
        repo,
        backend=kind,
        model=model or default,
        endpoint=settings.engine.openai_endpoint,
        script=str(script) if script is not None else "",
    )


class CoreSession:
    """An AgentSession over the core: the first run of a new session continues its opening;
    each later run reopens the stored transcript, after the user's message when there is one.
    Its operator, given once when the session is handed out, answers for every run."""

    def __init__(
        self,
        service: SessionService,
        record: SessionRecord,
        active: ActiveSession | None = None,
        overrides: dict[str, Any] | None = None,
        operator: Operator = NOBODY,
    ) -> None:
        self.service = service
        self.operator = operator
        """Asked before the Bash commands `bash_approval` holds back; told the notices."""
        self._record = record
        self.active = active
        """The session as it runs in this process; None until it runs (or was just opened)."""
        self._ready = active is not None
        self._overrides = dict(overrides or {})
        """Settings (raised limits) the next run takes instead of the session's own, recorded."""
        self.outcome: SessionOutcome | None = None
        """What the latest run ended with: result, diff, trajectory; None before one ends."""

    @property
    def record(self) -> SessionRecord:
        """The stored session record."""
        return self.active.record if self.active is not None else self._record

    def prepare(self, prompt: str = "") -> ActiveSession:
        """Open the session for its next run (blocking): worktree, shell and backend ready.

        A prompt becomes the model's next user message, unless the session is already open
        for a run (just started, sent back or switched), which takes no message.
        """
        if not self._ready:
            session_id = self.record.id
            if prompt:
                self.service.add_message(session_id, prompt)
            self.active = self.service.open(
                session_id, overrides=self._overrides, operator=self.operator
            )
            self._ready = True
        assert self.active is not None
        self.active.override(self._overrides)
        self._overrides = {}
        return self.active

    def run(self, prompt: str, cancel: threading.Event, emit: Callable[[LoopEvent], None]) -> None:
        """Run the loop; a prompt after the first run becomes the model's next user message."""
        active = self.prepare(prompt)
        self._ready = False
        self.outcome = self.service.run(
            active, operator=self.operator, cancel=cancel, on_event=emit
        )

    def close(self) -> None:
        """Let go of the backend and shell the session ran with (the record stays)."""
        if self.active is not None:
            self.active.close()

    def refresh(self, record: SessionRecord) -> None:
        """Take the stored record as changed elsewhere (another model written into it)."""
        self._record = record
        if self.active is not None:
            self.active.record = record

    def history(self) -> Sequence[HistoryItem]:
        """The stored conversation, as the events a run shows."""
        return history_items(self.service.store.read_transcript(self.record.id))

    def changed_files(self) -> int:
        """Files of the worktree that differ from the session's base snapshot."""
        record = self.record
        return len(worktree_diff(Path(record.worktree), record.base_commit).files)

    def toolchain(self) -> list[str]:
        """What the session's shell finds (its tools, what it is not shown); [] when not open."""
        if self.active is None or not self._ready:
            return []
        return toolchain_summary(self.active.shell.shell, Path(self.record.worktree))


class CoreWorkbench:
    """Sessions of one repository, all on one backend loaded once (or replayed from a script)."""

    def __init__(
        self,
        repo: Path,
        settings: Settings,
        *,
        backend: Backend | None = None,
        script: Path | None = None,
        attempt_scripts: Sequence[Path] = (),
        paths: AppPaths | None = None,
        sandbox_level: str = "",
        backend_factory: BackendFactory | None = None,
    ) -> None:
        self.repo = repo
        self.settings = settings
        self.backend = backend
        self.script = script
        self.attempt_scripts = tuple(attempt_scripts)
        """Script backend: one script per attempt (else every attempt replays `script`)."""
        self._sandbox_level = sandbox_level
        self._opened: dict[str, CoreSession] = {}
        self._load = backend_factory or default_backend
        """Makes a session's backend when none is loaded for all (the CLI shows the load)."""
        self.service = SessionService(
            paths or AppPaths.default(),
            settings,
            backend_factory=self._backend_for,
        )

    def _backend_for(
        self, record: SessionRecord, settings: Settings, replies_done: int = 0
    ) -> Backend:
        if self.backend is not None and not kind_of(record.backend).replays_script:
            return self.backend
        return self._load(record, settings, replies_done)

    def _hand_out(self, session: CoreSession) -> CoreSession:
        self._opened[session.record.id] = session
        return session

    def backend_info(self) -> BackendInfo:
        """The loaded model, the script being replayed, or the endpoint (no request made)."""
        if self.backend is not None:
            return self.backend.info
        if self.script is not None or kind_of(self.settings.engine.backend).replays_script:
            name = self.script.name if self.script is not None else Path(self.settings.model).name
            return BackendInfo("script", name, device="script")
        if kind_of(self.settings.engine.backend).remote_endpoint:
            endpoint = self._endpoint()
            if endpoint is None:
                return BackendInfo("openai", "no endpoint set", device="openai")
            return BackendInfo(
                "openai", self.settings.engine.openai_model or "?", device=endpoint.host
            )
        return BackendInfo(self.settings.engine.backend, self.settings.model)

    def _endpoint(self) -> OpenAIBackend | None:
        try:
            return OpenAIBackend(
                self.settings.engine.openai_endpoint,
                model=self.settings.engine.openai_model,
                retries=0,
                connect_timeout=5.0,
                read_timeout=10.0,
            )
        except EndpointError:
            return None

    def server_model(self) -> str:
        """The model the openai endpoint reports ("" for other backends); blocks, so call it
        from a worker."""
        if not kind_of(self.settings.engine.backend).remote_endpoint or self.script is not None:
            return ""
        endpoint = self._endpoint()
        if endpoint is None:
            return ""
        try:
            return endpoint.server_model()
        except EndpointError:
            return "? (the endpoint did not answer)"

    def sandbox_level(self) -> str:
        """The isolation level sessions get (probed once, lazily)."""
        if not self._sandbox_level:
            level, _ = detect(self.settings.sandbox.level)
            self._sandbox_level = str(level)
        return self._sandbox_level

    def _spec(self, task: str) -> SessionSpec:
        kind = self.backend.info.kind if self.backend is not None else None
        return session_spec(task, self.repo, self.settings, backend=kind, script=self.script)

    def new_session(self, task: str, operator: Operator) -> AgentSession:
        """Create the worktree and the session (blocking)."""
        return self.start(self._spec(task), operator)

    def start(self, spec: SessionSpec, operator: Operator) -> CoreSession:
        """Create the worktree and the session `spec` describes (blocking)."""
        active = self.service.start(spec)
        return self._hand_out(CoreSession(self.service, active.record, active, operator=operator))

    def open_session(
        self,
        session_id: str,
        operator: Operator,
        overrides: dict[str, Any] | None = None,
    ) -> CoreSession:
        """Reopen a stored session of any status but discarded; its next run continues it,
        with `overrides` (raised limits) in place of the session's own settings."""
        record = self.service.store.get(session_id)
        if record.status == "discarded":
            raise SessionClosedError(f"session {record.id} was discarded; start a new one")
        if shown_status(record) == "running" and record.pid != os.getpid():
            raise SessionBusyError(f"session {record.id} is running (pid {record.pid})")
        self.service.store.repair_transcript(record.id)
        return self._hand_out(
            CoreSession(self.service, record, overrides=overrides, operator=operator)
        )

    def add_message(self, session_id: str, text: str) -> None:
        """Queue the user's next message to a stored session, for its next run (blocking)."""
        self.service.add_message(session_id, text)

    def sessions(self) -> Sequence[SessionSummary]:
        """This repository's sessions, newest first, with their changed-file counts (blocking)."""
        root = str(self.repo.resolve())
        out: list[SessionSummary] = []
        for record in self.service.store.list():
            if record.repo != root:
                continue
            changed = 0
            if record.status != "discarded" and Path(record.worktree).is_dir():
                with contextlib.suppress(Exception):  # a broken worktree still lists, as 0
                    changed = len(worktree_diff(Path(record.worktree), record.base_commit).files)
            applied = apply_state(self.session_dir(record.id)).words()
            out.append(SessionSummary(record, changed, applied))
        out.sort(key=lambda s: s.record.created_at, reverse=True)
        return out

    def stored_sessions(self) -> tuple[list[SessionRecord], list[DamagedSession]]:
        """Every repository's sessions, and the session folders that cannot be read."""
        return self.service.store.list(), self.service.store.damaged()

    def applied(self, session_id: str) -> ApplyState:
        """How many times the session was applied and undone (never raises: a damaged record
        is part of the state)."""
        return apply_state(self.session_dir(session_id))

    def damaged_lines(self, session_id: str) -> Path:
        """Where `repair` sets a session's unreadable transcript lines aside."""
        return self.session_dir(session_id) / DAMAGED_LINES_FILE

    def session_dir(self, session_id: str) -> Path:
        """The folder holding a session's transcript, records and result files."""
        return self.service.store.session_dir(session_id)

    def repair(self, session_id: str) -> int:
        """Set a session's unreadable transcript lines aside; how many (0: nothing to repair)."""
        if not (self.session_dir(session_id) / TRANSCRIPT_FILE).is_file():
            raise SessionNotFoundError(
                f"no session {session_id!r} with a transcript (see `frogdesk sessions`)"
            )
        return self.service.store.repair_damaged_lines(session_id)

    def discard(self, session_id: str) -> SessionRecord:
        """Remove the session's worktree (blocking); refused while another process runs it."""
        record = self.service.store.get(session_id)
        if shown_status(record) == "running" and record.pid != os.getpid():
            raise SessionBusyError(
                f"session {record.id} is running (pid {record.pid}); stop it first"
            )
        self._opened.pop(record.id, None)
        return self.service.discard(record.id)

    def apply_all(self, session_id: str, show: Callable[[str], None]) -> str:
        """Show every hunk of a session through `show` and apply exactly those; the report."""
        return apply_all(self.service.store, session_id, show)

    def pull_missing(
        self,
        spec: str,
        *,
        token: str | None = None,
        retry: RetryPolicy = NO_RETRY,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> tuple[Path | None, list[str]]:
        """Pull the Hub quant `spec` names when it is not on disk (see core.chooser); with
        the user's Hub token (HF_TOKEN or the saved login) unless one is given."""
        return pull_missing(
            spec,
            self.settings,
            self.service.paths,
            token=token,
            retry=retry,
            progress=progress,
            cancel=cancel,
        )

    def review(self, session_id: str) -> SessionReview:
        """The session's diff and saved decisions, recorded as shown (a later apply checks it)."""
        return show_review(self.service.store, session_id)

    def decide(self, review: SessionReview, decisions: HunkDecisions) -> None:
        """Save the review's decisions in the session's folder."""
        save_decisions(review.session_dir, decisions)

    def apply(
        self, review: SessionReview, hunk_ids: Collection[str], decisions: HunkDecisions
    ) -> ApplyResult:
        """Apply the chosen hunks with the review's edits (all or nothing)."""
        return apply_reviewed(review, hunk_ids, decisions=decisions)

    def undo(self, session_id: str) -> UndoResult | None:
        """Undo the session's newest apply."""
        return undo_latest(self.service.store, session_id)

    def send_back(
        self, session_id: str, comment: str, operator: Operator
    ) -> tuple[SentBack, CoreSession]:
        """Revert rejected hunks and queue the feedback: what was reverted and the message the
        model gets, and the session, whose next run continues (blocking)."""
        sent, active = self.service.send_back(session_id, comment, operator)
        session = CoreSession(self.service, active.record, active, operator=operator)
        return sent, self._hand_out(session)

    def _active_llama(self, session_id: str) -> ActiveSession | None:
        opened = self._opened.get(session_id)
        active = opened.active if opened is not None else None
        local = active is not None and kind_of(active.record.backend).local_model
        return active if local else None

    def _stored(self, session_id: str | None) -> bool:
        """A session id this workbench holds no open session for (a stored session)."""
        return bool(session_id) and session_id not in self._opened

    def price_switch(
        self, model: str, session_id: str | None, context_tokens: int = 0
    ) -> SwitchPlan:
        """What moving to `model` costs: from the open session's own token count where it ran
        here, from a stored session's transcript (refused where it cannot move), else from
        `context_tokens` at the rate the session's transcript measured."""
        active = self._active_llama(session_id) if session_id else None
        if active is not None:
            return self.service.switch_model(active, model).plan
        if session_id and self._stored(session_id):
            return self.service.switch_model(session_id, model).plan
        rate = None
        if session_id:
            rate = measured_prefill_rate(self.service.store.read_transcript(session_id))
        return plan_switch(model, self.settings, context_tokens, rate, paths=self.service.paths)

    def switch_model(
        self,
        model: str,
        session_id: str | None,
        operator: Operator = NOBODY,
        *,
        cancel: threading.Event | None = None,
        progress: Callable[[float], None] | None = None,
        overrides: dict[str, Any] | None = None,
    ) -> Switched[CoreSession]:
        """Move to `model` for the session and every later one (see the port): an open
        session that ran keeps its backend's options and re-reads now; a stored one is
        reopened on it and re-read now; otherwise the model is loaded and recorded."""
        active = self._active_llama(session_id) if session_id else None
        if active is not None:
            switch = self.service.switch_model(active, model)
            switched = switch.perform(cancel)
            opened = self._opened[switched.record.id]
            opened.active = switched
            self.backend = switched.backend
            return Switched(switched.backend.info, opened, switch.evaluated)
        if session_id and self._stored(session_id):
            switch = self.service.switch_model(session_id, model)
            reopened = switch.perform(cancel, operator)
            session = CoreSession(self.service, reopened.record, reopened, overrides, operator)
            return Switched(reopened.backend.info, self._hand_out(session), switch.evaluated)
        given = Path(model).expanduser()
        # a file given is loaded and recorded as named (an imported link stays the link)
        path = given if given.is_file() else resolve_model_path(model, self.settings)
        backend = load_backend(self.settings, path, progress)
        previous, self.backend = self.backend, backend
        if previous is not None and previous is not backend:
            previous.close()
        held = self._opened.get(session_id) if session_id else None
        if session_id:
            self._record_model(session_id, str(path))
        return Switched(backend.info, held)

    def _record_model(self, session_id: str, model: str) -> None:
        store = self.service.store
        record = store.get(session_id)
        if not kind_of(record.backend).local_model:
            return
        record.model = model
        store.update(record)
        opened = self._opened.get(session_id)
        if opened is not None:
            opened.refresh(record)

    def watch_prefill(self, heard: Callable[[int, int], None] | None) -> bool:
        """Have the loaded model report each prompt prefill (see `engine.registry`)."""
        return self.backend is not None and watch_prefill(self.backend, heard)

    def detect_check(self) -> tuple[str, str]:
        """The repository's check command and why ("", "" when nothing was recognised)."""
        found = detect_check(self.repo)
        return (found.command, found.reason) if found is not None else ("", "")

    def run_attempts(
        self,
        task: str,
        n: int,
        check: str,
        operator: Operator,
        cancel: threading.Event,
        on_event: AttemptEvents,
    ) -> AttemptsOutcome:
        """N attempts through the core's attempts service (blocking)."""
        spec = self._spec(task)
        scripts = tuple(str(s) for s in self.attempt_scripts) or (
            (spec.script,) if spec.script else ()
        )
        attempts = AttemptsSpec(
            task,
            self.repo,
            n,
            backend=spec.backend,
            model=spec.model,
            endpoint=spec.endpoint,
            scripts=scripts,
            check=check,
            check_timeout=self.settings.loop.check_timeout,
        )
        return self.start_attempts(attempts, operator, cancel, on_event)

    def start_attempts(
        self,
        attempts: AttemptsSpec,
        operator: Operator,
        cancel: threading.Event,
        on_event: AttemptEvents,
        *,
        results_root: Path | None = None,
    ) -> AttemptsOutcome:
        """The attempts `attempts` describes (blocking): `operator` answers for every attempt
        (each asks with its own command) and hears the context each llama attempt gets and
        the session ids once they exist; result files under `results_root`."""
        n = attempts.n
        if kind_of(attempts.backend).shared_weights and n > 1:
            # says which N fits before anything starts
            fit = llama_fit(self.settings, attempts.model, n)
            operator.progress(fit.describe())
        # the loaded model's weights serve the attempts too: one model in memory
        with attempt_backends(n, operator.progress, loaded=loaded_model(self.backend)) as factory:
            return run_attempts(
                self.service,
                attempts,
                backend_factory=factory,
                operator=operator,
                cancel=cancel,
                on_event=on_event,
                results_root=results_root,
            )

    def attempt_patch(self, session_id: str) -> str:
        """An attempt's worktree diff (blocking)."""
        record = self.service.store.get(session_id)
        return worktree_diff(Path(record.worktree), record.base_commit).patch

    def choose_attempt(
        self, outcome: AttemptsOutcome, session_id: str, keep_others: bool
    ) -> tuple[SessionRecord, list[str]]:
        """The chosen attempt's record, the others discarded unless kept: the record and the
        ids discarded (blocking)."""
        gone = choose_attempt(self.service, outcome, session_id, keep_others=keep_others)
        return self.service.store.get(session_id), gone
