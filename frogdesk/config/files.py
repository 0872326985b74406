"""Reading and writing settings: defaults, a TOML file in sections under the user config
dir, FROGDESK_* environment variables and flags, each checked with a message naming the key
and where it came from."""

from __future__ import annotations

import math
import os
import tomllib
import types
import typing
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any, Literal

import tomlkit

from frogdesk.config.errors import ConfigError
from frogdesk.config.settings import (
    CHOICES,
    MINIMUM,
    OPTIONS,
    PLACES,
    SECTIONS,
    Settings,
    shown_key,
)
from frogdesk.durable import atomic_write_text
from frogdesk.logfile import say_notice

ENV_PREFIX = "FROGDESK_"
_BY_PLACE = {place: name for name, place in PLACES.items()}


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is dict:
        return "a table of strings"
    if origin is list:
        return "a list of strings"
    if origin is Literal:
        return "a string"
    if isinstance(tp, type):
        names = {"str": "a string", "int": "an integer", "float": "a number", "bool": "a boolean"}
        return names[tp.__name__]
    return str(tp)


def _check_type(key: str, value: Any, tp: Any, source: str) -> Any:
    origin = typing.get_origin(tp)
    ok: bool
    if origin is dict:
        ok = isinstance(value, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        )
        value = dict(value) if ok else value
    elif origin is list:
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    elif tp is bool:
        ok = isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif tp is str or origin is Literal:
        ok = isinstance(value, str)
    elif isinstance(tp, types.UnionType):
        ok = True
    else:
        ok = True
    if not ok:
        raise ConfigError(
            f"{source}: '{key}' must be {_type_name(tp)}, got {type(value).__name__} {value!r}"
        )
    return value


def _parse_env(key: str, raw: str, tp: Any, source: str) -> Any:
    origin = typing.get_origin(tp)
    try:
        if tp is bool:
            lowered = raw.strip().lower()
            if lowered in {"1", "true", "yes", "on"}:
                return True
            if lowered in {"0", "false", "no", "off"}:
                return False
            raise ValueError(raw)
        if tp is int:
            return int(raw)
        if tp is float:
            return float(raw)
        if origin is list:
            return [part.strip() for part in raw.split(",") if part.strip()]
        if origin is dict:
            pairs = [part.split("=", 1) for part in raw.split(",") if part.strip()]
            return {k.strip(): v.strip() for k, v in pairs}
    except ValueError:
        raise ConfigError(f"{source}: '{key}' must be {_type_name(tp)}, got {raw!r}") from None
    return raw


SWITCHES = frozenset({"flash_attn"})
"""Word options that were booleans once: true and false (and their environment spellings)
still mean on and off."""
_SWITCH_WORDS = {"1": "on", "true": "on", "yes": "on", "0": "off", "false": "off", "no": "off"}


def _switch(key: str, value: Any) -> Any:
    """An old boolean spelling of a switch option as its word; any other value as it is."""
    if key == "bash_approval":
        return _old_approval(value)
    if key not in SWITCHES:
        return value
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, str):
        lowered = value.strip().lower()
        return _SWITCH_WORDS.get(lowered, lowered)
    return value


def _old_approval(value: Any) -> Any:
    """`bash_approval` was a boolean (ask even when sandboxed): true is always, false auto."""
    if isinstance(value, bool):
        return "always" if value else "auto"
    if isinstance(value, str):
        lowered = value.strip().lower()
        word = _SWITCH_WORDS.get(lowered)
        return lowered if word is None else ("always" if word == "on" else "auto")
    return value


def _check_value(key: str, value: Any, source: str, shown: str | None = None) -> None:
    where = shown or key
    if key in CHOICES and value not in CHOICES[key]:
        allowed = ", ".join(CHOICES[key])
        raise ConfigError(f"{source}: '{where}' must be one of {allowed}, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{source}: '{where}' must be a finite number, got {value!r}")
    if key in MINIMUM and value < MINIMUM[key]:
        raise ConfigError(f"{source}: '{where}' must be at least {MINIMUM[key]:g}, got {value!r}")


def validate(
    data: Mapping[str, Any], source: str, shown: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Check keys, types and values of a mapping of options by name; return the coerced
    values. `shown`: how each key is spelt where it came from (`[engine] threads`)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        where = (shown or {}).get(key, key)
        if key not in OPTIONS:
            raise ConfigError(f"{source}: unknown key '{where}'")
        out[key] = _check_type(where, _switch(key, value), OPTIONS[key].type, source)
        _check_value(key, out[key], source, where)
    return out


def _by_name(data: Mapping[str, Any], path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """A config file's options by name, from its sections and from old flat keys (a key
    given both ways takes the section's value); how each was spelt. Flat keys of sectioned
    options are named in one notice."""
    found: dict[str, Any] = {}
    shown: dict[str, str] = {}
    flat: list[str] = []
    for key, value in data.items():
        if key in SECTIONS and isinstance(value, Mapping):
            for inner, item in value.items():
                name = _BY_PLACE.get((key, inner))
                if name is None:
                    raise ConfigError(f"{path}: unknown key '{inner}' in [{key}]")
                found[name], shown[name] = item, f"[{key}] {inner}"
            continue
        if key in PLACES and PLACES[key][0] is not None:
            flat.append(key)
        found.setdefault(key, value)
        shown.setdefault(key, key)
    if flat:
        moves = ", ".join(f"{k} -> {shown_key(k)}" for k in flat)
        # said once to whoever listens, however often the file is read (the notices' rule)
        say_notice(f"{path}: read old top-level keys in their sections ({moves}); move them there")
    return found, shown


def read_file(path: Path) -> dict[str, Any]:
    """The validated options in a TOML file; {} when the file does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    found, shown = _by_name(data, path)
    return validate(found, str(path), shown)


def read_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """Options set as FROGDESK_<NAME> environment variables."""
    out: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name == "FROGDESK_HOME":
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key not in OPTIONS:
            continue  # other FROGDESK_* variables (paths, test switches) are not settings
        out[key] = _switch(key, _parse_env(key, raw, OPTIONS[key].type, f"environment {name}"))
        _check_value(key, out[key], f"environment {name}")
    return out


def load(
    path: Path,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Defaults, then the file, then the environment, then explicit overrides (flags)."""
    merged: dict[str, Any] = {}
    merged.update(read_file(path))
    merged.update(read_env(os.environ if environ is None else environ))
    merged.update(validate({k: v for k, v in (overrides or {}).items() if v is not None}, "flag"))
    return Settings.of(**merged)


def save_option(path: Path, key: str, value: Any) -> None:
    """Write one option into its section of the TOML file (moving it out of the old flat
    layout if it was there), keeping the user's comments and layout."""
    validate({key: value}, str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        doc = tomlkit.document()
    section, inner = PLACES[key]
    if section is None:
        doc[key] = value
    else:
        if key in doc and not (key == section and isinstance(doc[key], Mapping)):
            del doc[key]  # the old flat spelling
        if section not in doc:
            doc[section] = tomlkit.table()
        table = doc[section]
        assert isinstance(table, MutableMapping)
        table[inner] = value
    atomic_write_text(path, tomlkit.dumps(doc))
