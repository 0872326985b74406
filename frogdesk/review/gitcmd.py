"""Running git for review: fixed, user-config-independent options and byte-exact output."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from frogdesk.errors import FrogDeskError

# Options that make git's output independent of the user's configuration.
_NEUTRAL_CONFIG = (
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.safecrlf=false",
    "-c",
    "core.quotePath=false",
    "-c",
    "diff.noprefix=false",
    "-c",
    "diff.mnemonicPrefix=false",
    "-c",
    "diff.renames=true",
    "-c",
    "diff.external=",
    "-c",
    "color.ui=false",
    "-c",
    "core.fsmonitor=false",
)


class GitError(FrogDeskError):
    """A git command failed; the message carries git's own words."""


def run_git(
    cwd: Path,
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    ok_codes: Sequence[int] = (0,),
    neutral: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git ARGS` in cwd and return the finished process; raise GitError on other exit codes.

    neutral=False lets the user's configuration apply (for what lands in their history).
    """
    full_env = dict(os.environ)
    full_env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"})
    if env:
        full_env.update(env)
    proc = subprocess.run(
        ["git", *(_NEUTRAL_CONFIG if neutral else ()), *args],
        cwd=cwd,
        input=stdin,
        env=full_env,
        capture_output=True,
        check=False,
    )
    if proc.returncode not in ok_codes:
        message = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise GitError(f"git {' '.join(args[:2])}: {message}")
    return proc


def git_out(
    cwd: Path,
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    neutral: bool = True,
) -> bytes:
    """Stdout of a successful git command."""
    return run_git(cwd, args, stdin=stdin, env=env, neutral=neutral).stdout


def read_blobs(cwd: Path, shas: Sequence[str]) -> dict[str, bytes]:
    """The contents of the given blobs, read with one `git cat-file --batch`."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    out = run_git(
        cwd, ["cat-file", "--batch"], stdin="".join(f"{s}\n" for s in wanted).encode()
    ).stdout
    blobs: dict[str, bytes] = {}
    pos = 0
    for sha in wanted:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split(b" ")
        if len(header) != 3:
            raise GitError(f"git cat-file: object {sha} is missing")
        size = int(header[2])
        start = eol + 1
        blobs[sha] = out[start : start + size]
        pos = start + size + 1
    return blobs
