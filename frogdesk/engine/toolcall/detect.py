"""Which tool-call dialect a model speaks, read from its own chat template.

The template renders a probe conversation holding one call to a probe tool; the form that
comes out names the dialect. A template that writes no call at all teaches none (FrogDesk
then speaks its default, FrogNano's XML); one that writes the call in another form is
refused, in one line that shows what it wrote.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from frogdesk.engine.chat import Message, ToolCall, ToolSchema
from frogdesk.engine.errors import DialectError, TemplateError
from frogdesk.engine.template import ChatTemplate
from frogdesk.engine.toolcall.dialect import HERMES, XML, ToolCallDialect
from frogdesk.engine.toolcall.values import NotJson, load_json

PROBE_TOOL = "frogdesk_probe"
_PROBE_QUERY = "FrogDeskProbeQuery"
_PROBE_ARGUMENTS = {"probe_key": "probe_value"}
_PROBE_SCHEMA: ToolSchema = {
    "type": "function",
    "function": {
        "name": PROBE_TOOL,
        "description": "Probe.",
        "parameters": {
            "type": "object",
            "properties": {"probe_key": {"type": "string", "description": "Probe."}},
            "required": ["probe_key"],
        },
    },
}
_XML_CALL = re.compile(
    rf"<function={PROBE_TOOL}>\s*<parameter=probe_key>\s*probe_value\s*</parameter>"
)
_HERMES_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
_SEEN_CHARS = 120


@dataclass(frozen=True)
class DialectChoice:
    """The dialect a template teaches, or the default where it teaches none."""

    dialect: ToolCallDialect
    taught: bool
    """False when the template writes no tool call (the dialect is FrogDesk's default)."""

    def describe(self) -> str:
        """The choice in a few words (`models info`)."""
        if self.taught:
            return f"{self.dialect.title} (from the chat template)"
        return f"{self.dialect.title} (the chat template teaches no tool-call form: FrogDesk's default)"


def _probe_messages() -> list[Message]:
    call = ToolCall(PROBE_TOOL, dict(_PROBE_ARGUMENTS), id="call_probe")
    return [
        Message(role="system", content="FrogDeskProbeSystem"),
        Message(role="user", content=_PROBE_QUERY),
        Message(role="assistant", content="", tool_calls=(call,)),
    ]


def _is_hermes(text: str) -> bool:
    for found in _HERMES_CALL.finditer(text):
        try:
            data = load_json(found.group(1))
        except NotJson:
            continue
        if not isinstance(data, dict) or data.get("name") != PROBE_TOOL:
            continue
        arguments = data.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = load_json(arguments)
            except NotJson:
                continue
        if arguments == _PROBE_ARGUMENTS:
            return True
    return False


def choose_dialect(template: ChatTemplate) -> DialectChoice:
    """The dialect `template` teaches; raises DialectError for a form FrogDesk does not speak."""
    try:
        text = template.render(_probe_messages(), [_PROBE_SCHEMA], add_generation_prompt=False)
    except TemplateError:
        # A template that refuses an assistant call teaches no form of it.
        return DialectChoice(XML, taught=False)
    at = text.rfind(_PROBE_QUERY)
    written = text[at + len(_PROBE_QUERY) :] if at != -1 else text
    if _XML_CALL.search(written):
        return DialectChoice(XML, taught=True)
    if _is_hermes(written):
        return DialectChoice(HERMES, taught=True)
    where = written.find(PROBE_TOOL)
    if where == -1:
        return DialectChoice(XML, taught=False)
    seen = written[max(0, where - _SEEN_CHARS // 2) : where + _SEEN_CHARS]
    origin = f"{template.origin}: " if template.origin else ""
    raise DialectError(
        f"{origin}its chat template writes a tool call as {json.dumps(seen)}; FrogDesk speaks "
        f"{XML.title} and {HERMES.title}, not this form"
    )
