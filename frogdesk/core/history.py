"""A stored conversation as the events a live run shows, so an opened session looks as it did."""

from __future__ import annotations

from dataclasses import dataclass

from frogdesk.engine.chat import ContentDelta, ReasoningDelta
from frogdesk.leaf.events import LoopEvent, StepStarted, ToolFinished
from frogdesk.sessions.store import Transcript


@dataclass(frozen=True)
class UserTurn:
    """A message the user wrote: the task or a later one."""

    text: str


HistoryItem = UserTurn | LoopEvent
"""One thing to show of a stored conversation, in order."""


def history_items(transcript: Transcript) -> list[HistoryItem]:
    """The task, every step (reasoning, reply, tool calls with their observations) and every
    later user message, in the order the model read them."""
    items: list[HistoryItem] = [
        UserTurn(m.content) for m in transcript.messages if m.role == "user"
    ]
    for step in transcript.steps:
        items += [
            UserTurn(f.message.content) for f in transcript.followups if f.before_step == step.step
        ]
        items.append(StepStarted(step.step))
        reply = step.assistant
        if reply.reasoning:
            items.append(ReasoningDelta(reply.reasoning))
        if reply.content:
            items.append(ContentDelta(reply.content))
        for index, call in enumerate(reply.tool_calls):
            found = step.observations[index] if index < len(step.observations) else None
            observation = found.observation if found is not None else ""
            ok = found.ok if found is not None else False
            elapsed = found.elapsed if found is not None else 0.0
            command = found.command if found is not None else None
            items.append(ToolFinished(step.step, index, call, observation, elapsed, ok, command))
    items += [
        UserTurn(f.message.content)
        for f in transcript.followups
        if f.before_step >= transcript.next_step
    ]
    return items
