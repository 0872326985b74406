"""The Workbench the TUI uses in real life: the core's SessionService on one loaded backend."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from frogdesk.attempts.record import AttemptsOutcome
from frogdesk.config import Settings
from frogdesk.engine.types import Backend, BackendInfo, Message
from frogdesk.leaf.events import LoopEvent
from frogdesk.paths import AppPaths
from frogdesk.sessions.parts import default_backend
from frogdesk.sessions.patch import worktree_diff
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.runner import ActiveSession, SessionService, SessionSpec
from frogdesk.tui.ports import ApproveCommand, AttemptEvents, SessionSummary

if TYPE_CHECKING:
    from frogdesk.engine.openai_backend import OpenAIBackend


class CoreSession:
    """An AgentSession over the core: the first run continues the opening, later ones resume."""

    def __init__(self, service: SessionService, active: ActiveSession, *, fresh: bool) -> None:
        self.service = service
        self.active = active
        self._fresh = fresh

    @property
    def record(self) -> SessionRecord:
        """The stored session record."""
        return self.active.record

    def run(self, prompt: str, cancel: threading.Event, emit: Callable[[LoopEvent], None]) -> None:
        """Run the loop; a prompt after the first run becomes the model's next user message."""
        if not self._fresh:
            store = self.service.store
            if prompt:
                store.repair_transcript(self.record.id)
                before = store.read_transcript(self.record.id).next_step
                store.append_followup(self.record.id, Message("user", prompt), before)
            self.active = self.service.open(self.record.id)
        self._fresh = False
        self.service.run(self.active, cancel=cancel, on_event=emit)

    def changed_files(self) -> int:
        """Files of the worktree that differ from the session's base snapshot."""
        return len(worktree_diff(self.active.worktree.path, self.active.worktree.base_commit).files)


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
    ) -> None:
        self.repo = repo
        self.settings = settings
        self.backend = backend
        self.script = script
        self.attempt_scripts = tuple(attempt_scripts)
        """Script backend: one script per attempt (else every attempt replays `script`)."""
        self._approve: ApproveCommand | None = None
        self._sandbox_level = sandbox_level
        self.service = SessionService(
            paths or AppPaths.default(),
            settings,
            backend_factory=self._backend_for,
            approve=self._ask,
        )

    def _backend_for(
        self, record: SessionRecord, settings: Settings, replies_done: int = 0
    ) -> Backend:
        if self.backend is not None and record.backend != "script":
            return self.backend
        return default_backend(record, settings, replies_done)

    def _ask(self, command: str) -> bool:
        return self._approve(command) if self._approve is not None else False

    def backend_info(self) -> BackendInfo:
        """The loaded model, the script being replayed, or the endpoint (no request made)."""
        if self.backend is not None:
            return self.backend.info
        if self.script is not None or self.settings.backend == "script":
            name = self.script.name if self.script is not None else Path(self.settings.model).name
            return BackendInfo("script", name, device="script")
        if self.settings.backend == "openai":
            endpoint = self._endpoint()
            if endpoint is None:
                return BackendInfo("openai", "no endpoint set", device="openai")
            return BackendInfo("openai", self.settings.openai_model or "?", device=endpoint.host)
        return BackendInfo(self.settings.backend, self.settings.model)

    def _endpoint(self) -> OpenAIBackend | None:
        from frogdesk.engine.openai_backend import EndpointError, OpenAIBackend

        try:
            return OpenAIBackend(
                self.settings.openai_endpoint,
                model=self.settings.openai_model,
                retries=0,
                connect_timeout=5.0,
                read_timeout=10.0,
            )
        except EndpointError:
            return None

    def server_model(self) -> str:
        """The model the openai endpoint reports ("" for other backends); blocks, so call it
        from a worker."""
        from frogdesk.engine.openai_backend import EndpointError

        if self.settings.backend != "openai" or self.script is not None:
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
            from frogdesk.sandbox.levels import detect

            level, _ = detect(self.settings.sandbox)
            self._sandbox_level = str(level)
        return self._sandbox_level

    def _spec(self, task: str) -> SessionSpec:
        if self.backend is None and self.script is not None:
            return SessionSpec(task, self.repo, backend="script", script=str(self.script))
        info = self.backend.info if self.backend is not None else None
        kind = info.kind if info is not None else self.settings.backend
        return SessionSpec(task, self.repo, backend=kind, model=self.settings.model)

    def new_session(self, task: str, approve: ApproveCommand) -> CoreSession:
        """Create the worktree and the session (blocking)."""
        self._approve = approve
        active = self.service.start(self._spec(task))
        return CoreSession(self.service, active, fresh=True)

    def resume(self, session_id: str, approve: ApproveCommand) -> CoreSession:
        """Reopen a stored session; its next run continues the transcript (blocking)."""
        self._approve = approve
        active = self.service.open(session_id)
        return CoreSession(self.service, active, fresh=False)

    def sessions(self) -> Sequence[SessionSummary]:
        """This repository's sessions, newest first, with their changed-file counts (blocking)."""
        root = str(self.repo.resolve())
        out: list[SessionSummary] = []
        for record in self.service.store.list():
            if record.repo != root:
                continue
            changed = 0
            if record.status != "discarded" and Path(record.worktree).is_dir():
                try:
                    changed = len(worktree_diff(Path(record.worktree), record.base_commit).files)
                except Exception:
                    changed = 0
            out.append(SessionSummary(record, changed))
        out.sort(key=lambda s: s.record.created_at, reverse=True)
        return out

    def discard(self, session_id: str) -> None:
        """Remove the session's worktree (blocking)."""
        self.service.discard(session_id)

    def session_dir(self, session_id: str) -> Path:
        """The folder of a session's files."""
        return self.service.store.session_dir(session_id)

    def send_back(self, session_id: str, comment: str, approve: ApproveCommand) -> CoreSession:
        """Revert rejected hunks, queue the feedback; the returned session continues (blocking)."""
        self._approve = approve
        _, active = self.service.send_back(session_id, comment)
        return CoreSession(self.service, active, fresh=True)

    def switch_backend(self, backend: Backend) -> Backend | None:
        """Use another loaded model from the next run on; returns the previous one to close."""
        previous, self.backend = self.backend, backend
        return previous

    def detect_check(self) -> tuple[str, str]:
        """The repository's check command and why ("", "" when nothing was recognised)."""
        from frogdesk.attempts.check import detect_check

        found = detect_check(self.repo)
        return (found.command, found.reason) if found is not None else ("", "")

    def run_attempts(
        self,
        task: str,
        n: int,
        check: str,
        approve: ApproveCommand,
        cancel: threading.Event,
        on_event: AttemptEvents,
    ) -> AttemptsOutcome:
        """N attempts through the core's attempts service (blocking)."""
        from frogdesk.attempts.backends import attempt_backends
        from frogdesk.attempts.service import AttemptsSpec, run_attempts

        self._approve = approve
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
            check_timeout=self.settings.check_timeout,
        )
        return run_attempts(
            self.service,
            attempts,
            backend_factory=attempt_backends(self.backend),
            cancel=cancel,
            on_event=on_event,
        )

    def attempt_patch(self, session_id: str) -> str:
        """An attempt's worktree diff (blocking)."""
        record = self.service.store.get(session_id)
        return worktree_diff(Path(record.worktree), record.base_commit).patch

    def choose_attempt(
        self, outcome: AttemptsOutcome, session_id: str, keep_others: bool
    ) -> SessionRecord:
        """The chosen attempt's record; the others discarded unless kept (blocking)."""
        from frogdesk.attempts.service import choose_attempt

        choose_attempt(self.service, outcome, session_id, keep_others=keep_others)
        return self.service.store.get(session_id)
