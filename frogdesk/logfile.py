"""The libraries' own logs (huggingface_hub, llama.cpp, warnings) sent to one file, never the terminal."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from frogdesk.inert import inert_line

LIBRARY_LOGGERS = (
    "huggingface_hub",
    "frogdesk.llama",
    "httpx",
    "httpx2",
    "filelock",
    "py.warnings",
)
"""Loggers whose records go to the log file only (llama.cpp's lines arrive as frogdesk.llama)."""
_MAX_BYTES = 4 << 20


class _InertFormatter(logging.Formatter):
    """One line per record, every control character shown: a log read in a terminal obeys nothing."""

    def format(self, record: logging.LogRecord) -> str:
        return inert_line(super().format(record))


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
            if getattr(handler, "baseFilename", None) != target:
                logger.removeHandler(handler)
                handler.close()
        if not logger.handlers:
            handler = logging.handlers.RotatingFileHandler(
                path, maxBytes=_MAX_BYTES, backupCount=1, encoding="utf-8", delay=True
            )
            handler.setFormatter(_InertFormatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
            logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    logging.captureWarnings(True)
    return path
