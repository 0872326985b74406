"""A backend wrapper that keeps the raw text of the last reply, for the session transcript."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

from frogdesk.engine.chat import (
    Backend,
    BackendInfo,
    EngineEvent,
    Finished,
    GenerationSettings,
    Message,
    ToolSchema,
)


class RawReplyTap:
    """Passes every call to `backend` and remembers the last reply exactly as generated.

    The loop builds its step records from parsed events; the transcript also keeps the raw
    reply (`Finished.raw_text`), so a bug report or a later resume has the model's own words.
    """

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.last_raw = ""
        """The raw text of the most recent finished reply ("" before the first)."""
        self.last_tokens: tuple[int, ...] = ()
        """Its sampled token ids, where the backend reports them (llama)."""

    @property
    def info(self) -> BackendInfo:
        """The wrapped backend's description."""
        return self.backend.info

    def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> Iterator[EngineEvent]:
        """The wrapped backend's stream, unchanged; its `Finished` raw text is kept."""
        self.last_raw, self.last_tokens = "", ()
        for event in self.backend.generate(messages, tools, settings, cancel):
            if isinstance(event, Finished):
                self.last_raw, self.last_tokens = event.raw_text, event.raw_tokens
            yield event

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
        """The wrapped backend's count."""
        return self.backend.count_tokens(messages, tools)

    def close(self) -> None:
        """Close the wrapped backend."""
        self.backend.close()
