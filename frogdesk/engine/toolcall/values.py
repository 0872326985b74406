"""Checking a tool call against its JSON schema and coercing raw text values to typed ones."""

from __future__ import annotations

import ast
import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from frogdesk.engine.chat import ToolSchema

_INTEGER = re.compile(r"[+-]?\d+")
_TYPE_ORDER = ("null", "boolean", "integer", "number", "object", "array", "string")
PYTHON_LITERAL = "python_literal"
"""The drift recorded when an array or object value is read as a Python literal."""


class BadValue(ValueError):
    """A raw parameter value does not fit its schema; the message is said to the model."""


class NotJson(ValueError):
    """Text that json.loads refuses, for any reason; the message says why in a few words."""


def load_json(text: str | bytes) -> Any:
    """json.loads, with every way it can refuse model-written text raised as `NotJson`.

    Besides syntax errors, json.loads raises a plain ValueError for an integer over
    Python's digit limit (4,300 by default) and RecursionError for deep nesting; either
    would otherwise escape the parser as a crash instead of a malformed-call error.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotJson(exc.msg) from None
    except UnicodeDecodeError:  # bytes only
        raise NotJson("it is not UTF-8") from None
    except ValueError:
        raise NotJson(f"a number has over {sys.get_int_max_str_digits():,} digits") from None
    except RecursionError:
        raise NotJson("it is nested too deeply") from None


@dataclass(frozen=True)
class ToolSpec:
    """One offered tool: its name and the JSON schema of its parameters."""

    name: str
    parameters: Mapping[str, Any]

    @cached_property
    def properties(self) -> Mapping[str, Any]:
        """Parameter name -> JSON schema."""
        props = self.parameters.get("properties") or {}
        return props if isinstance(props, Mapping) else {}

    @cached_property
    def required(self) -> list[str]:
        """Names of the required parameters, in schema order."""
        req = self.parameters.get("required") or []
        return [str(name) for name in req] if isinstance(req, list) else []

    @property
    def allows_extra(self) -> bool:
        """Whether parameters outside `properties` are accepted (only if the schema says so)."""
        return self.parameters.get("additionalProperties") is True


def tool_specs(tools: Sequence[ToolSchema]) -> dict[str, ToolSpec]:
    """Index OpenAI function-tool schemas (or bare function objects) by function name."""
    specs: dict[str, ToolSpec] = {}
    for tool in tools:
        function = tool.get("function", tool)
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            continue
        params = function.get("parameters") or {}
        specs[function["name"]] = ToolSpec(
            function["name"], params if isinstance(params, Mapping) else {}
        )
    return specs


def _schema_types(schema: Mapping[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [str(t) for t in declared]
    found: list[str] = []
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or []:
            if isinstance(sub, Mapping):
                found.extend(t for t in _schema_types(sub) if t not in found)
    return found


def is_text_schema(schema: Any) -> bool:
    """Whether a value under `schema` may be any text (a string, or no declared type)."""
    if not isinstance(schema, Mapping):
        return True
    kinds = _schema_types(schema)
    return not kinds or "string" in kinds


def _json_shaped(value: Any) -> bool:
    """Whether a Python literal holds only what JSON can say (str keys, finite numbers)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_shaped(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_shaped(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool)


def _python_literal(text: str, expected: type) -> Any:
    """`text` as a Python list or dict literal (`['a']`, `{'k': None}`), or None."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, expected) and _json_shaped(value) else None


def _integer(text: str, noun: str) -> int:
    """An integer literal as int; one over Python's digit limit is a BadValue, not a crash."""
    try:
        return int(text)
    except ValueError:
        digits = len(text.lstrip("+-"))
        limit = sys.get_int_max_str_digits()
        raise BadValue(
            f"must be {noun} of at most {limit:,} digits, got {digits:,} digits"
        ) from None


def _coerce_one(raw: str, kind: str, drifts: list[str] | None = None) -> Any:
    text = raw.strip()
    if kind == "string":
        return raw
    if kind == "null":
        if text.lower() in ("null", "none"):
            return None
        raise BadValue(f"must be null, got {text!r}")
    if kind == "boolean":
        if text.lower() == "true":
            return True
        if text.lower() == "false":
            return False
        raise BadValue(f"must be true or false, got {text!r}")
    if kind == "integer":
        if _INTEGER.fullmatch(text):
            return _integer(text, "an integer")
        raise BadValue(f"must be an integer, got {text!r}")
    if kind == "number":
        if _INTEGER.fullmatch(text):
            return _integer(text, "a number")
        try:
            number = float(text)
        except ValueError:
            raise BadValue(f"must be a number, got {text!r}") from None
        if not math.isfinite(number):
            raise BadValue(f"must be a finite number, got {text!r}")
        return number
    if kind in ("object", "array"):
        expected = dict if kind == "object" else list
        try:
            value = load_json(text)
        except NotJson as exc:
            literal = _python_literal(text, expected)
            if literal is None:
                raise BadValue(f"must be a JSON {kind}, but it is not valid JSON ({exc})") from None
            if drifts is not None:
                drifts.append(PYTHON_LITERAL)
            return literal
        if not isinstance(value, expected):
            raise BadValue(f"must be a JSON {kind}, got {type(value).__name__}")
        return value
    raise BadValue(f"has an unsupported schema type {kind!r}")


def coerce_value(raw: str, schema: Mapping[str, Any], drifts: list[str] | None = None) -> Any:
    """The typed value of `raw` under `schema`; raises `BadValue` when it does not fit.

    Strings stay verbatim; without a declared type, JSON is tried and the text kept otherwise.
    An array or object that is not JSON but a Python literal of that shape is read as one,
    and `PYTHON_LITERAL` is appended to `drifts`.
    """
    kinds = _schema_types(schema)
    if not kinds:
        try:
            return load_json(raw)
        except NotJson:
            return raw
    if len(kinds) == 1:
        return _coerce_one(raw, kinds[0], drifts)
    errors: list[str] = []
    for kind in sorted(kinds, key=lambda k: _TYPE_ORDER.index(k) if k in _TYPE_ORDER else 99):
        try:
            return _coerce_one(raw, kind, drifts)
        except BadValue as exc:
            errors.append(str(exc))
    raise BadValue(" or ".join(errors))


def build_arguments(
    spec: ToolSpec,
    raw_params: Sequence[tuple[str, str]],
    *,
    strict: bool = True,
    drifts: list[str] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Coerce `(key, raw text)` pairs for `spec`; returns the arguments and the problems found.

    With `strict` False nothing is a problem: unknown parameters and values that do not fit
    their type are kept as text, a repeated parameter keeps its last value, and required
    parameters are not checked (the tool itself reports what it lacks). Recovered drifts
    (a Python literal) are appended to `drifts`.
    """
    problems: list[str] = []
    arguments: dict[str, Any] = {}
    properties = spec.properties
    for key, raw in raw_params:
        if key in arguments and strict:
            problems.append(f"parameter '{key}' is given more than once")
            continue
        schema = properties.get(key)
        if schema is None:
            if spec.allows_extra or not strict:
                arguments[key] = raw
                continue
            known = ", ".join(properties) or "none"
            problems.append(f"unknown parameter '{key}' (its parameters are: {known})")
            continue
        try:
            arguments[key] = coerce_value(
                raw, schema if isinstance(schema, Mapping) else {}, drifts
            )
        except BadValue as exc:
            if strict:
                problems.append(f"parameter '{key}' {exc}")
            else:
                arguments[key] = raw
    if strict:
        for key in spec.required:
            if key not in arguments and not any(key == k for k, _ in raw_params):
                problems.append(f"missing required parameter '{key}'")
    return arguments, problems


def check_arguments(spec: ToolSpec, arguments: Mapping[str, Any]) -> list[str]:
    """Problems with already-typed arguments (unknown or missing parameters)."""
    problems: list[str] = []
    for key in arguments:
        if key not in spec.properties and not spec.allows_extra:
            known = ", ".join(spec.properties) or "none"
            problems.append(f"unknown parameter '{key}' (its parameters are: {known})")
    problems.extend(
        f"missing required parameter '{key}'" for key in spec.required if key not in arguments
    )
    return problems


def strip_one_newline(value: str) -> str:
    """Drop the one newline the format adds on each side of a value."""
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value
