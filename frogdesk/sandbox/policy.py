"""What a sandboxed command may see and touch: writable paths, read-only views, masks, env."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from frogdesk.sandbox.objects import ObjectRoute
from frogdesk.sandbox.worktree import Worktree, git_dirs, session_private_dir

# Credentials a command never needs; hidden (bwrap) or left unreadable (landlock).
CREDENTIAL_PATHS = (
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".password-store",
    ".netrc",
    ".git-credentials",
    ".docker",
    ".kube",
    ".pypirc",
    ".npmrc",
    ".yarnrc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".huggingface",
    ".cache/huggingface/token",
    ".config/gh",
    ".config/hub",
    ".config/gcloud",
    ".config/git/credentials",
    ".config/rclone",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
)

# Environment variables passed through to commands; everything else is dropped.
ENV_ALLOW = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "TZ",
    "COLORTERM",
)
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
AGENT_IDENTITY = {
    "GIT_AUTHOR_NAME": "FrogDesk agent",
    "GIT_AUTHOR_EMAIL": "agent@frogdesk.invalid",
    "GIT_COMMITTER_NAME": "FrogDesk agent",
    "GIT_COMMITTER_EMAIL": "agent@frogdesk.invalid",
}


@dataclass(frozen=True)
class ReadOnlyView:
    """An ignored directory of the user's repository shown read-only inside the worktree."""

    source: Path
    target: Path


@dataclass(frozen=True)
class SandboxPolicy:
    """Everything a shell needs to confine one session's commands."""

    workdir_root: Path
    """The folder commands run in and may write (the session worktree)."""
    git_readonly: tuple[Path, ...]
    """The main repository's git dir: visible, not writable (config, hooks, refs, objects)."""
    git_writable: tuple[Path, ...]
    """What `git add`/`git commit` in the worktree write: its admin dir, the private objects."""
    views: tuple[ReadOnlyView, ...]
    masked: tuple[Path, ...]
    """Existing credential files and folders of the user's home to hide."""
    home: Path
    """A private, writable HOME for the session."""
    tmp: Path
    """A private, writable tmp for the session."""
    env: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    objects: ObjectRoute | None = None
    """Where sandboxed git writes objects, moved into the user's store after each command."""


def sandbox_env(home: Path, tmp: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The cleared environment commands get: an allow-list, a private HOME and TMPDIR."""
    env = {k: environ[k] for k in ENV_ALLOW if k in environ}
    env.setdefault("PATH", DEFAULT_PATH)
    env.setdefault("LANG", "C.UTF-8")
    env.setdefault("TERM", "dumb")
    env.update(HOME=str(home), TMPDIR=str(tmp), SHELL="/bin/bash", USER="agent", LOGNAME="agent")
    env.update(AGENT_IDENTITY)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_LFS_SKIP_SMUDGE"] = "1"
    return env


def _views(
    worktree: Worktree, visible_ignored: Sequence[str]
) -> tuple[list[ReadOnlyView], list[str]]:
    views: list[ReadOnlyView] = []
    warnings: list[str] = []
    for raw in visible_ignored:
        rel = PurePosixPath(raw)
        if not raw or rel.is_absolute() or ".." in rel.parts or rel.parts[:1] == (".git",):
            warnings.append(
                f"ignored path {raw!r} is not a relative path inside the repository; not shown"
            )
            continue
        source = worktree.repo_root / rel
        target = worktree.path / rel
        if not source.is_dir() or source.is_symlink():
            continue  # not present in this repository: nothing to show
        if target.exists() and any(target.iterdir()):
            warnings.append(
                f"{raw} is part of the snapshot already; not replaced by the user's copy"
            )
            continue
        views.append(ReadOnlyView(source=source.resolve(), target=target))
    return views, warnings


def build_policy(
    worktree: Worktree,
    visible_ignored: Sequence[str] = (),
    *,
    private_dir: Path | None = None,
    user_home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> SandboxPolicy:
    """The policy for one session's worktree; creates its private HOME and tmp folders."""
    private = private_dir if private_dir is not None else session_private_dir(worktree)
    home, tmp = private / "home", private / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    dirs = git_dirs(worktree)
    objects = ObjectRoute(private=private / "objects", git_dir=dirs.common_dir)
    objects.prepare()
    views, warnings = _views(worktree, visible_ignored)
    user_home = Path(user_home) if user_home is not None else Path.home()
    masked = tuple(user_home / rel for rel in CREDENTIAL_PATHS if os.path.lexists(user_home / rel))
    return SandboxPolicy(
        workdir_root=worktree.path,
        git_readonly=(dirs.common_dir,),
        git_writable=(dirs.admin_dir, objects.private),
        views=tuple(views),
        masked=masked,
        home=home,
        tmp=tmp,
        env={**sandbox_env(home, tmp, os.environ if environ is None else environ), **objects.env()},
        warnings=tuple(warnings),
        objects=objects,
    )


def bare_policy(private_dir: Path, environ: Mapping[str, str] | None = None) -> SandboxPolicy:
    """A policy with no repository: commands may write only private_dir/work, HOME and tmp."""
    return folder_policy(private_dir / "work", private_dir, environ)


def folder_policy(
    folder: Path, private_dir: Path, environ: Mapping[str, str] | None = None
) -> SandboxPolicy:
    """A policy confined to one folder: commands may write only it and a private HOME and tmp."""
    work, home, tmp = folder, private_dir / "home", private_dir / "tmp"
    for path in (work, home, tmp):
        path.mkdir(parents=True, exist_ok=True)
    return SandboxPolicy(
        workdir_root=work,
        git_readonly=(),
        git_writable=(),
        views=(),
        masked=(),
        home=home,
        tmp=tmp,
        env=sandbox_env(home, tmp, os.environ if environ is None else environ),
    )
