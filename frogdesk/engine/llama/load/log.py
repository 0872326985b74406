"""Capturing llama.cpp's log instead of letting it spill onto the terminal."""

from __future__ import annotations

import ctypes
import logging
import re
import sys
import weakref
from collections import deque

import llama_cpp

_CONT = 5
_FILE_LOG = logging.getLogger("frogdesk.llama")
"""Where whole lines go for the user's log file (frogdesk.logfile routes it there)."""
_MAX_LINES = 5000
_BUFFER_LINE = re.compile(r"(?P<name>[\w.\-]+(?:\s+[\w\-]+)*) buffer size =\s*(?P<mib>[\d.]+) MiB")


class LlamaLogCapture:
    """Keeps llama.cpp's log lines (the newest few thousand); echoes them to stderr if verbose.

    llama.cpp has one process-wide logger: `install` points it here, `uninstall` lets it
    fall through to the log file if this capture still holds it.
    """

    def __init__(self, *, verbose: bool = False) -> None:
        self.verbose = verbose
        self._lines: deque[str] = deque(maxlen=_MAX_LINES)
        self._partial = ""

    def receive(self, level: int, text: bytes | None) -> None:
        """Take one piece of a log line from llama.cpp (called through the router)."""
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
        router = _router()
        router.target = weakref.ref(self)
        llama_cpp.llama_log_set(router.callback, ctypes.c_void_p(0))

    def uninstall(self) -> None:
        """Stop taking llama.cpp's log; from here on its lines go to the log file alone.

        The router stays llama.cpp's callback: handing the log back to llama-cpp-python's
        own handler would print to the terminal (behind the TUI) and fail on the bytes that
        are not UTF-8 which random-weight models log.
        """
        router = _router()
        if router.target is not None and router.target() is self:
            router.target = None


class _LogRouter:
    """The one C callback FrogDesk gives llama.cpp, forwarding to the capture that holds the log.

    llama.cpp keeps a raw pointer to its log callback for the life of the process, so the
    callback must never be freed: a capture that went away (a model nobody closed) only
    drops out of the weak reference, and its lines then go to the log file alone.
    """

    def __init__(self) -> None:
        self.target: weakref.ref[LlamaLogCapture] | None = None
        self.callback = llama_cpp.llama_log_callback(self._on_log)

    def _on_log(self, level: int, text: bytes | None, _user: ctypes.c_void_p) -> None:
        capture = self.target() if self.target is not None else None
        if capture is not None:
            capture.receive(level, text)
        elif text and text.strip():
            _FILE_LOG.info(text.decode("utf-8", errors="replace").rstrip("\n"))


_ROUTERS: list[_LogRouter] = []
"""The process's one router, made on first use (llama.cpp's logger is process-wide too)."""


def _router() -> _LogRouter:
    if not _ROUTERS:
        _ROUTERS.append(_LogRouter())
    return _ROUTERS[0]


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
