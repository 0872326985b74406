"""Capturing llama.cpp's log instead of letting it spill onto the terminal."""

from __future__ import annotations

import ctypes
import logging
import re
import sys
from collections import deque

import llama_cpp

_CONT = 5
_FILE_LOG = logging.getLogger("frogdesk.llama")
"""Where whole lines go for the user's log file (frogdesk.logfile routes it there)."""
_MAX_LINES = 5000
_BUFFER_LINE = re.compile(r"(?P<name>[\w.\-]+(?:\s+[\w\-]+)*) buffer size =\s*(?P<mib>[\d.]+) MiB")


class LlamaLogCapture:
    """Keeps llama.cpp's log lines (the newest few thousand); echoes them to stderr if verbose.

    llama.cpp has one process-wide logger: `install` points it here, `uninstall` hands it
    back to llama-cpp-python's own handler if this capture still holds it.
    """

    def __init__(self, *, verbose: bool = False) -> None:
        self.verbose = verbose
        self._lines: deque[str] = deque(maxlen=_MAX_LINES)
        self._partial = ""
        self._callback = llama_cpp.llama_log_callback(self._on_log)

    def _on_log(self, level: int, text: bytes | None, _user: ctypes.c_void_p) -> None:
        chunk = (text or b"").decode("utf-8", errors="replace")
        if self.verbose:
            print(chunk, end="", file=sys.stderr, flush=True)
        if level != _CONT and self._partial:
            self._lines.append(self._partial)
            self._partial = ""
        self._partial += chunk
        *done, self._partial = self._partial.split("\n")
        kept = [line for line in done if line.strip()]
        self._lines.extend(kept)
        for line in kept:
            _FILE_LOG.info(line)

    @property
    def lines(self) -> list[str]:
        """Every captured line, oldest first (a trailing partial line included)."""
        out = list(self._lines)
        if self._partial.strip():
            out.append(self._partial)
        return out

    def mark(self) -> int:
        """A position in the log, to read what follows with `since`."""
        return len(self._lines)

    def since(self, mark: int) -> list[str]:
        """Lines logged after `mark` (approximate once the log wrapped around)."""
        return self.lines[max(0, min(mark, len(self._lines))) :]

    def install(self) -> None:
        """Route llama.cpp's log here."""
        llama_cpp.llama_log_set(self._callback, ctypes.c_void_p(0))

    def uninstall(self) -> None:
        """Give the log back to llama-cpp-python's handler if it is still routed here."""
        current = llama_cpp.llama_log_callback()
        user = ctypes.c_void_p()
        llama_cpp.llama_log_get(ctypes.byref(current), ctypes.byref(user))
        ours = ctypes.cast(self._callback, ctypes.c_void_p).value
        if ctypes.cast(current, ctypes.c_void_p).value == ours:
            from llama_cpp import _logger

            llama_cpp.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))


def buffer_sizes(lines: list[str]) -> dict[str, float]:
    """The buffer sizes llama.cpp reported while loading, in MiB, by buffer name.

    For example {"CPU_Mapped model": 98.9, "CPU KV": 12.0, "CPU compute": 66.5}; a name that
    appears more than once (several devices) is summed.
    """
    sizes: dict[str, float] = {}
    for line in lines:
        match = _BUFFER_LINE.search(line)
        if match:
            name = " ".join(match.group("name").split())
            sizes[name] = sizes.get(name, 0.0) + float(match.group("mib"))
    return sizes
