"""The one way FrogDesk runs git: hardened options, a cleaned environment, explicit repository paths."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from frogdesk.worktree.errors import GitError
from frogdesk.worktree.record import GitPaths, recorded_paths

__all__ = ["GitError", "GitPaths", "git_argv", "git_env", "git_out", "run_git"]

# Nothing git would execute on its own: no hooks, no fsmonitor daemon, no transport, no
# pager, no credential helper, no background maintenance, no external diff.
HARDENED_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "core.pager=cat",
    "core.askPass=",
    "core.sshCommand=false",
    "credential.helper=",
    "protocol.allow=never",
    "gc.auto=0",
    "maintenance.auto=false",
    "diff.external=",
    "submodule.recurse=false",
)
# Output independent of the user's preferences, for everything FrogDesk parses.
NEUTRAL_CONFIG = (
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.quotePath=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.renames=true",
    "color.ui=false",
)
# The only variables of the caller's environment git sees; GIT_DIR and friends never leak in.
_ENV_KEEP = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_EXEC_PATH",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
)
_ENV_FIXED = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_LFS_SKIP_SMUDGE": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "LC_ALL": "C",
}


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The cleaned environment every git FrogDesk runs gets, plus `extra`."""
    env = {k: os.environ[k] for k in _ENV_KEEP if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(_ENV_FIXED)
    if extra:
        env.update(extra)
    return env


def git_argv(args: Sequence[str], *, neutral: bool = True, config: Sequence[str] = ()) -> list[str]:
    """`git` with the hardened options (and the neutral ones unless neutral=False), then args."""
    options = [*HARDENED_CONFIG, *(NEUTRAL_CONFIG if neutral else ()), *config]
    argv = ["git"]
    for option in options:
        argv += ["-c", option]
    return [*argv, *args]


def run_git(
    where: Path | GitPaths,
    args: Sequence[str],
    *,
    stdin: bytes | int | None = None,
    env: Mapping[str, str] | None = None,
    ok_codes: Sequence[int] = (0,),
    neutral: bool = True,
    config: Sequence[str] = (),
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run hardened `git ARGS` and return the finished process; GitError on other exit codes.

    `where` is a folder of a repository FrogDesk trusts (the user's), or the recorded paths
    of a session worktree. A folder inside a FrogDesk worktree gets that worktree's recorded
    paths too, checked first: TamperedWorktree if its git metadata was changed. neutral=False lets the user's output preferences apply (for what
    lands in their history); `config` adds `-c` options.
    """
    extra = dict(env or {})
    pinned = where if isinstance(where, GitPaths) else recorded_paths(where)
    cwd = where if isinstance(where, Path) else where.work_tree
    if pinned is not None:
        extra.update(pinned.env())
    try:
        proc = subprocess.run(
            git_argv(args, neutral=neutral, config=config),
            cwd=cwd,
            input=stdin if not isinstance(stdin, int) else None,
            stdin=stdin if isinstance(stdin, int) else None,
            env=git_env(extra),
            capture_output=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args[:2])}: no answer in {timeout} s (in {cwd})") from None
    except OSError as exc:
        raise GitError(f"git {' '.join(args[:2])}: cannot run git in {cwd}: {exc}") from None
    if proc.returncode not in ok_codes:
        message = proc.stderr.decode("utf-8", "replace").strip() or f"exit code {proc.returncode}"
        raise GitError(f"git {' '.join(args[:2])}: {message}")
    return proc


def git_out(
    where: Path | GitPaths,
    args: Sequence[str],
    *,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    neutral: bool = True,
    config: Sequence[str] = (),
) -> bytes:
    """Stdout of a successful hardened git command."""
    return run_git(where, args, stdin=stdin, env=env, neutral=neutral, config=config).stdout
