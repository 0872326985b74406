"""How a Hub request is tried again after a transient failure: the waits, their countdown, cancel."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from frogdesk.models.errors import HubCancelled

WaitCallback = Callable[[int, int, str], None]
"""(seconds left before the next try, the try about to be made, why) for a visible countdown."""


@dataclass(frozen=True)
class RetryPolicy:
    """How transient failures (timeouts, 5xx) are retried; lasting ones never are."""

    waits: tuple[float, ...] = (2.0, 4.0, 8.0)
    on_wait: WaitCallback | None = None
    cancel: threading.Event | None = None

    def wait(self, index: int, reason: str) -> None:
        """Count down the index-th wait, one report per second; HubCancelled if cancelled."""
        deadline = time.monotonic() + self.waits[index]
        while (left := deadline - time.monotonic()) > 0:
            if self.on_wait is not None:
                self.on_wait(int(left + 0.999), index + 2, reason)
            if self.cancel is not None and self.cancel.wait(min(left, 1.0)):
                raise HubCancelled(f"cancelled while waiting to try again ({reason})")
            if self.cancel is None:
                time.sleep(min(left, 1.0))


NO_RETRY = RetryPolicy(waits=())
"""One attempt only."""
