"""The tool-call dialects FrogDesk speaks: one seam, one implementation per trained format.

A dialect owns its streaming parser (with its drift recoveries), its lazy grammar and the
text of a past call written back into a transcript. Qwen3-Coder XML is FrogNano's (and
Qwen3.5's, Qwen3-Coder's); Hermes JSON in `<tool_call>` is Qwen2.5's, Qwen3's, Hermes'.
Which one a model speaks is read from its own chat template (`toolcall.detect`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from frogdesk.engine.chat import EngineEvent, ToolCall, ToolSchema
from frogdesk.engine.toolcall.crossdialect import CrossDialectParser, DialectNames
from frogdesk.engine.toolcall.grammar import CALL_TRIGGER, ToolGrammar, tool_call_grammar
from frogdesk.engine.toolcall.hermes import FORM as HERMES_FORM
from frogdesk.engine.toolcall.hermes import HermesToolParser, render_tool_call_hermes
from frogdesk.engine.toolcall.hermes_grammar import hermes_call_grammar
from frogdesk.engine.toolcall.parser import QwenXmlToolParser, render_tool_call_xml

QWEN3_CODER_XML = "qwen3_coder_xml"
HERMES_JSON = "hermes_json"
XML_TITLE = "Qwen3-Coder XML in <tool_call>"
HERMES_TITLE = "Hermes JSON in <tool_call>"
XML_FORM = (
    "<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n</tool_call>"
)
_XML_NAMES = DialectNames(QWEN3_CODER_XML, XML_TITLE, XML_FORM)
_HERMES_NAMES = DialectNames(HERMES_JSON, HERMES_TITLE, HERMES_FORM)


class ToolCallParser(Protocol):
    """A streaming reply parser: text in, engine events out, the same however it is split."""

    def feed(self, text: str) -> list[EngineEvent]:
        """Parse the next piece of the reply; returns the events it completes."""
        ...

    def finish(self) -> list[EngineEvent]:
        """Flush at the end of the reply."""
        ...


class ToolCallDialect(Protocol):
    """One tool-call format a model was trained on."""

    @property
    def name(self) -> str:
        """The id recorded in sessions and shown by `models info` (`hermes_json`, ...)."""
        ...

    @property
    def title(self) -> str:
        """The format in a few words, for people."""
        ...

    @property
    def trigger(self) -> str:
        """The text that opens a call and wakes the lazy grammar."""
        ...

    def parser(
        self,
        tools: Sequence[ToolSchema],
        *,
        starts_in_reasoning: bool,
        id_prefix: str = "call_",
        strict: bool = False,
    ) -> ToolCallParser:
        """A fresh parser for one reply."""
        ...

    def grammar(
        self, tools: Sequence[ToolSchema], *, leading_newlines: bool = False
    ) -> ToolGrammar:
        """The GBNF grammar of well-formed calls to `tools`, starting at `trigger`."""
        ...

    def render_call(self, call: ToolCall) -> str:
        """A past call's text as the model writes it (raw replies rebuilt from a server's)."""
        ...


@dataclass(frozen=True)
class QwenXmlDialect:
    """Qwen3-Coder XML: `<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE ...`."""

    name: str = QWEN3_CODER_XML
    title: str = XML_TITLE
    trigger: str = CALL_TRIGGER

    def parser(
        self,
        tools: Sequence[ToolSchema],
        *,
        starts_in_reasoning: bool,
        id_prefix: str = "call_",
        strict: bool = False,
    ) -> ToolCallParser:
        """A `QwenXmlToolParser`, with Hermes read alongside (see `toolcall.crossdialect`)."""
        return CrossDialectParser(
            QwenXmlToolParser(
                tools, starts_in_reasoning=starts_in_reasoning, id_prefix=id_prefix, strict=strict
            ),
            HermesToolParser(
                tools, starts_in_reasoning=starts_in_reasoning, id_prefix=id_prefix, strict=strict
            ),
            _XML_NAMES,
            _HERMES_NAMES,
        )

    def grammar(
        self, tools: Sequence[ToolSchema], *, leading_newlines: bool = False
    ) -> ToolGrammar:
        """The XML call grammar (see `toolcall.grammar`)."""
        return tool_call_grammar(tools, leading_newlines=leading_newlines)

    def render_call(self, call: ToolCall) -> str:
        """The XML text, as the Qwen3.5 template writes it."""
        return render_tool_call_xml(call)


@dataclass(frozen=True)
class HermesDialect:
    """Hermes: `<tool_call>\\n{"name": NAME, "arguments": {...}}\\n</tool_call>`."""

    name: str = HERMES_JSON
    title: str = HERMES_TITLE
    trigger: str = CALL_TRIGGER

    def parser(
        self,
        tools: Sequence[ToolSchema],
        *,
        starts_in_reasoning: bool,
        id_prefix: str = "call_",
        strict: bool = False,
    ) -> ToolCallParser:
        """A `HermesToolParser`, with the XML form read alongside (see `toolcall.crossdialect`)."""
        return CrossDialectParser(
            HermesToolParser(
                tools, starts_in_reasoning=starts_in_reasoning, id_prefix=id_prefix, strict=strict
            ),
            QwenXmlToolParser(
                tools, starts_in_reasoning=starts_in_reasoning, id_prefix=id_prefix, strict=strict
            ),
            _HERMES_NAMES,
            _XML_NAMES,
        )

    def grammar(
        self, tools: Sequence[ToolSchema], *, leading_newlines: bool = False
    ) -> ToolGrammar:
        """The JSON call grammar: names from the tool list, arguments per schema."""
        return hermes_call_grammar(tools, leading_newlines=leading_newlines)

    def render_call(self, call: ToolCall) -> str:
        """The Hermes text, as the Qwen2.5 template writes it."""
        return render_tool_call_hermes(call)


XML = QwenXmlDialect()
HERMES = HermesDialect()
DIALECTS: dict[str, ToolCallDialect] = {XML.name: XML, HERMES.name: HERMES}
"""Every dialect by id."""


def dialect_named(name: str) -> ToolCallDialect:
    """The dialect with id `name`; an unknown id raises ValueError listing the known ones."""
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(
            f"unknown tool-call dialect {name!r}: FrogDesk speaks {', '.join(DIALECTS)}"
        ) from None
