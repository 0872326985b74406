"""What one attempt left behind, and what a whole set of attempts gives the user to choose from."""

from __future__ import annotations

from dataclasses import dataclass, field

from frogdesk.attempts.verify import CheckResult
from frogdesk.engine.chat import Usage

CHECK_KEYS = ("command", "exit_code", "summary", "seconds")


@dataclass(frozen=True)
class AttemptResult:
    """One attempt at the task: its session, how it ended, what it changed and its check."""

    index: int
    """0-based position in the order the attempts were started."""
    session_id: str
    seed: int
    exit_reason: str
    """Leaf's exit reason, or `crashed` when the attempt broke before it could finish."""
    error: str = ""
    files_changed: tuple[str, ...] = ()
    lines_added: int = 0
    lines_removed: int = 0
    n_steps: int = 0
    tokens: int = 0
    """Tokens the model generated over the attempt's replies (a reply cut by a stop too)."""
    seconds: float = 0.0
    final_message: str = ""
    check: CheckResult | None = None
    cut_usage: Usage | None = None
    """The usage of the reply the attempt's stop cut off (its transcript has no step for it)."""

    @property
    def lines_changed(self) -> int:
        """Lines added plus lines removed."""
        return self.lines_added + self.lines_removed

    def to_json(self) -> dict[str, object]:
        """One entry of `attempts` in `frogdesk run --attempts N --json`; without a check
        every field of `check` is null."""
        check = self.check.to_json() if self.check is not None else dict.fromkeys(CHECK_KEYS)
        return {
            "session_id": self.session_id or None,
            "exit_reason": self.exit_reason,
            "files_changed": list(self.files_changed),
            "check": check,
        }


@dataclass(frozen=True)
class AttemptsOutcome:
    """All attempts, best first when a check ranked them, else in start order."""

    attempts: tuple[AttemptResult, ...]
    check_command: str = ""
    """The check that ran ("" when none: the attempts are only compared, not ranked)."""
    check_source: str = ""
    """Where the check came from: `given`, or what detection found."""
    chosen: str | None = None
    """The session id of the best attempt when its check passed, else None."""
    notes: tuple[str, ...] = field(default=())

    @property
    def ranked(self) -> bool:
        """True when a check ran, so the order means better-first."""
        return bool(self.check_command)

    def to_json(self) -> dict[str, object]:
        """The JSON `frogdesk run --attempts N --json` prints."""
        return {"attempts": [a.to_json() for a in self.attempts], "chosen": self.chosen}
