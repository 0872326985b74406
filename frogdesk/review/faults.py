"""A deterministic crash hook for tests: SIGKILL this process at the Nth transaction step."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

FAULT_ENV = "FROGDESK_KILL_AT_STEP"
"""Set to N (1-based) to make the Nth step of an apply, undo or recovery kill the process."""


@dataclass
class FaultPoints:
    """Counts the durable steps of a transaction; kills the process at the chosen one.

    Tests set FROGDESK_KILL_AT_STEP to reproduce a crash at an exact instant (a power cut
    or `kill -9`) instead of racing a timer; without it every call is a no-op.
    """

    kill_at: int = 0
    seen: int = 0

    @classmethod
    def from_env(cls) -> FaultPoints:
        """The hook as the environment asks (off unless FROGDESK_KILL_AT_STEP is a number)."""
        raw = os.environ.get(FAULT_ENV, "")
        return cls(int(raw) if raw.isdigit() else 0)

    def step(self, label: str) -> None:
        """One durable step just happened; die here if this is the chosen one."""
        self.seen += 1
        if self.kill_at and self.seen == self.kill_at:
            os.write(2, f"fault point {self.seen}: {label}\n".encode())
            os.kill(os.getpid(), signal.SIGKILL)
