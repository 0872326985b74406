"""What N attempts at one task are asked to be, and the bounds a request must keep."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from frogdesk.attempts.errors import AttemptsError
from frogdesk.sessions.record import SessionSpec

DEFAULT_CHECK_TIMEOUT = 600.0
"""Seconds one check may run before it is killed and counted as failed."""
MAX_ATTEMPTS = 16
"""More attempts than this at once is almost surely a typo."""


@dataclass(frozen=True)
class AttemptsSpec:
    """N attempts at one task: what each session gets, and how the attempts are checked."""

    task: str
    repo: Path
    n: int
    backend: str = "llama"
    model: str = ""
    endpoint: str = ""
    scripts: tuple[str, ...] = ()
    """Script backend: one script for every attempt, or one per attempt."""
    check: str | None = None
    """The check command; None detects one from the repository, "" runs none."""
    check_timeout: float = DEFAULT_CHECK_TIMEOUT

    def session_spec(self, index: int) -> SessionSpec:
        """The session spec of attempt `index`."""
        script = ""
        if self.scripts:
            script = self.scripts[index] if len(self.scripts) > 1 else self.scripts[0]
        return SessionSpec(
            task=self.task,
            repo=self.repo,
            backend=self.backend,
            model=self.model,
            endpoint=self.endpoint,
            script=script,
        )


def validate(spec: AttemptsSpec) -> None:
    """Refuse a spec that cannot run, before anything is made."""
    check_counts(spec.n, len(spec.scripts), spec.check_timeout)


def check_counts(n: int, scripts: int, check_timeout: float) -> None:
    """Refuse an attempt count, a number of scripts or a check timeout that cannot work."""
    if not 1 <= n <= MAX_ATTEMPTS:
        raise AttemptsError(f"--attempts must be between 1 and {MAX_ATTEMPTS}, got {n}")
    if scripts > 1 and scripts != n:
        raise AttemptsError(
            f"give --script once (every attempt replays it) or once per attempt "
            f"({n}), not {scripts} times"
        )
    if check_timeout <= 0:
        raise AttemptsError(f"the check timeout must be positive, got {check_timeout:g}")
