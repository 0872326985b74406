"""GBNF grammars that only admit well-formed Hermes calls: JSON objects naming an offered tool."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from frogdesk.engine.chat import ToolSchema
from frogdesk.engine.toolcall.grammar import CALL_TRIGGER, ToolGrammar
from frogdesk.engine.toolcall.values import ToolSpec, tool_specs

_JSON_RULES = r"""json-value ::= json-object | json-array | json-string | json-number | "true" | "false" | "null"
json-object ::= "{" ws ( json-string ws ":" ws json-value ( ws "," ws json-string ws ":" ws json-value )* )? ws "}"
json-array ::= "[" ws ( json-value ( ws "," ws json-value )* )? ws "]"
json-string ::= "\"" json-char* "\""
json-char ::= [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
json-int ::= "-"? ( "0" | [1-9] [0-9]{0,17} )
json-number ::= json-int ( "." [0-9]{1,18} )? ( [eE] [-+]? [0-9]{1,3} )?
ws ::= [ \t\n]{0,4}"""
"""A JSON value grammar; numbers are kept to what a tool can use (18 digits)."""


def _literal(text: str) -> str:
    """A GBNF string literal."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    out = out.replace("\r", "\\r").replace("\t", "\\t")
    return f'"{out}"'


def _value_rule(schema: Mapping[str, Any]) -> str:
    """The GBNF expression for one argument value under its JSON schema."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        return "( " + " | ".join(_literal(json.dumps(v, ensure_ascii=False)) for v in enum) + " )"
    kind = schema.get("type")
    return {
        "string": "json-string",
        "integer": "json-int",
        "number": "json-number",
        "boolean": '( "true" | "false" )',
        "null": '"null"',
        "array": "json-array",
        "object": "json-object",
    }.get(kind if isinstance(kind, str) else "", "json-value")


def _function_rules(index: int, spec: ToolSpec) -> list[str]:
    """Rules for one tool: `{"name": NAME, "arguments": {...}}` with its own keys and types."""
    base = f"fn{index}"
    name = _literal(f'{{"name": {json.dumps(spec.name, ensure_ascii=False)}, "arguments": ')
    rules = [f'{base} ::= {name} {base}-args "}}"']
    if spec.allows_extra or not spec.properties:
        args = "json-object" if spec.allows_extra else '"{" ws "}"'
        rules.append(f"{base}-args ::= {args}")
        return rules
    pairs = []
    for j, (key, schema) in enumerate(spec.properties.items()):
        value = _value_rule(schema if isinstance(schema, Mapping) else {})
        rules.append(f'{base}-kv{j} ::= {_literal(json.dumps(key))} ws ":" ws {value}')
        pairs.append(f"{base}-kv{j}")
    rules.append(f"{base}-kv ::= {' | '.join(pairs)}")
    rules.append(f'{base}-args ::= "{{" ws ( {base}-kv ( ws "," ws {base}-kv )* )? ws "}}"')
    return rules


def hermes_call_grammar(
    tools: Sequence[ToolSchema], *, leading_newlines: bool = False
) -> ToolGrammar:
    """The grammar of one or more Hermes calls (separated by one newline) to the offered tools.

    Keys may come in any order and required ones are not enforced (the tools report what
    they lack); names, keys and value types are. With `leading_newlines` the calls may
    follow up to two newlines (tool_choice `required`).
    """
    specs = list(tool_specs(tools).values())
    if not specs:
        raise ValueError("a tool-call grammar needs at least one tool")
    rules: list[str] = []
    for index, spec in enumerate(specs):
        rules.extend(_function_rules(index, spec))
    lead = "[\\n]{0,2} " if leading_newlines else ""
    head = [
        f'root ::= {lead}call ( "\\n" call )*',
        f"call ::= {_literal(CALL_TRIGGER + chr(10))} function {_literal(chr(10) + '</tool_call>')}",
        f"function ::= {' | '.join(f'fn{i}' for i in range(len(specs)))}",
    ]
    return ToolGrammar("\n".join([*head, *rules, _JSON_RULES]) + "\n")
