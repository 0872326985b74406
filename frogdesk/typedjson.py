"""Dataclasses read back from JSON with every field checked against its type.

A record FrogDesk wrote may come back damaged (a crash of another program, a hand edit, a
disk error) or from another version. `build` turns parsed JSON into the dataclass only when
every value has the type the field declares, and otherwise raises `RecordTypeError` naming
the field, so a damaged file is reported where it is read instead of failing later, far
from the file, when the wrong value is used.

Keys the dataclass does not know are ignored (a newer version may have added them);
fields left out take their defaults, and a required field left out is an error.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from frogdesk.errors import RecordTypeError

T = TypeVar("T")


_HINTS: dict[type, dict[str, Any]] = {}
"""Each dataclass's field types, resolved once."""


def build(cls: type[T], data: object, where: str = "") -> T:
    """An instance of the dataclass `cls` from `data` (parsed JSON), every field checked.

    `where` names the value in messages (`files[2].before`); the top level is unnamed.
    """
    if not isinstance(data, Mapping):
        raise RecordTypeError(f"{where or 'the record'} is {_kind(data)}, not an object")
    hints = _HINTS.get(cls) or _HINTS.setdefault(cls, typing.get_type_hints(cls))
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        name = f"{where}.{f.name}" if where else f.name
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise RecordTypeError(f"{name} is missing")
            continue
        values[f.name] = _value(hints[f.name], data[f.name], name)
    return cls(**values)


def _value(hint: Any, value: object, name: str) -> Any:
    """`value` as the type `hint` describes, or RecordTypeError."""
    if hint is Any:
        return value
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        deeper: RecordTypeError | None = None
        for option in args:
            try:
                return _value(option, value, name)
            except RecordTypeError as exc:
                if not str(exc).startswith(f"{name} is "):
                    deeper = exc  # the value has this option's shape; a part of it is wrong
        raise deeper or RecordTypeError(f"{name} is {_kind(value)}, not {_describe(hint)}")
    if origin is typing.Literal:
        if any(type(value) is type(a) and value == a for a in args):
            return value
        raise RecordTypeError(f"{name} is {_short(value)}, not one of {', '.join(map(repr, args))}")
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise RecordTypeError(f"{name} is {_kind(value)}, not a list")
        item = args[0] if args else Any
        items = [_value(item, v, f"{name}[{i}]") for i, v in enumerate(value)]
        return items if origin is list else tuple(items)
    if origin is dict:
        if not isinstance(value, dict):
            raise RecordTypeError(f"{name} is {_kind(value)}, not an object")
        key_hint, item_hint = args if args else (str, Any)
        if key_hint is not str:
            raise TypeError(f"{name}: JSON object keys are strings, not {key_hint}")
        return {k: _value(item_hint, v, f"{name}[{k!r}]") for k, v in value.items()}
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return build(hint, value, name)
    if hint is type(None):
        if value is None:
            return None
    elif hint is float:
        # JSON writes a whole float as an integer in some writers; a bool is not a number
        if type(value) in (int, float):
            return float(typing.cast(float, value))
    elif hint in (str, int, bool):
        if type(value) is hint:
            return value
    else:
        raise TypeError(f"{name}: no JSON reading for {hint!r}")
    raise RecordTypeError(f"{name} is {_kind(value)}, not {_describe(hint)}")


def _describe(hint: Any) -> str:
    """A type as a message names it."""
    names = {
        str: "text",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        dict: "an object",
        list: "a list",
    }
    if hint is type(None):
        return "null"
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(hint))
    return names.get(typing.get_origin(hint) or hint, getattr(hint, "__name__", str(hint)))


def _kind(value: object) -> str:
    """What a JSON value is, for a message (never its whole text)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _short(value: object) -> str:
    """A value as a message quotes it, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
