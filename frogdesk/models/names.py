"""Names from outside (Hub listings, GGUF metadata, endpoints) checked before they become paths."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from frogdesk.inert import has_controls, inert_line
from frogdesk.models.errors import UnsafeName

_HEX40 = re.compile(r"[0-9a-f]{40}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


def name_problem(name: str) -> str | None:
    """Why this relative path may not become a file name, or None when it may."""
    if not name:
        return "it is empty"
    if "\0" in name:
        return "it contains a NUL byte"
    if has_controls(name):
        return "it contains control characters"
    if "\\" in name:
        return "it contains a backslash"
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return "it is an absolute path"
    parts = name.split("/")
    if any(part == ".." for part in parts):
        return "it contains '..'"
    if any(part in ("", ".") for part in parts):
        return "it has an empty or '.' component"
    return None


def safe_relative(name: str, where: str) -> PurePosixPath:
    """The name as a relative path, or UnsafeName saying which rule it breaks (one line)."""
    problem = name_problem(name)
    if problem is not None:
        raise UnsafeName(f"refused the name {inert_line(repr(name))} from {where}: {problem}")
    return PurePosixPath(name)


def inside(base: Path, name: str, where: str) -> Path:
    """base/name, refused unless it is a safe relative name that resolves inside base."""
    target = base / safe_relative(name, where)
    root = base.resolve()
    # the folders on the way must stay inside; the name itself may be a link (a snapshot's is)
    if not (target.parent.resolve() / target.name).is_relative_to(root):
        raise UnsafeName(
            f"refused the name {inert_line(repr(name))} from {where}: it resolves outside {root}"
        )
    return target


def check_commit(commit: str, where: str) -> str:
    """A 40-hex commit id, as the Hub gives one, or UnsafeName."""
    if not _HEX40.fullmatch(commit):
        raise UnsafeName(f"refused the commit id {inert_line(repr(commit))} from {where}")
    return commit


def check_object_id(oid: str, where: str) -> str:
    """A sha256 (64 hex) or git blob id (40 hex), as blob file names are made of, or UnsafeName."""
    if not (_HEX64.fullmatch(oid) or _HEX40.fullmatch(oid)):
        raise UnsafeName(f"refused the object id {inert_line(repr(oid))} from {where}")
    return oid
