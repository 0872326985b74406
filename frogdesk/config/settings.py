"""Every FrogDesk option: the top-level model spec and aliases, and one section per part.

In memory an option is reached through its section (`settings.engine.threads`); outside,
each option also has one flat name (`threads`): the environment variable `FROGDESK_THREADS`,
the flag, the key of the old flat file layout and the key in a session's record. `OPTIONS`
maps each name to its place.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from frogdesk.config.engine import EngineSettings
from frogdesk.config.hub import HubSettings
from frogdesk.config.loop import LoopSettings
from frogdesk.config.option import option
from frogdesk.config.sandbox import SandboxSettings
from frogdesk.config.tui import TuiSettings

DEFAULT_MODEL = "bartowski/FrogNano-4B-2609-GGUF:Q4_K_M"

SECTION_TYPES: dict[str, type[Any]] = {
    kind.SECTION: kind
    for kind in (HubSettings, EngineSettings, LoopSettings, SandboxSettings, TuiSettings)
}
SECTIONS = tuple(SECTION_TYPES)
"""The tables of config.toml, each read by one package (the model spec and aliases are top
level): `[hub]` downloads, `[engine]` the backend and llama.cpp, `[loop]` the Leaf loop's
budgets and sampling, `[sandbox]` the shell's confinement and approval, `[tui]` the app."""


@dataclass
class Settings:
    """The model spec, the aliases, and a section for each part of FrogDesk."""

    model: str = option(DEFAULT_MODEL)
    """Model spec: a .gguf path, REPO, REPO:QUANT, or an alias from `aliases`."""
    aliases: dict[str, str] = option(factory=dict)
    """Short names for model specs, e.g. {"small" = "bartowski/FrogNano-4B-2609-GGUF:IQ3_M"}."""

    hub: HubSettings = field(default_factory=HubSettings)
    engine: EngineSettings = field(default_factory=EngineSettings)
    loop: LoopSettings = field(default_factory=LoopSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    tui: TuiSettings = field(default_factory=TuiSettings)

    @classmethod
    def of(cls, **options: Any) -> Settings:
        """The defaults with `options` given by their flat names (`threads=2`); an unknown
        name is a TypeError, as for any call. Values are taken as given: `validate` checks
        what comes from outside."""
        return cls().replaced(**options)

    def replaced(self, **options: Any) -> Settings:
        """A copy with `options` changed, by their flat names."""
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise TypeError(f"unknown settings: {', '.join(unknown)}")
        top = {name: value for name, value in options.items() if OPTIONS[name].section is None}
        sections = {
            section: dataclasses.replace(  # a copy even when unchanged: copies share nothing
                getattr(self, section),
                **{
                    OPTIONS[name].key: value
                    for name, value in options.items()
                    if OPTIONS[name].section == section
                },
            )
            for section in SECTIONS
        }
        return dataclasses.replace(self, **top, **sections)

    def get(self, name: str) -> Any:
        """One option's value by its flat name."""
        place = OPTIONS[name]
        holder = self if place.section is None else getattr(self, place.section)
        return getattr(holder, place.key)

    def options(self) -> dict[str, Any]:
        """Every option by its flat name (as a session's record keeps them)."""
        return {name: self.get(name) for name in OPTIONS}


class Option(NamedTuple):
    """Where an option lives and what it takes."""

    section: str | None
    """Its table in config.toml (None: the top level)."""
    key: str
    """Its key there, and its field in the section."""
    type: Any
    minimum: float | None


def _holders() -> list[tuple[str | None, type[Any]]]:
    """Each class that holds options, with its section (None: the top level)."""
    return [(None, Settings), *SECTION_TYPES.items()]


def _options() -> dict[str, Option]:
    out: dict[str, Option] = {}
    for section, kind in _holders():
        hints = typing.get_type_hints(kind)
        for f in dataclasses.fields(kind):
            if f.name in SECTION_TYPES and kind is Settings:
                continue
            name = f.metadata["name"] or f.name
            out[name] = Option(section, f.name, hints[f.name], f.metadata["minimum"])
    return out


OPTIONS: dict[str, Option] = _options()
"""Each option by its flat name."""
PLACES: dict[str, tuple[str | None, str]] = {
    name: (place.section, place.key) for name, place in OPTIONS.items()
}
"""Each option's section (None: top level) and key there."""
MINIMUM: dict[str, float] = {
    name: place.minimum for name, place in OPTIONS.items() if place.minimum is not None
}
"""Smallest sensible value of each numeric option."""
CHOICES: dict[str, tuple[str, ...]] = {
    name: typing.get_args(place.type)
    for name, place in OPTIONS.items()
    if typing.get_origin(place.type) is Literal
}
"""Options that take one of a few words (their `Literal` types)."""


def shown_key(name: str) -> str:
    """An option as config.toml spells it: `[engine] threads`, or `model` at the top."""
    section, key = PLACES[name]
    return key if section is None else f"[{section}] {key}"


def option_docs() -> dict[str, str]:
    """Each option's one-line documentation by its flat name, read from the field docstrings
    of the sections."""
    by_place = {(place.section, place.key): name for name, place in OPTIONS.items()}
    docs: dict[str, str] = {}
    for section, kind in _holders():
        tree = ast.parse(inspect.getsource(kind))
        body = tree.body[0].body  # type: ignore[attr-defined]
        for node, nxt in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and (section, node.target.id) in by_place
            ):
                docs[by_place[(section, node.target.id)]] = str(nxt.value.value)
    return docs
