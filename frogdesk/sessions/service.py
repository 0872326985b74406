"""Running a session: worktree, backend, shell, the Leaf loop and its transcript, start or resume.

The CLI (`frogdesk run`, `frogdesk sessions resume`) and the TUI both drive sessions
through this module, so the agent logic lives here once.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frogdesk.config import OPTIONS, Settings
from frogdesk.durable import sweep_tree
from frogdesk.engine.chat import Message
from frogdesk.engine.kinds import kind_of
from frogdesk.errors import DiskFullError
from frogdesk.leaf.approval import CommandGate, approval_mode
from frogdesk.leaf.events import LoopEvent, Notice
from frogdesk.leaf.loop import LoopConfig, run_loop
from frogdesk.leaf.records import LoopResult, StepRecord, add_drafts
from frogdesk.leaf.runner import ToolRunner
from frogdesk.leaf.schemas import tool_schemas
from frogdesk.leaf.textfile import WRITES_DIR
from frogdesk.leaf.trajectory import TrajectoryExtras, build_trajectory, write_results
from frogdesk.paths import AppPaths
from frogdesk.sessions.active import ActiveSession, shown_status
from frogdesk.sessions.errors import (
    SessionBusyError,
    SessionClosedError,
    StoreWriteError,
    TaskTextError,
)
from frogdesk.sessions.factories import BackendFactory, ShellFactory
from frogdesk.sessions.move import ModelSwitch, price_switch
from frogdesk.sessions.openings import load_opening, log_line, save_opening
from frogdesk.sessions.operator import NOBODY, Operator
from frogdesk.sessions.parts import default_backend, default_shell, prune_worktrees
from frogdesk.sessions.patch import worktree_diff
from frogdesk.sessions.record import SessionRecord, SessionSpec
from frogdesk.sessions.saved_states import discard_state, load_state, save_state
from frogdesk.sessions.sendback import SentBack, send_back
from frogdesk.sessions.starting import new_record, opening_messages, with_opening
from frogdesk.sessions.store import SessionStore, Transcript, is_full_disk, new_session_id
from frogdesk.sessions.watch import UserChangeLog
from frogdesk.worktree.checkout import (
    PRIVATE_SUFFIX,
    Worktree,
    create_worktree,
    discard_worktree,
    find_repo_root,
    load_worktree,
)
from frogdesk.worktree.errors import TamperedWorktree


@dataclass(frozen=True)
class SessionOutcome:
    """A finished run: the loop's result, the patch, the changed files and the trajectory."""

    record: SessionRecord
    result: LoopResult
    patch: str
    files_changed: list[str]
    trajectory: dict[str, Any] = field(default_factory=dict)

    def write_results(self, output_dir: Path) -> tuple[Path, Path]:
        """Write Leaf's result files of this run (trajectory and patch) into `output_dir`."""
        return write_results(output_dir, self.trajectory)


UNASKED_WARNING = (
    "No sandbox and bash_approval = never: Bash commands run with your own permissions "
    "without asking you."
)


def _settings_from(record: SessionRecord, fallback: Settings) -> Settings:
    values = {k: v for k, v in record.settings.items() if k in OPTIONS}
    return fallback.replaced(**values)


class SessionService:
    """Creates, resumes, runs and discards sessions in one AppPaths home."""

    def __init__(
        self,
        paths: AppPaths,
        settings: Settings,
        *,
        backend_factory: BackendFactory = default_backend,
        shell_factory: ShellFactory | None = None,
        prune: bool = True,
    ) -> None:
        self.paths = paths
        self.settings = settings
        self.store = SessionStore(paths.sessions_dir)
        self.backend_factory = backend_factory
        self.shell_factory: ShellFactory = shell_factory or default_shell
        self.pruned: list[str] = self._clear_leftovers() if prune else []
        """Names of the stale or orphaned worktrees removed when the service started."""

    def _clear_leftovers(self) -> list[str]:
        """Clear what killed runs left: starts never finished, stale worktrees, temp files."""
        pruned = prune_worktrees(self.paths.worktrees_dir, self.paths.sessions_dir)
        self.store.sweep_all()
        sweep_tree(self.paths.worktrees_dir, 0)
        # A write killed midway leaves its temp in the session's private writes folder,
        # host-side only (the sandbox never sees it), which a later write of that session
        # sweeps; a session that never writes again would keep it until discarded.
        for private in self.paths.worktrees_dir.glob("*" + PRIVATE_SUFFIX):
            writes = private / WRITES_DIR
            if not private.is_symlink() and writes.is_dir() and not writes.is_symlink():
                sweep_tree(writes, 0)
        return pruned

    def start(self, spec: SessionSpec) -> ActiveSession:
        """Make the session (worktree, record, opening messages), then its backend and shell.

        The session appears whole or not at all (see `_create`). A task that cannot be
        stored (not UTF-8), or a folder that is no repository, is refused before anything
        is made; any failure once the session exists removes its worktree again and marks
        the record discarded.
        """
        check_task_text(spec.task)
        find_repo_root(spec.repo)
        record, worktree, opening = self._create(spec, new_session_id())
        try:
            shell = self.shell_factory(self.settings.sandbox.level, worktree, self.settings)
            record.sandbox_level = shell.level
            backend = self.backend_factory(record, self.settings)
            try:
                self.store.update(record)
            except BaseException:
                backend.close()
                raise
        except BaseException:
            self._abandon(record, worktree)
            raise
        return ActiveSession(
            record, worktree, backend, shell, self.settings, tool_schemas(), Transcript(opening)
        )

    def _create(
        self, spec: SessionSpec, session_id: str
    ) -> tuple[SessionRecord, Worktree, list[Message]]:
        """The worktree and the stored session with its opening messages, as one step.

        Everything is made inside a hidden, locked session folder that is renamed into place
        last: a kill before that leaves only what the next FrogDesk clears (the folder, the
        worktree and its registration in the user's repository), never a session without
        its worktree or its task.
        """
        staged = self.store.stage(session_id)
        worktree: Worktree | None = None
        try:
            worktree = create_worktree(spec.repo, self.paths.worktrees_dir, session_id)
            record = new_record(spec, worktree, self.settings)
            opening = opening_messages(worktree.path, self.settings, spec.task)
            self.store.create(record, opening, staged)
        except BaseException:
            if not staged.published:
                if worktree is not None:
                    with contextlib.suppress(Exception):
                        discard_worktree(worktree)
                staged.drop()
            raise
        return record, worktree, opening

    def _abandon(self, record: SessionRecord, worktree: Worktree) -> None:
        """Undo a start that failed: remove the worktree, then the session (it never ran, so
        it leaves no row in the list).

        Each part is tried on its own: when the worktree cannot be removed, the record stays,
        marked discarded, so a second failure here (a full disk) cannot leave a worktree
        that no listed session owns.
        """
        removed = False
        with contextlib.suppress(Exception):
            discard_worktree(worktree)
            removed = True
        if removed:
            with contextlib.suppress(OSError):
                self.store.forget(record.id)
                return
        record.status = "discarded"
        if self.store.session_dir(record.id).is_dir():
            with contextlib.suppress(Exception):
                self.store.update(record)

    def add_message(self, session_id: str, text: str) -> None:
        """Queue the user's message for the model's next step: how a finished session goes on.

        The message is appended to the transcript durably, so the next `open` reads it as a
        new user turn after everything before it (the prefix is kept).
        """
        if not text.strip():
            raise SessionClosedError("an empty message continues nothing: write what to do next")
        record = self.store.get(session_id)
        if record.status == "discarded":
            raise SessionClosedError(f"session {record.id} was discarded; start a new one")
        self.store.repair_transcript(record.id)
        transcript = self.store.read_transcript(record.id)
        self.store.append_followup(record.id, Message("user", text), transcript.next_step)

    def open(
        self,
        session_id: str,
        *,
        record: SessionRecord | None = None,
        overrides: dict[str, Any] | None = None,
        operator: Operator = NOBODY,
    ) -> ActiveSession:
        """Reopen a stored session to resume it from its transcript.

        `record` replaces the stored record (a model switch not yet written); `overrides`
        replace some of the session's settings (raised limits) and are recorded with it;
        `operator` is told whether the saved engine state was loaded, or why it was not.
        """
        record = record or self.store.get(session_id)
        record.settings.update(overrides or {})
        if record.status == "discarded":
            raise SessionClosedError(f"session {record.id} was discarded; start a new one")
        self.store.repair_transcript(record.id)
        settings = _settings_from(record, self.settings)
        transcript = with_opening(self.store, record, settings)
        if transcript.ended_with_answer():
            raise SessionClosedError(
                f"session {record.id} already ended with a final answer: "
                "write a message to continue it"
            )
        worktree = load_worktree(Path(record.worktree).parent, Path(record.worktree).name)
        recorded = (record.git_dir, record.git_common_dir)
        if recorded != ("", "") and recorded != (str(worktree.git_dir), str(worktree.common_dir)):
            raise TamperedWorktree(worktree.path, "its git dirs differ from the session record")
        shell = self.shell_factory(settings.sandbox.level, worktree, settings)
        backend = self.backend_factory(record, settings, len(transcript.steps))
        tools = tool_schemas()
        said = load_state(
            backend, self.store.session_dir(record.id), self.paths.data_dir,
            self.settings.engine.saved_state_max_bytes, transcript.conversation(), tools,
            enable_thinking=settings.loop.enable_thinking,
        )  # fmt: skip
        if said:
            operator.notice(Notice(said))
        return ActiveSession(record, worktree, backend, shell, settings, tools, transcript)

    def run(
        self,
        active: ActiveSession,
        *,
        operator: Operator = NOBODY,
        cancel: threading.Event | None = None,
        on_event: Callable[[LoopEvent], None] | None = None,
    ) -> SessionOutcome:
        """Run (or continue) the loop; every finished step is on disk before the next starts.

        `operator` is asked before each Bash command the `bash_approval` setting holds back
        (`gate`); the default, nobody, refuses them.

        A full disk (or quota, or read-only file system) while the session writes its
        files stops the run with DiskFullError; the transcript keeps its last whole step
        and the worktree stays, so the session resumes once there is space.
        """
        gate = self.gate(active, operator)
        if gate.mode == "never" and active.shell.level == "none":
            operator.notice(Notice(UNASKED_WARNING, "warning"))
        try:
            return self._run(active, gate, cancel=cancel, on_event=on_event, operator=operator)
        except OSError as exc:
            if not is_full_disk(exc):
                raise
            record = active.record
            record.status = "interrupted"
            record.pid = 0
            with contextlib.suppress(OSError):
                self.store.update(record)
            if isinstance(exc, StoreWriteError):
                failed = exc
            else:
                where = exc.filename or self.store.session_dir(record.id)
                failed = StoreWriteError(Path(os.fsdecode(where)), exc)
            raise DiskFullError(
                f"{failed}; session {record.id} is kept as of its last complete step: "
                f"free some space, then run `frogdesk sessions resume {record.id}`",
                session_id=record.id,
            ) from exc

    def keep_state(self, active: ActiveSession, operator: Operator = NOBODY) -> None:
        """Save the session's engine state beside it, so a reopen need not read it again;
        `operator` is told when it could not be saved."""
        said = save_state(
            active.backend,
            self.store.session_dir(active.record.id),
            self.paths.data_dir,
            self.settings.engine.saved_state_max_bytes,
        )
        if said:
            operator.notice(Notice(said, "warning"))
        log_line(
            save_opening(
                active.backend,
                self.paths.openings_dir,
                self.paths.data_dir,
                self.settings.engine.saved_state_max_bytes,
            )
        )

    def gate(self, active: ActiveSession, operator: Operator = NOBODY) -> CommandGate:
        """The approval gate of the session's Bash commands (and attempts' checks).

        From this service's settings, not the session's record: approval is how the user
        works now (`run --approve`, the TUI's setting), and old records hold a boolean.
        """
        mode = approval_mode(self.settings.sandbox.bash_approval, active.shell.level)
        return CommandGate(mode, tuple(self.settings.sandbox.bash_allowlist), operator.approve)

    def _run(
        self,
        active: ActiveSession,
        gate: CommandGate,
        *,
        cancel: threading.Event | None,
        on_event: Callable[[LoopEvent], None] | None,
        operator: Operator,
    ) -> SessionOutcome:
        record = active.record
        record.status = "running"
        record.pid = os.getpid()
        record.dialect = active.backend.info.dialect or record.dialect
        self.store.update(record)
        messages = active.transcript.conversation()
        watch = UserChangeLog(
            Path(record.repo),
            self.store.session_dir(record.id),
            active.settings.sandbox.visible_ignored,
        )
        problem = watch.start()
        if problem and on_event is not None:
            on_event(Notice(problem, "warning"))

        def persist(step: StepRecord) -> None:
            self.store.append_step(record.id, step, step.raw_text, step.raw_tokens)
            record.n_steps = step.step + 1
            for kind in step.recoveries:
                record.recoveries[kind] = record.recoveries.get(kind, 0) + 1
            add_drafts(record.drafts, step.usage)
            self.store.update(record)
            watch.save()

        runner = ToolRunner(active.worktree.path, active.shell.shell, gate)
        log_line(
            load_opening(
                active.backend,
                self.paths.openings_dir,
                self.paths.data_dir,
                self.settings.engine.saved_state_max_bytes,
                messages,
                active.tools,
                enable_thinking=active.settings.loop.enable_thinking,
            )
        )
        try:
            result = run_loop(
                active.backend,
                active.tools,
                runner,
                LoopConfig.from_settings(active.settings.loop),
                messages,
                cancel=cancel,
                on_event=on_event,
                on_step=persist,
                prior_steps=active.transcript.steps,
            )
        finally:
            watch.stop()
            self.keep_state(active, operator)
        active.transcript = self.store.read_transcript(record.id)  # a later run goes on from here
        self.store.append_end(
            record.id,
            {"exit_reason": result.exit_reason, "error": result.error, "n_steps": result.n_steps},
        )
        record.status = "interrupted" if result.exit_reason == "cancelled" else "finished"
        record.exit_reason = result.exit_reason
        record.n_steps = result.n_steps
        record.pid = 0
        self.store.update(record)  # first: a worktree whose diff is refused still ends its run
        diff = worktree_diff(active.worktree.path, active.worktree.base_commit)
        info = active.backend.info
        trajectory = build_trajectory(
            result,
            trajectory_id=record.id,
            instance_id=record.repo,
            seed=0,
            tools=active.tools,
            output_patch=diff.patch,
            extras=TrajectoryExtras(
                session_id=record.id,
                model_file=record.model if kind_of(record.backend).replays_script else info.model,
                quant=info.quant,
                backend=info.kind,
                sandbox_level=active.shell.level,
                base_commit=record.base_commit,
                extra={"sampling_seed": active.settings.loop.seed, "task": record.task},
            ),
        )
        return SessionOutcome(record, result, diff.patch, diff.files, trajectory)

    def send_back(
        self, session_id: str, comment: str = "", operator: Operator = NOBODY
    ) -> tuple[SentBack, ActiveSession]:
        """Send a reviewed session back to the model; `run()` the returned session to continue.

        The worktree is reset to the reviewed state and the feedback message (which changes
        were declined or edited, and `comment`) becomes the model's next user message.
        """
        record = self.store.get(session_id)
        if record.status == "discarded":
            raise SessionClosedError(f"session {record.id} was discarded; start a new one")
        if shown_status(record) == "running":
            raise SessionBusyError(
                f"session {record.id} is running (pid {record.pid}); stop it first"
            )
        sent = send_back(self.store, record.id, comment)
        return sent, self.open(record.id, operator=operator)

    def switch_model(self, session: str | ActiveSession, spec: str) -> ModelSwitch:
        """Price moving a session to another quant or model; announce, then `perform()` it.

        `session` is a stored session's id or a session open in this process (whose
        llama backend's options the new model reuses).
        """
        return price_switch(self, session, spec)

    def discard(self, session_id: str) -> SessionRecord:
        """Remove the session's worktree and mark it discarded (its transcript stays)."""
        record = self.store.get(session_id)
        worktree_path = Path(record.worktree)
        try:
            # unchecked: a tampered worktree must be removable too (by hand, not by git)
            worktree = load_worktree(worktree_path.parent, worktree_path.name, check=False)
        except Exception:
            worktree = None
        if worktree is not None:
            discard_worktree(worktree)
        record.status = "discarded"
        record.pid = 0
        self.store.update(record)
        discard_state(self.store.session_dir(record.id))
        return record


def check_task_text(text: str) -> None:
    """Refuse a task that is not valid Unicode text, naming the bad bytes.

    On Linux, argv bytes that are not UTF-8 arrive as surrogate escapes (U+DC80..U+DCFF);
    they cannot be written to the transcript nor shown to the model faithfully.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.end]
        shown = " ".join(
            f"0x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else f"U+{ord(c):04X}"
            for c in bad[:8]
        )
        raise TaskTextError(
            f"the task text is not valid UTF-8 ({shown} at character {exc.start}); "
            "nothing was created: give the task in UTF-8 (check the terminal's locale)"
        ) from None
