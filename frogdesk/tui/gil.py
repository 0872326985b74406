"""A shorter GIL switch interval while the model decodes beside the UI thread."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

DECODE_SWITCH_SECONDS = 0.0002
"""How long the UI thread may hold the GIL while the decode thread waits for it.

Every call from llama.cpp's Python binding back into Python needs the GIL; at Python's
default of 5 ms, one repaint of the screen can stall each of those calls for a whole
interval, several times a token. A fifth of a millisecond keeps a repaint from costing the
decode thread more than a sliver of a token, at a small cost in thread switches."""


@contextmanager
def decode_switch_interval(seconds: float = DECODE_SWITCH_SECONDS) -> Iterator[None]:
    """Shorten the interpreter's thread switch interval for the block, then restore it.

    The interval is process-wide; the block is meant to surround one generation run.
    """
    previous = sys.getswitchinterval()
    sys.setswitchinterval(min(seconds, previous))
    try:
        yield
    finally:
        sys.setswitchinterval(previous)
