"""A session's review decisions on disk: `decisions.json` in the session folder, written atomically."""

from __future__ import annotations

from pathlib import Path

from frogdesk.durable import atomic_write_text
from frogdesk.errors import FrogDeskError
from frogdesk.review.decisions import HunkDecisions

DECISIONS_FILE = "decisions.json"


def load_decisions(session_dir: Path) -> HunkDecisions:
    """The session's decisions, or none yet."""
    path = session_dir / DECISIONS_FILE
    if not path.is_file():
        return HunkDecisions(home=session_dir)
    try:
        decisions = HunkDecisions.from_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:  # bad JSON and undecodable bytes included
        raise FrogDeskError(
            f"{path} is damaged ({exc}); move it aside to review the session from no decisions"
        ) from None
    decisions.home = session_dir
    return decisions


def save_decisions(session_dir: Path, decisions: HunkDecisions) -> None:
    """Write the decisions atomically."""
    session_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(session_dir / DECISIONS_FILE, decisions.to_json())
