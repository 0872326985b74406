"""Line-ending normalization for the snapshot, from the base commit's attributes only.

`git add` turns CRLF into LF for paths whose attributes say `text` / `eol` (or `text=auto`
on a text file whose committed blob has no CR), so checking out a `*.bat eol=crlf` file and
snapshotting it again changes nothing. The snapshot does the same conversion itself; the
attributes come from `git check-attr` over the base commit's index (never a worktree file),
and nothing else of git's conversion runs: no `filter`, no `ident`, no
`working-tree-encoding` (those would run programs or read sandbox-written attributes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from frogdesk.review.gitcmd import git_out
from frogdesk.worktree.git import GitPaths

Action = Literal["none", "text", "auto"]


def _action(text: str, crlf: str, eol: str) -> Action:
    """git's convert_attrs with core.autocrlf=false: what `git add` does to line endings."""
    value = text if text != "unspecified" else crlf
    if value == "unset":
        return "none"
    if value == "auto":
        return "auto"
    if value in ("set", "input") or eol in ("lf", "crlf"):
        return "text"
    return "none"  # unspecified, with autocrlf off: stored as it is


def eol_actions(
    paths: GitPaths, env: Mapping[str, str], names: Iterable[bytes]
) -> dict[bytes, Action]:
    """Each name's conversion, from the attributes git reads in `paths` (the base's index)."""
    wanted = list(names)
    if not wanted:
        return {}
    out = git_out(
        paths,
        ["check-attr", "-z", "--stdin", "text", "crlf", "eol"],
        stdin=b"".join(n + b"\0" for n in wanted),
        env=env,
    )
    fields = out.split(b"\0")
    found: dict[bytes, dict[str, str]] = {}
    for i in range(0, len(fields) - 2, 3):
        name, attr, value = fields[i], fields[i + 1].decode(), fields[i + 2].decode()
        found.setdefault(name, {})[attr] = value
    actions: dict[bytes, Action] = {}
    for name in wanted:
        attrs = found.get(name, {})
        action = _action(
            attrs.get("text", "unspecified"),
            attrs.get("crlf", "unspecified"),
            attrs.get("eol", "unspecified"),
        )
        if action != "none":
            actions[name] = action
    return actions


def looks_binary(data: bytes) -> bool:
    """git's convert_is_binary: a NUL, a lone CR, or too many non-printable bytes."""
    if b"\0" in data:
        return True
    if data.count(b"\r") != data.count(b"\r\n"):
        return True
    control = sum(data.count(bytes([c])) for c in range(32) if c not in (8, 9, 10, 12, 13, 27))
    control += data.count(b"\x7f")
    if data.endswith(b"\x1a"):
        control -= 1  # a DOS end-of-file mark does not count
    printable = len(data) - control
    return (printable >> 7) < control


def to_git(data: bytes, action: Action, committed_has_cr: bool) -> bytes:
    """The bytes `git add` would store for a file with this conversion."""
    if action == "none" or b"\r\n" not in data:
        return data
    if action == "auto" and (committed_has_cr or looks_binary(data)):
        return data
    return data.replace(b"\r\n", b"\n")
