"""The libraries' own logs (huggingface_hub, llama.cpp, warnings) sent to one file, never the
terminal; the few lines that matter to a user are also said in FrogDesk's words, one line each."""

from __future__ import annotations

import logging
import logging.handlers
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from frogdesk.inert import inert_line
from frogdesk.sizes import human_bytes

LIBRARY_LOGGERS = (
    "huggingface_hub",
    "frogdesk.llama",
    "httpx",
    "httpx2",
    "filelock",
    "py.warnings",
    "frogdesk.notice",
)
"""Loggers whose records go to the log file only (llama.cpp's lines arrive as frogdesk.llama)."""
_MAX_BYTES = 4 << 20


class _InertFormatter(logging.Formatter):
    """One line per record, every control character shown: a log read in a terminal obeys nothing."""

    def format(self, record: logging.LogRecord) -> str:
        return inert_line(super().format(record))


NoticeListener = Callable[[str], None]
"""Hears one notice: a single inert line in FrogDesk's words."""


@dataclass(frozen=True)
class _Notable:
    """A library line that matters to a user, and what FrogDesk says about it."""

    logger: str
    """The logger (or the start of its name) the line comes from."""
    pattern: re.Pattern[str]
    words: Callable[[re.Match[str]], str]


def _mb(text: str) -> str:
    return human_bytes(float(text) * 1e6)


NOTABLE: tuple[_Notable, ...] = (
    _Notable("frogdesk.notice", re.compile(r".+", re.DOTALL), lambda m: m[0]),
    _Notable(
        "frogdesk.llama",
        re.compile(r"n_ctx_seq \((?P<asked>\d+)\) > n_ctx_train \((?P<trained>\d+)\)"),
        lambda m: (
            f"the model was trained on {int(m['trained']):,} tokens of context and is given "
            f"{int(m['asked']):,}: past {int(m['trained']):,} tokens its answers may fall apart"
        ),
    ),
    _Notable(
        "frogdesk.llama",
        re.compile(r"(?:missing|unknown) pre-tokenizer type"),
        lambda m: (
            "the model file names no pre-tokenizer this llama.cpp knows: it splits text a "
            "default way and the model may write worse (a newer GGUF of it may fix this)"
        ),
    ),
    _Notable(
        "frogdesk.llama",
        re.compile(r"unknown model architecture: '(?P<arch>[^']*)'"),
        lambda m: (
            f"this llama.cpp does not know the model architecture '{m['arch']}': the model "
            "needs a newer llama-cpp-python"
        ),
    ),
    _Notable(
        "",
        re.compile(r"does not\s+support them in (?P<where>.+?)\. Caching files"),
        lambda m: (
            f"the Hugging Face cache at {m['where']} cannot use symlinks: every file is "
            "stored as a copy and takes more space"
        ),
    ),
    _Notable(
        "",
        re.compile(
            r"Not enough free disk space to download the file\. The expected file size is: "
            r"(?P<need>[\d.]+) MB\. The target location (?P<where>.+?) only has "
            r"(?P<free>[\d.]+) MB"
        ),
        lambda m: (
            f"not enough free disk space for a download: {_mb(m['need'])} needed, "
            f"{_mb(m['free'])} free in {m['where']}"
        ),
    ),
    _Notable(
        "",
        re.compile(r"Could not refresh your Hugging Face access token|fetching `HF_TOKEN`"),
        lambda m: (
            "the Hugging Face token could not be read or refreshed: log in again "
            "(`hf auth login`) or set HF_TOKEN if a download is refused"
        ),
    ),
)
"""The library lines lifted out of the log file (llama.cpp's arrive as frogdesk.llama; Python
warnings as py.warnings). Everything else stays in the file."""


def say_notice(text: str) -> None:
    """A notice of FrogDesk's own, said like the library ones (and kept in the log file)."""
    logging.getLogger("frogdesk.notice").warning(text)


def notice_for(logger: str, message: str) -> str | None:
    """FrogDesk's one line for a library log line that matters to a user, else None."""
    for notable in NOTABLE:
        if logger.startswith(notable.logger):
            match = notable.pattern.search(message)
            if match is not None:
                return inert_line(notable.words(match))
    return None


class _Notices(logging.Handler):
    """Passes the lines that matter to the listener in front (the CLI or the TUI), each once
    per listener."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.listeners: list[tuple[NoticeListener, set[str]]] = []
        self.guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = notice_for(record.name, record.getMessage())
            if text is None:
                return
            with self.guard:
                if not self.listeners:
                    return
                listener, said = self.listeners[-1]
                if text in said:
                    return
                said.add(text)
            listener(text)
        except Exception:  # a listener that fails must not break the library that logged
            self.handleError(record)


_NOTICES = _Notices()


def listen_for_notices(listener: NoticeListener) -> Callable[[], None]:
    """Hear the library warnings that matter, each once, while this is the newest listener
    (the TUI stands in front of the CLI's stderr while it runs); returns the way to stop."""
    entry: tuple[NoticeListener, set[str]] = (listener, set())
    with _NOTICES.guard:
        _NOTICES.listeners.append(entry)

    def stop() -> None:
        with _NOTICES.guard:
            if entry in _NOTICES.listeners:
                _NOTICES.listeners.remove(entry)

    return stop


def route_library_logs(path: Path) -> Path:
    """Send the libraries' log records to `path` (rotated) instead of stderr; safe to call again.

    huggingface_hub puts a stderr handler on its logger when imported, so it is imported
    here first and that handler taken off.
    """
    import huggingface_hub.utils.logging  # noqa: F401  (adds its stderr handler on import)

    path.parent.mkdir(parents=True, exist_ok=True)
    target = str(path.resolve())
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if handler is _NOTICES:
                continue
            if getattr(handler, "baseFilename", None) != target:
                logger.removeHandler(handler)
                handler.close()
        if _NOTICES not in logger.handlers:
            logger.addHandler(_NOTICES)
        if not any(getattr(h, "baseFilename", None) == target for h in logger.handlers):
            handler = logging.handlers.RotatingFileHandler(
                path, maxBytes=_MAX_BYTES, backupCount=1, encoding="utf-8", delay=True
            )
            handler.setFormatter(_InertFormatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
            logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    logging.captureWarnings(True)
    return path
