"""What a new session starts with: its record and its opening messages (mended on resume)."""

from __future__ import annotations

from pathlib import Path

from frogdesk.config import Settings
from frogdesk.engine.chat import Message
from frogdesk.engine.kinds import kind_of
from frogdesk.leaf.schemas import system_prompt
from frogdesk.sessions.errors import SessionDamagedError
from frogdesk.sessions.record import SessionRecord, SessionSpec
from frogdesk.sessions.store import TRANSCRIPT_FILE, DamagedSession, SessionStore, Transcript
from frogdesk.worktree.checkout import Worktree


def new_record(spec: SessionSpec, worktree: Worktree, settings: Settings) -> SessionRecord:
    """The record of a session just made in `worktree` (its id is the worktree's name)."""
    kind = kind_of(spec.backend)
    model = spec.script if kind.replays_script else spec.model or settings.model
    if kind.local_model and model.endswith(".gguf") and Path(model).expanduser().is_file():
        model = str(Path(model).expanduser().resolve())  # so a resume from elsewhere finds it
    settings_data = settings.options()
    if spec.endpoint:
        settings_data["openai_endpoint"] = spec.endpoint
    return SessionRecord(
        id=worktree.name,
        repo=str(worktree.repo_root),
        worktree=str(worktree.path),
        base_commit=worktree.base_commit,
        task=spec.task,
        model=str(Path(model).resolve()) if kind.replays_script else model,
        backend=spec.backend,
        settings=settings_data,
        git_dir=str(worktree.git_dir),
        git_common_dir=str(worktree.common_dir),
    )


def opening_messages(worktree: Path, settings: Settings, task: str) -> list[Message]:
    """The messages every session starts with: Leaf's system prompt, then the task."""
    prompt = system_prompt(worktree, project_instructions=settings.loop.project_instructions)
    return [Message("system", prompt), Message("user", task)]


def with_opening(store: SessionStore, record: SessionRecord, settings: Settings) -> Transcript:
    """The session's transcript, its opening messages written first where they are missing.

    An older FrogDesk killed while starting a session could store the record before the
    opening (or before its second line); no step has run then, so the opening is written
    now, as the start would have. Steps without their opening cannot be mended: damaged.
    """
    transcript = store.read_transcript(record.id)
    opening = opening_messages(Path(record.worktree), settings, record.task)
    wanted = [m.role for m in opening]
    have = [m.role for m in transcript.messages]
    if have[: len(wanted)] == wanted:
        return transcript
    if transcript.steps or have != wanted[: len(have)]:
        raise SessionDamagedError(
            DamagedSession(
                record.id,
                store.session_dir(record.id) / TRANSCRIPT_FILE,
                "its opening messages (system prompt, task) are missing",
                f"discard it (`frogdesk sessions discard {record.id}`) and start the task again",
            )
        )
    for message in opening[len(have) :]:
        store.append_message(record.id, message)
    return store.read_transcript(record.id)
