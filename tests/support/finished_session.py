"""A finished scripted session on the calc repository: add() fixed and a note written, two
files changed, for the review and sessions-list tests."""

from __future__ import annotations

from pathlib import Path

from frogdesk.config import Settings
from frogdesk.paths import AppPaths
from frogdesk.sessions.record import SessionRecord, SessionSpec
from frogdesk.sessions.service import SessionService
from tests.support.scripted import call, make_repo, write_script

FIX_AND_NOTE = [
    "Fix.\n</think>\n\n"
    + call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"),
    "Note.\n</think>\n\n" + call("Write", file_path="CHANGES.md", content="add() fixed\n"),
    "Done.\n</think>\n\nFixed.",
]


def finished_session(tmp_path: Path) -> tuple[SessionService, SessionRecord]:
    """The service and record of a session that ran FIX_AND_NOTE to its final answer."""
    repo = make_repo(tmp_path)
    service = SessionService(AppPaths.default(), Settings.of(backend="script"))
    script = write_script(tmp_path / "s.jsonl", FIX_AND_NOTE)
    active = service.start(SessionSpec("fix add", repo, backend="script", script=str(script)))
    service.run(active)
    return service, active.record
