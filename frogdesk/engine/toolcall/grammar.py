"""GBNF grammars that only admit well-formed Qwen3-Coder XML calls to the offered tools."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from frogdesk.engine.chat import ToolSchema
from frogdesk.engine.toolcall.values import ToolSpec, tool_specs

PARAM_CLOSE = "</parameter>"
CALL_TRIGGER = "<tool_call>"
"""The text that wakes the lazy grammar."""
_MAX_INT_DIGITS = 18


def _literal(text: str) -> str:
    """A GBNF string literal."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    out = out.replace("\r", "\\r").replace("\t", "\\t")
    return f'"{out}"'


def _char_class_escape(char: str) -> str:
    if char in "]\\^-[":
        return "\\" + char
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, char)


def free_text_rules(name: str, forbidden: str) -> list[str]:
    """Rules for `name`: any text that does not contain `forbidden`.

    A right-linear automaton with one rule per matched prefix of `forbidden`; it relies on
    the first character of `forbidden` not occurring again in it (true for closing tags).
    """
    first = forbidden[0]
    if first in forbidden[1:]:
        raise ValueError(f"{forbidden!r}: its first character repeats")
    rules = []
    for k in range(len(forbidden)):
        options = []
        if k + 1 < len(forbidden):
            options.append(f"{_literal(forbidden[k])} {name}-{k + 1}")
        if k == 0:
            options.append(f"{_literal(first)} {name}-1")
            options.append(f"[^{_char_class_escape(first)}] {name}-0")
        else:
            options.append(f"{_literal(first)} {name}-1")
            excluded = _char_class_escape(forbidden[k]) + _char_class_escape(first)
            options.append(f"[^{excluded}] {name}-0")
        unique = list(dict.fromkeys(options))
        rules.append(f"{name}-{k} ::= ({' | '.join(unique)})?")
    rules.append(f"{name} ::= {name}-0")
    return rules


def _schema_types(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [str(k) for k in kind]
    return []


def value_rule(schema: Mapping[str, Any]) -> str:
    """The GBNF expression for one parameter value, typed where the schema is simple."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        return "(" + " | ".join(_literal(v) for v in enum) + ")"
    kinds = _schema_types(schema)
    if kinds == ["integer"]:
        return f'"-"? [0-9]{{1,{_MAX_INT_DIGITS}}}'
    if kinds == ["number"]:
        return f'"-"? [0-9]{{1,{_MAX_INT_DIGITS}}} ("." [0-9]{{1,{_MAX_INT_DIGITS}}})?'
    if kinds == ["boolean"]:
        return '("true" | "false")'
    if kinds == ["null"]:
        return '"null"'
    return "text"


def _rule_name(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]", "-", text).strip("-").lower() or "x"


def _function_rule(index: int, spec: ToolSpec) -> list[str]:
    """Rules for one function: its parameters in schema order, the required ones mandatory."""
    base = f"fn{index}-{_rule_name(spec.name)}"
    required = set(spec.required)
    parts = [_literal(f"<function={spec.name}>\n")]
    rules = []
    for j, (key, schema) in enumerate(spec.properties.items()):
        pname = f"{base}-p{j}"
        value = value_rule(schema if isinstance(schema, Mapping) else {})
        open_tag = _literal(f"<parameter={key}>\n")
        close_tag = _literal(f"\n{PARAM_CLOSE}\n")
        rules.append(f"{pname} ::= {open_tag} {value} {close_tag}")
        parts.append(pname if key in required else f"{pname}?")
    parts.append(_literal("</function>\n"))
    rules.insert(0, f"{base} ::= {' '.join(parts)}")
    return [base, *rules]


@dataclass(frozen=True)
class ToolGrammar:
    """A grammar for tool calls: GBNF text and its root rule name."""

    text: str
    root: str = "root"


def tool_call_grammar(
    tools: Sequence[ToolSchema], *, leading_newlines: bool = False
) -> ToolGrammar:
    """The grammar of one or more calls (separated by one newline) to the offered tools.

    With `leading_newlines` the calls may follow up to two newlines: the form for a grammar
    that starts right after `</think>` (tool_choice `required`) rather than at `<tool_call>`.
    """
    specs = list(tool_specs(tools).values())
    if not specs:
        raise ValueError("a tool-call grammar needs at least one tool")
    names = []
    rules = []
    for index, spec in enumerate(specs):
        name, *function_rules = _function_rule(index, spec)
        names.append(name)
        rules.extend(function_rules)
    lead = "[\\n]{0,2} " if leading_newlines else ""
    head = [
        f"root ::= {lead}call ({_literal(chr(10))} call)*",
        f"call ::= {_literal(CALL_TRIGGER + chr(10))} function {_literal('</tool_call>')}",
        f"function ::= {' | '.join(names)}",
    ]
    return ToolGrammar("\n".join([*head, *rules, *free_text_rules("text", PARAM_CLOSE)]) + "\n")


def trigger_pattern(trigger: str = CALL_TRIGGER) -> str:
    """The lazy-grammar trigger: the whole reply so far, with the grammar starting at `trigger`.

    llama.cpp matches the pattern against everything generated since the sampler started and
    hands the grammar the text from the first capture group on.
    """
    return r"[\s\S]*?(" + re.escape(trigger) + r")[\s\S]*"
