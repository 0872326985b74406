"""A session open for running (its record, worktree, backend, shell, transcript) and its status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from frogdesk.config import Settings
from frogdesk.durable import pid_alive
from frogdesk.engine.chat import Backend, ToolSchema
from frogdesk.sessions.factories import ShellPick
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import Transcript
from frogdesk.worktree.checkout import Worktree


@dataclass
class ActiveSession:
    """A session ready to run: its record, worktree, backend, shell and the transcript so far."""

    record: SessionRecord
    worktree: Worktree
    backend: Backend
    shell: ShellPick
    settings: Settings
    tools: list[ToolSchema]
    transcript: Transcript

    @property
    def finished(self) -> bool:
        """True when the transcript already ends with a final answer."""
        return self.transcript.ended_with_answer()

    def close(self) -> None:
        """Free the backend."""
        self.backend.close()

    def override(self, values: dict[str, Any]) -> None:
        """Run on with other settings (a resume with raised limits): they replace the
        session's own and are recorded in its record, written when the run starts."""
        if not values:
            return
        self.settings = self.settings.replaced(**values)
        self.record.settings.update(values)


def shown_status(record: SessionRecord) -> str:
    """The status to show: a `running` session whose process is gone was interrupted."""
    if record.status == "running" and not pid_alive(record.pid):
        return "interrupted"
    return record.status
