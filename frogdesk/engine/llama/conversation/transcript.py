"""The conversation as an append-only token list, with turn boundaries that can be returned to."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from frogdesk.engine.chat import Message


def same_message(ours: Message, theirs: Message) -> bool:
    """Whether `theirs` is the message the transcript holds as `ours`.

    Assistant messages compare loosely (trimmed text, calls by name and arguments; ids
    ignored) because the loop rebuilds them from the stream; the rest compare exactly.
    """
    if ours.role != theirs.role:
        return False
    if ours.role != "assistant":
        return ours == theirs

    def calls(message: Message) -> list[tuple[str, str]]:
        return [
            (call.name, json.dumps(call.arguments, sort_keys=True, default=str))
            for call in message.tool_calls
        ]

    return (
        ours.content.strip() == theirs.content.strip()
        and ours.reasoning.strip() == theirs.reasoning.strip()
        and calls(ours) == calls(theirs)
    )


@dataclass
class Boundary:
    """A position where a group of whole messages ends (a turn boundary)."""

    n_messages: int
    """How many messages the tokens before `pos` hold."""
    pos: int
    captured: bool = False
    """Whether the model's state was captured on passing `pos` (restorable)."""
    state: bytes = b""
    """The recurrent-state snapshot taken there (hybrid models only)."""
    opening: bool = False
    """Whether this is where the opening every session shares ends (the system prompt and
    the tools); its snapshot is the last one freed."""


@dataclass
class TokenTranscript:
    """Tokens of one conversation and how much of it the context has evaluated.

    Invariant: the context's sequence 0 holds exactly `tokens[:n_past]`.
    """

    tokens: list[int] = field(default_factory=list)
    n_past: int = 0
    messages: list[Message] = field(default_factory=list)
    """The messages the tokens up to `covered` hold, in order."""
    covered: int = 0
    """Token position where the last whole message in `messages` ends."""
    boundaries: list[Boundary] = field(default_factory=list)
    schedule: list[tuple[int, int]] = field(default_factory=list)
    """Every decode call whose result is still in the context: (start, count)."""
    context_key: str = ""
    """What the first segment depends on besides the messages (tools, thinking)."""

    def common_prefix(self, messages: Sequence[Message]) -> int:
        """How many leading `messages` the transcript already holds."""
        n = 0
        for ours, theirs in zip(self.messages, messages, strict=False):
            if not same_message(ours, theirs):
                break
            n += 1
        return n

    def add_boundary(self, n_messages: int, pos: int, *, opening: bool = False) -> None:
        """Mark a turn boundary to be captured when decoding passes `pos`."""
        if any(b.pos == pos for b in self.boundaries):
            return
        self.boundaries.append(Boundary(n_messages, pos, opening=opening))
        self.boundaries.sort(key=lambda b: b.pos)

    def pending_boundaries(self, end: int) -> list[Boundary]:
        """Boundaries not yet captured in (n_past, end]."""
        return [b for b in self.boundaries if self.n_past < b.pos <= end and not b.captured]

    def restore_point(self, n_messages: int, *, needs_state: bool) -> Boundary | None:
        """The newest captured boundary at or before message `n_messages`.

        With `needs_state` (a hybrid model) it must hold a snapshot unless it is where the
        context already is.
        """
        best = None
        for b in self.boundaries:
            if b.n_messages > n_messages or b.pos > self.n_past or not b.captured:
                continue
            if needs_state and not b.state and b.pos != self.n_past:
                continue
            best = b
        return best

    def cut(self, boundary_pos: int, n_messages: int) -> None:
        """Keep tokens before `boundary_pos` and the first `n_messages` messages."""
        del self.tokens[boundary_pos:]
        del self.messages[n_messages:]
        self.covered = boundary_pos
        self.n_past = min(self.n_past, boundary_pos)
        self.boundaries = [b for b in self.boundaries if b.pos <= boundary_pos]
        self.schedule = [(s, n) for s, n in self.schedule if s + n <= self.n_past]

    def reset(self) -> None:
        """Forget everything (the context must be cleared alongside)."""
        self.tokens.clear()
        self.n_past = 0
        self.messages.clear()
        self.covered = 0
        self.boundaries.clear()
        self.schedule.clear()
        self.context_key = ""

    def drop_old_snapshots(self, keep: int) -> None:
        """Free all but `keep` snapshots (their boundaries stay, not restorable): the
        opening's first, so a new conversation on this context starts after it, then the
        newest."""
        with_state = sorted(
            (b for b in self.boundaries if b.state), key=lambda b: (b.opening, b.pos)
        )
        for b in with_state[: max(0, len(with_state) - keep)]:
            b.state = b""
            b.captured = False
