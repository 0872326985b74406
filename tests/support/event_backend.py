"""A Backend for loop tests that replays fixed engine events, one list per reply."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

from frogdesk.engine.chat import (
    BackendInfo,
    ContentDelta,
    EngineEvent,
    Finished,
    GenerationSettings,
    Message,
    ReasoningDelta,
    ToolCall,
    ToolCallEvent,
    ToolSchema,
    Usage,
)


def reply(
    content: str = "", *calls: ToolCall, reasoning: str = "think", finish: str | None = None
) -> list[EngineEvent]:
    """The events of one ordinary reply."""
    events: list[EngineEvent] = [ReasoningDelta(reasoning), ContentDelta(content)]
    events += [ToolCallEvent(c) for c in calls]
    events.append(Usage(100, 10, 90, 5))
    events.append(Finished(finish or ("tool_calls" if calls else "stop")))  # type: ignore[arg-type]
    return events


class EventBackend:
    """Replays `replies` in order; raises `error` instead when given; records what it was sent."""

    def __init__(self, replies: Sequence[list[EngineEvent] | Exception], tokens: int = 50) -> None:
        self.replies = list(replies)
        self.tokens = tokens
        self.calls: list[tuple[list[Message], GenerationSettings]] = []

    @property
    def info(self) -> BackendInfo:
        return BackendInfo("script", "events", "none")

    def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> Iterator[EngineEvent]:
        self.calls.append((list(messages), settings))
        item = self.replies.pop(0) if self.replies else reply("done")
        if isinstance(item, Exception):
            raise item
        for event in item:
            if cancel is not None and cancel.is_set():
                yield Finished("cancelled")
                return
            yield event

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
        return self.tokens

    def close(self) -> None:
        pass
