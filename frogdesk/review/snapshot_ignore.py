"""The ignore rules of the review's snapshot, from the user's repository, never from the worktree.

A file git ignores in the user's repository (`__pycache__/*.pyc` a test run wrote, build
output) is not the session's change: the snapshot leaves it out, so it is neither listed
nor offered for apply. The rules are the ones git applies in the user's repository: the
global excludes file, `<git dir>/info/exclude` and the `.gitignore` files of the user's
working tree. A `.gitignore` the sandbox wrote in the worktree is never read: it could
hide a file from the review, or leave one in. git gets one exclude file FrogDesk writes,
each nested `.gitignore`'s patterns rewritten to start at the top, in git's precedence
order (later lines win): global, info/exclude, then each `.gitignore` below its parents.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from frogdesk import beneath
from frogdesk.errors import EscapeError
from frogdesk.review.gitcmd import git_out, run_git
from frogdesk.scratch import scratch_folder
from frogdesk.worktree.git import GitPaths
from frogdesk.worktree.record import read_record, sidecar_of

_GLOB_SPECIAL = re.compile(rb"([*?\[\]\\])")
MAX_IGNORE_FILE = 1 << 20
"""Bytes of one ignore file read; git itself stops reading a larger one too (100 MiB)."""


def user_repo_root(worktree: Path) -> Path | None:
    """The user's repository a FrogDesk worktree was made from (its record); None otherwise."""
    record = read_record(sidecar_of(worktree.absolute()))
    return record.repo_root if record is not None else None


def rebased_patterns(folder: bytes, text: bytes) -> list[bytes]:
    """The patterns of `<folder>/.gitignore`, rewritten to match from the top of the tree.

    A pattern with a slash before its end is anchored at its folder; one without matches at
    any depth below it (`/folder/**/pattern`). Comments and blank lines are dropped.
    """
    out: list[bytes] = []
    prefix = _GLOB_SPECIAL.sub(rb"\\\1", folder)
    for line in text.split(b"\n"):
        if not line.strip() or line.startswith(b"#"):
            continue
        if not folder:
            out.append(line)
            continue
        negate = line.startswith(b"!")
        body = line[1:] if negate else line
        trailing = body.endswith(b"/")
        core = body[:-1] if trailing else body
        if not core:
            continue
        if b"/" in core:
            rebased = b"/" + prefix + b"/" + (core[1:] if core.startswith(b"/") else core)
        else:
            rebased = b"/" + prefix + b"/**/" + core
        out.append((b"!" if negate else b"") + rebased + (b"/" if trailing else b""))
    return out


def _read_plain(root: int, name: str) -> bytes | None:
    """A regular file's bytes beneath root, not through a link (git skips a linked .gitignore)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = beneath.open_beneath(root, name, flags, follow_links=False)
    except (OSError, EscapeError):
        return None
    with beneath.opened(fd):
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, MAX_IGNORE_FILE)


def _read_file(path: Path) -> bytes:
    """An excludes file of the user's (their home, their git dir); empty when absent."""
    with contextlib.suppress(OSError):
        folder = beneath.open_root(path.parent)
        with beneath.opened(folder):
            return _read_plain(folder, path.name) or b""
    return b""


def _global_excludes(repo: Path) -> Path | None:
    """core.excludesFile as the user's config says, or git's default `$XDG_CONFIG_HOME/git/ignore`."""
    done = run_git(repo, ["config", "--path", "--get", "core.excludesFile"], ok_codes=(0, 1))
    named = done.stdout.decode("utf-8", "surrogateescape").strip()
    if named:
        return Path(named)
    xdg = os.environ.get("XDG_CONFIG_HOME") or (
        str(Path(os.environ["HOME"]) / ".config") if os.environ.get("HOME") else ""
    )
    return Path(xdg) / "git" / "ignore" if xdg else None


def user_ignore_rules(repo: Path, common_dir: Path) -> bytes:
    """Every ignore pattern git applies in the user's repository, as one top-level list."""
    lines: list[bytes] = []
    found = _global_excludes(repo)
    if found is not None:
        lines += _read_file(found).split(b"\n")
    lines += _read_file(common_dir / "info" / "exclude").split(b"\n")
    listed = git_out(
        repo,
        [
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            ":(glob)**/.gitignore",
        ],
    )
    names = sorted({n for n in listed.split(b"\0") if n}, key=lambda n: (n.count(b"/"), n))
    root = beneath.open_root(repo)
    with beneath.opened(root):
        for name in names:
            text = _read_plain(root, os.fsdecode(name))
            if text is not None:
                lines += rebased_patterns(name.rpartition(b"/")[0], text)
    return b"".join(line + b"\n" for line in lines if line.strip() and not line.startswith(b"#"))


@contextlib.contextmanager
def exclude_options(worktree: Path, paths: GitPaths) -> Iterator[list[str]]:
    """The `ls-files` options that apply the user's ignore rules to the worktree's walk.

    For a FrogDesk worktree: an exclude file written from the user's repository (see the
    module docstring). For a repository of the user's own, git's standard excludes: there
    the `.gitignore` files are the user's.
    """
    repo = user_repo_root(worktree)
    if repo is None:
        yield ["--exclude-standard"]
        return
    rules = user_ignore_rules(repo, paths.common_dir)
    with scratch_folder("frogdesk-ignore-") as tmp:
        rules_file = Path(tmp) / "exclude"
        rules_file.write_bytes(rules)
        yield [f"--exclude-from={rules_file}"]
