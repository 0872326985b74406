"""The files the user changed while a session ran, kept in the session folder for the review."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from frogdesk.durable import atomic_write_text

USER_CHANGES_FILE = "user_changes.json"


def load_user_changes(session_dir: Path) -> set[str]:
    """Repo-relative paths the user changed during any run of the session (none if unknown)."""
    try:
        data = json.loads((session_dir / USER_CHANGES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    paths = data.get("paths", []) if isinstance(data, dict) else []
    return {str(p) for p in paths if isinstance(p, str)}


def record_user_changes(session_dir: Path, paths: Iterable[str]) -> set[str]:
    """Merge `paths` into what is recorded, atomically; returns the whole set."""
    new = set(paths)
    known = load_user_changes(session_dir)
    if new <= known:
        return known
    merged = known | new
    session_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"paths": sorted(merged)}, indent=2) + "\n"  # ASCII: any name round-trips
    atomic_write_text(session_dir / USER_CHANGES_FILE, text)
    return merged
