"""`[sandbox]`: the shell's confinement, its limits and when a command is asked about (read
by `frogdesk.sandbox` and the Leaf tools' approval)."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import ClassVar, Literal

from frogdesk.config.option import option

SandboxLevel = Literal["auto", "bwrap", "landlock", "none"]
ApprovalMode = Literal["auto", "always", "untrusted", "never"]
APPROVAL_SETTINGS: tuple[str, ...] = typing.get_args(ApprovalMode)
"""Values of `bash_approval`: auto is always at the none level and never elsewhere."""

DEFAULT_BASH_ALLOWLIST = (
    "ls",
    "ls *",
    "pwd",
    "cat *",
    "head *",
    "tail *",
    "wc *",
    "grep *",
    "git status",
    "git status --short",
    "git diff",
    "git diff --stat",
    "git log --oneline",
)
"""Read-only commands `untrusted` runs unasked: no option of theirs writes a file (which is
why `git diff *` is not here: `--output=FILE` writes) and none runs a program it is given."""


@dataclass
class SandboxSettings:
    """How far a Bash command is confined, what it may use, and who is asked first."""

    SECTION: ClassVar[str] = "sandbox"

    level: SandboxLevel = option("auto", name="sandbox")
    """Shell isolation: auto, bwrap, landlock or none (none asks before every command)."""
    bash_approval: ApprovalMode = option("auto")
    """Ask before Bash commands: always, untrusted (those outside bash_allowlist), never, or
    auto (always at the none sandbox level, never elsewhere); true and false read as always and auto."""
    bash_allowlist: list[str] = option(factory=lambda: list(DEFAULT_BASH_ALLOWLIST))
    """Globs a whole command must match to run unasked under bash_approval = untrusted; a
    command with any shell metacharacter, an absolute path, `..` or `~` never matches."""
    bash_max_timeout: float = option(600.0, minimum=1)
    """Longest a Bash command may run in seconds, whatever timeout the model asks for."""
    bash_max_processes: int = option(512, minimum=0)
    """Processes (threads count) one Bash command may run at once; a command that forks past it is stopped; 0 means no cap."""
    bash_max_memory: int = option(0, minimum=0)
    """Bytes of memory one Bash command may use, all its processes together; 0 means half of the RAM."""
    session_disk_cap: int = option(8 << 30, minimum=0)
    """Bytes a session's commands may add on disk (worktree, private home and tmp); 0 means no cap."""
    disk_reserve: int = option(512 << 20, name="sandbox_disk_reserve", minimum=0)
    """Bytes kept free on every file system a command can write; a command is stopped below it; 0 means none."""
    tmpfs_size: int = option(64 << 20, name="sandbox_tmpfs_size", minimum=0)
    """Size in bytes of each in-memory folder of the bwrap sandbox (/dev/shm, the hidden home, /run); 0 leaves them unsized."""
    home_folders: list[str] = option(name="sandbox_home_folders", factory=list)
    """Folders of your home shown read-only in the sandbox besides the toolchain ones (never credentials)."""
    visible_ignored: list[str] = option(factory=lambda: [".venv", "venv", "node_modules"])
    """Ignored directories of the repository shown read-only inside the sandbox."""
