"""Approval of Bash commands, its own setting beside the sandbox level: always, untrusted, never."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from frogdesk.config import APPROVAL_SETTINGS, DEFAULT_BASH_ALLOWLIST

ApprovalMode = Literal["always", "untrusted", "never"]
"""Ask before every command, before commands outside the allow-list, or never."""

DECLINED = "the user did not approve this command"
"""The message of a refused command; the model sees `CommandDeclined: ` before it."""

# Only these characters may appear in an allow-listed command: no quoting, expansion,
# redirection, globbing, separators or control characters, so the words are what runs.
_PLAIN = re.compile(r"[A-Za-z0-9_./=:,+@%-]+( [A-Za-z0-9_./=:,+@%-]+)*")


class CommandDeclined(PermissionError):
    """The user did not approve a command (or nobody was there to ask)."""


def approval_mode(setting: str, level: str) -> ApprovalMode:
    """The mode in force for `bash_approval = setting` at sandbox `level` (auto resolved)."""
    if setting == "auto":
        return "always" if level == "none" else "never"
    if setting in ("always", "untrusted", "never"):
        return setting  # type: ignore[return-value]  # narrowed by the test above
    raise ValueError(f"bash_approval must be one of {', '.join(APPROVAL_SETTINGS)}: {setting!r}")


def plain_words(command: str) -> bool:
    """True when `command` is plain words bash runs as written: nothing it would expand,
    redirect, chain or glob, no absolute path, no `..` and no home (`~`)."""
    if not _PLAIN.fullmatch(command):
        return False
    for word in command.split(" "):
        value = word
        if word.startswith("-"):
            # an option may carry a path after `=`, never glued to its letters (`-f/etc/x`)
            option, _, value = word.partition("=")
            if "/" in option:
                return False
        if value.startswith("/") or ".." in value.split("/"):
            return False
    return True


def allowlisted(command: str, patterns: Sequence[str]) -> bool:
    """True when the WHOLE command (surrounding spaces aside) matches one glob of `patterns`
    and is plain words: `ls; rm -rf ~` or `git status && curl x` never pass."""
    stripped = command.strip(" ")
    if not plain_words(stripped):
        return False
    return any(fnmatch.fnmatchcase(stripped, pattern) for pattern in patterns)


@dataclass(frozen=True)
class CommandGate:
    """Decides, before a Bash command runs, whether it may: by the mode, the allow-list and
    the user's answer (`ask`; None means nobody can be asked, so the answer is no)."""

    mode: ApprovalMode
    allowlist: tuple[str, ...] = DEFAULT_BASH_ALLOWLIST
    ask: Callable[[str], bool] | None = None

    def needs_asking(self, command: str) -> bool:
        """Whether the user must say yes before `command` runs."""
        if self.mode == "never":
            return False
        if self.mode == "untrusted":
            return not allowlisted(command, self.allowlist)
        return True

    def check(self, command: str) -> None:
        """Return when `command` may run; raise CommandDeclined when the user said no."""
        if not self.needs_asking(command):
            return
        if self.ask is None or not self.ask(command):
            raise CommandDeclined(DECLINED)
