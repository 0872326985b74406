"""The session record: what a session is, stored as session.json in its own folder."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from frogdesk.typedjson import build

SessionStatus = Literal["created", "running", "finished", "interrupted", "discarded"]


@dataclass
class SessionRecord:
    """One agent session: its repository, model, worktree, base snapshot and state."""

    id: str
    repo: str
    """Absolute path of the user's repository root."""
    worktree: str
    """Absolute path of the session's git worktree."""
    base_commit: str
    """The snapshot commit of the user's working tree the worktree was created from."""
    task: str
    model: str
    """Model spec (or script path / endpoint) the session runs on."""
    backend: str = "llama"
    dialect: str = ""
    """The tool-call dialect the model spoke in the latest run (`hermes_json`, ...; "" unknown)."""
    created_at: float = 0.0
    updated_at: float = 0.0
    status: SessionStatus = "created"
    exit_reason: str = ""
    n_steps: int = 0
    recoveries: dict[str, int] = field(default_factory=dict)
    """Tool-call drifts the parser recovered over the session's steps, by kind."""
    drafts: dict[str, dict[str, int]] = field(default_factory=dict)
    """Drafted tokens the model verified and accepted over the session's steps, by drafter
    (`{"ngram": {"drafted": 40, "accepted": 31}}`; speculative decoding, llama backend)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """The Settings values the session runs with (budgets, sampling, sandbox)."""
    sandbox_level: str = ""
    pid: int = 0
    """Process id of the run in progress (0 when none); a dead pid means it was interrupted."""
    git_dir: str = ""
    """The worktree's admin folder `<common dir>/worktrees/<id>`, recorded at creation."""
    git_common_dir: str = ""
    """The user's git dir, recorded at creation; FrogDesk's git never reads it from the worktree."""

    def to_json(self) -> str:
        """Serialize as pretty JSON."""
        return json.dumps(asdict(self), indent=2)  # ASCII: any path or task round-trips

    @classmethod
    def from_json(cls, text: str) -> SessionRecord:
        """Parse a record, ignoring keys a newer version may have added; a value of the wrong
        type raises RecordTypeError (a ValueError) naming its field."""
        return build(cls, json.loads(text))

    def session_dir(self, sessions_root: Path) -> Path:
        """The folder holding this session's files."""
        return sessions_root / self.id


@dataclass(frozen=True)
class SessionSpec:
    """What the user asked for: a task on a repository, with a backend and its model source."""

    task: str
    repo: Path
    backend: str = "llama"
    """`llama`, `openai` or `script`."""
    model: str = ""
    """Model spec or .gguf path (llama), model name (openai)."""
    endpoint: str = ""
    script: str = ""
