"""Choosing the strongest shell isolation this machine allows, and saying why."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from frogdesk.sandbox.confine import landlock_abi, landlock_missing, landlock_refusal
from frogdesk.sandbox.errors import SandboxError
from frogdesk.sandbox.limits import CommandLimits, limit_notes
from frogdesk.sandbox.policy import (
    DEFAULT_MAX_TIMEOUT,
    SandboxPolicy,
    bare_policy,
    build_policy,
    folder_policy,
)
from frogdesk.sandbox.shells.bwrap import BwrapShell, find_bwrap
from frogdesk.sandbox.shells.landlock import PARTIAL_NOTICE, LandlockShell
from frogdesk.sandbox.shells.none import NoneShell
from frogdesk.sandbox.shells.protocol import SandboxLevel, Shell
from frogdesk.worktree.checkout import Worktree

LEVELS = ("auto", "bwrap", "landlock", "none")
ROOT_WARNING = (
    "FrogDesk is running as root: a sandbox escape would have full control of this machine. "
    "Run it as an ordinary user."
)
NONE_WARNING = (
    "No sandbox: commands run with your own permissions, so every Bash command needs your approval."
)


@dataclass
class ShellChoice:
    """The shell chosen for a session, its level, why, and what the user must be told."""

    shell: Shell
    level: SandboxLevel
    reason: str
    warnings: list[str] = field(default_factory=list)


def _probe_bwrap(bwrap: Path) -> str | None:
    """None when bwrap can create the namespaces we use, else its error (e.g. AppArmor's refusal)."""
    try:
        done = subprocess.run(
            [
                str(bwrap),
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--unshare-all",
                "--die-with-parent",
                "--cap-drop",
                "ALL",
                "--",
                "/bin/true",
            ],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return done.stderr.decode("utf-8", "replace").strip() or f"exit code {done.returncode}"
    return None


def _seccomp_available() -> bool:
    try:
        import pyseccomp

        pyseccomp.system_arch()
    except Exception:
        return False
    return True


def _bwrap_status() -> tuple[Path | None, str]:
    bwrap = find_bwrap()
    if bwrap is None:
        return None, "bubblewrap (bwrap) is not installed"
    error = _probe_bwrap(bwrap)
    if error is not None:
        return None, f"{bwrap} cannot create namespaces here (user namespaces blocked?): {error}"
    return bwrap, f"bubblewrap works ({bwrap})"


def _landlock_status() -> tuple[bool, str]:
    abi = landlock_abi()
    missing = landlock_missing(abi)
    if missing:
        # Checked here, before the level is offered: best effort would run with less.
        return False, landlock_refusal(abi, missing)
    if not _seccomp_available():
        return False, f"Landlock ABI {abi} is present but seccomp (libseccomp) is not available"
    return True, f"Landlock ABI {abi} with a seccomp network filter"


def detect(requested: str = "auto") -> tuple[SandboxLevel, str]:
    """The level a session would get for `requested`, and why; raises SandboxError if impossible."""
    if requested not in LEVELS:
        raise SandboxError(
            f"unknown sandbox level {requested!r}: choose one of {', '.join(LEVELS)}"
        )
    if requested == "none":
        return "none", "chosen in the settings (sandbox = none)"
    notes: list[str] = []
    if requested in ("auto", "bwrap"):
        bwrap, why = _bwrap_status()
        if bwrap is not None:
            return "bwrap", why
        if requested == "bwrap":
            raise SandboxError(f"sandbox = bwrap, but {why}")
        notes.append(why)
    ok, why = _landlock_status()
    if ok:
        return "landlock", "; ".join([*notes, why])
    if requested == "landlock":
        raise SandboxError(f"sandbox = landlock, but {why}")
    notes.append(why)
    return "none", "; ".join([*notes, "no isolation is available"])


def choose_shell(
    requested: str,
    *,
    worktree: Worktree | None,
    visible_ignored: Sequence[str] = (),
    user_home: Path | None = None,
    private_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    home_toolchains: Sequence[str] = (),
    max_timeout: float = DEFAULT_MAX_TIMEOUT,
    limits: CommandLimits | None = None,
) -> ShellChoice:
    """Build the shell for a session at the strongest level allowed by `requested`.

    "auto" tries bwrap, then landlock, then none; a named level that cannot work raises
    SandboxError. Approval is not the shell's: the Bash tool's gate asks (leaf.approval).
    """
    level, reason = detect(requested)
    policy: SandboxPolicy
    if worktree is not None:
        policy = build_policy(
            worktree,
            visible_ignored,
            private_dir=private_dir,
            user_home=user_home,
            environ=environ,
            home_toolchains=home_toolchains,
            max_timeout=max_timeout,
            limits=limits,
        )
    else:
        policy = bare_policy(
            private_dir or Path(tempfile.mkdtemp(prefix="frogdesk-sandbox-")), environ, limits
        )
    return _shell_for(level, reason, policy)


def confined_shell(
    requested: str,
    folder: Path,
    *,
    private_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    limits: CommandLimits | None = None,
) -> ShellChoice:
    """A shell whose commands may write only `folder` (plus a private HOME and tmp).

    For running tools in a folder that is not a session worktree (`frogdesk tool`): the
    same levels as `choose_shell`, with the policy built for `folder` from the start.
    """
    level, reason = detect(requested)
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise SandboxError(f"{folder} is not a folder")
    private = private_dir or Path(tempfile.mkdtemp(prefix="frogdesk-sandbox-"))
    policy = folder_policy(folder, private, environ, limits=limits)
    return _shell_for(level, reason, policy)


def _shell_for(
    level: SandboxLevel,
    reason: str,
    policy: SandboxPolicy,
) -> ShellChoice:
    """The shell of `level` enforcing `policy`, with what the user must be told."""
    warnings = [*policy.warnings, *limit_notes(policy.limits)]
    if os.geteuid() == 0:
        warnings.append(ROOT_WARNING)
    shell: Shell
    if level == "bwrap":
        bwrap = find_bwrap()
        assert bwrap is not None
        bwrap_shell = BwrapShell(policy, bwrap)
        warnings = [*bwrap_shell.warnings, *warnings]
        shell = bwrap_shell
    elif level == "landlock":
        landlock = LandlockShell(policy)
        warnings = [*landlock.warnings, *warnings, PARTIAL_NOTICE]
        shell = landlock
    else:
        shell = NoneShell(policy)
        warnings.append(NONE_WARNING)
    return ShellChoice(shell=shell, level=level, reason=reason, warnings=warnings)
