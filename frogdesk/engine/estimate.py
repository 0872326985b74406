"""Token estimates for backends that have no tokenizer of the model at hand."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from frogdesk.engine.chat import Message, ToolSchema

CHARS_PER_TOKEN = 4
"""The estimate: about four characters per token."""


def estimate_tokens(text: str) -> int:
    """An estimate of the tokens in `text` (characters / 4, rounded up)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_prompt_tokens(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
    """An estimate of a prompt's tokens from the messages' and tools' text."""
    size = sum(len(json.dumps(tool, ensure_ascii=False)) for tool in tools)
    for message in messages:
        size += len(message.content) + len(message.reasoning) + 16
        size += sum(
            len(call.name) + len(json.dumps(call.arguments, ensure_ascii=False))
            for call in message.tool_calls
        )
    return math.ceil(size / CHARS_PER_TOKEN)
