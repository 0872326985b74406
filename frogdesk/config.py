"""Typed settings: defaults, a TOML file under the user config dir, FROGDESK_* env, flags."""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import tomllib
import types
import typing
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import tomlkit

from frogdesk.durable import atomic_write_text
from frogdesk.errors import FrogDeskError
from frogdesk.logfile import say_notice

DEFAULT_MODEL = "bartowski/FrogNano-4B-2609-GGUF:Q4_K_M"
ENV_PREFIX = "FROGDESK_"


DEFAULT_BASH_ALLOWLIST = (
    "ls",
    "ls *",
    "pwd",
    "cat *",
    "head *",
    "tail *",
    "wc *",
    "grep *",
    "git status",
    "git status --short",
    "git diff",
    "git diff --stat",
    "git log --oneline",
)
"""Read-only commands `untrusted` runs unasked: no option of theirs writes a file (which is
why `git diff *` is not here: `--output=FILE` writes) and none runs a program it is given."""


class ConfigError(FrogDeskError):
    """A setting is unknown or has the wrong type; the message names the key and its source."""


DEFAULT_MAX_STEPS = 150
"""The vendor's step budget of one run; the settings, the loop and the status bar start here."""
DEFAULT_MAX_CONTEXT_TOKENS = 131072
"""The vendor's context budget of one run in tokens."""
DEFAULT_MAX_TOKENS_PER_TURN = 8192
"""The vendor's cap on the tokens of one model reply."""


BackendName = Literal["llama", "openai", "script"]
"""Engine backends: embedded llama.cpp, an OpenAI-compatible endpoint, a replayed script."""
SandboxLevel = Literal["auto", "bwrap", "landlock", "none"]
KvCacheType = Literal["f32", "f16", "bf16", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl"]
FlashAttn = Literal["auto", "on", "off"]
ApprovalMode = Literal["auto", "always", "untrusted", "never"]
APPROVAL_SETTINGS: tuple[str, ...] = typing.get_args(ApprovalMode)
"""Values of `bash_approval`: auto is always at the none level and never elsewhere."""

SECTIONS = ("hub", "engine", "loop", "sandbox", "tui")
"""The tables of config.toml, each read by one package (the model spec and aliases are top
level): `[hub]` downloads, `[engine]` the backend and llama.cpp, `[loop]` the Leaf loop's
budgets and sampling, `[sandbox]` the shell's confinement and approval, `[tui]` the app."""


def _opt(
    default: Any = dataclasses.MISSING,
    *,
    section: str | None,
    key: str | None = None,
    minimum: float | None = None,
    factory: Callable[[], Any] | None = None,
) -> Any:
    """A setting's default with where it lives (`section`, `key` there when not its own
    name) and its smallest sensible value."""
    metadata = {"section": section, "key": key, "minimum": minimum}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass
class Settings:
    """Every FrogDesk option, with its default, its section and bound beside it. Each
    field's docstring is its documentation; its name is the environment variable's
    (`FROGDESK_<NAME>`), the flag's and the key of the old flat config layout."""

    model: str = _opt(DEFAULT_MODEL, section=None)
    """Model spec: a .gguf path, REPO, REPO:QUANT, or an alias from `aliases`."""
    aliases: dict[str, str] = _opt(section=None, factory=dict)
    """Short names for model specs, e.g. {"small" = "bartowski/FrogNano-4B-2609-GGUF:IQ3_M"}."""

    hf_endpoint: str = _opt("", section="hub")
    """Hugging Face Hub endpoint; empty means HF_ENDPOINT or https://huggingface.co."""
    download_min_rate: float = _opt(1024.0, section="hub", minimum=0)
    """Bytes per second a download must average over each download_stall_seconds, or it stops (resumable)."""
    download_stall_seconds: float = _opt(60.0, section="hub", minimum=0.1)
    """Seconds over which download_min_rate is judged; also the longest wait for one read."""
    download_deadline: float = _opt(0.0, section="hub", minimum=0)
    """Seconds one download run may take before it stops (resumable); 0 means none."""

    backend: BackendName = _opt("llama", section="engine")
    """Engine backend: llama (embedded llama.cpp), openai (remote endpoint) or script (replay)."""
    openai_endpoint: str = _opt("", section="engine")
    """Base URL of an OpenAI-compatible server for the openai backend, e.g. http://gpu:8000/v1."""
    openai_model: str = _opt("", section="engine")
    """Model name sent to the openai backend; empty asks the server for its first model."""
    threads: int = _opt(0, section="engine", minimum=0)
    """CPU threads for llama.cpp; 0 picks the number of physical cores."""
    gpu_layers: int = _opt(-1, section="engine", minimum=-1)
    """Layers offloaded to the GPU; -1 lets the memory plan decide, 0 keeps everything on the CPU."""
    context_size: int = _opt(0, section="engine", minimum=0)
    """llama.cpp context in tokens; 0 takes the largest that fits, at most max_context_tokens."""
    flash_attn: FlashAttn = _opt("auto", section="engine")
    """Flash attention in llama.cpp: on, off, or auto (on for a quantized KV cache, which
    needs it, and where measured faster for the model's architecture; true and false are
    read as on and off)."""
    kv_cache_type: KvCacheType = _opt("f16", section="engine")
    """KV cache element type: f16, or q8_0 (half the memory) or q4_0 (a quarter), which turn
    flash attention on under auto and cannot be used with it off."""
    speculative: bool = _opt(True, section="engine")
    """Draft tokens from the conversation's own text and let the model verify several per
    step (llama backend; the output is the same, only faster when the model copies text)."""
    saved_state_max_bytes: int = _opt(2 << 30, section="engine", minimum=0)
    """Bytes of saved engine state kept for resuming sessions without re-reading them, oldest removed first; 0 saves none."""

    max_steps: int = _opt(DEFAULT_MAX_STEPS, section="loop", minimum=1)
    """Step budget of one run (the vendor's evaluation used 150)."""
    max_context_tokens: int = _opt(DEFAULT_MAX_CONTEXT_TOKENS, section="loop", minimum=512)
    """Context budget of one run in tokens (the vendor's evaluation used about 131,072)."""
    max_tokens_per_turn: int = _opt(DEFAULT_MAX_TOKENS_PER_TURN, section="loop", minimum=1)
    """Cap on the tokens of one model reply (the vendor's evaluation used 8,192)."""
    max_time: float = _opt(0.0, section="loop", minimum=0)
    """Wall-clock budget of one run in seconds; 0 means none."""
    temperature: float = _opt(0.6, section="loop", minimum=0)
    """Sampling temperature (the vendor's 0.6)."""
    seed: int = _opt(-1, section="loop", minimum=-1)
    """Sampling seed; -1 picks a fresh one each run."""
    attempts: int = _opt(1, section="loop")
    """Attempts at each task, side by side in their own worktrees (`run --attempts N`)."""
    check_timeout: float = _opt(600.0, section="loop")
    """Seconds the check command may run in each attempt's worktree before it counts as failed."""
    enable_thinking: bool = _opt(True, section="loop")
    """Let the model reason in <think> before acting, as it was trained."""
    project_instructions: bool = _opt(False, section="loop")
    """Append the repository's AGENTS.md to the system prompt (the model was not trained with it)."""

    sandbox: SandboxLevel = _opt("auto", section="sandbox", key="level")
    """Shell isolation: auto, bwrap, landlock or none (none asks before every command)."""
    bash_approval: ApprovalMode = _opt("auto", section="sandbox")
    """Ask before Bash commands: always, untrusted (those outside bash_allowlist), never, or
    auto (always at the none sandbox level, never elsewhere); true and false read as always and auto."""
    bash_allowlist: list[str] = _opt(
        section="sandbox", factory=lambda: list(DEFAULT_BASH_ALLOWLIST)
    )
    """Globs a whole command must match to run unasked under bash_approval = untrusted; a
    command with any shell metacharacter, an absolute path, `..` or `~` never matches."""
    bash_max_timeout: float = _opt(600.0, section="sandbox", minimum=1)
    """Longest a Bash command may run in seconds, whatever timeout the model asks for."""
    bash_max_processes: int = _opt(512, section="sandbox", minimum=0)
    """Processes (threads count) one Bash command may run at once; a command that forks past it is stopped; 0 means no cap."""
    bash_max_memory: int = _opt(0, section="sandbox", minimum=0)
    """Bytes of memory one Bash command may use, all its processes together; 0 means half of the RAM."""
    session_disk_cap: int = _opt(8 << 30, section="sandbox", minimum=0)
    """Bytes a session's commands may add on disk (worktree, private home and tmp); 0 means no cap."""
    sandbox_disk_reserve: int = _opt(512 << 20, section="sandbox", key="disk_reserve", minimum=0)
    """Bytes kept free on every file system a command can write; a command is stopped below it; 0 means none."""
    sandbox_tmpfs_size: int = _opt(64 << 20, section="sandbox", key="tmpfs_size", minimum=0)
    """Size in bytes of each in-memory folder of the bwrap sandbox (/dev/shm, the hidden home, /run); 0 leaves them unsized."""
    sandbox_home_folders: list[str] = _opt(section="sandbox", key="home_folders", factory=list)
    """Folders of your home shown read-only in the sandbox besides the toolchain ones (never credentials)."""
    visible_ignored: list[str] = _opt(
        section="sandbox", factory=lambda: [".venv", "venv", "node_modules"]
    )
    """Ignored directories of the repository shown read-only inside the sandbox."""

    theme: str = _opt("frogdesk-dark", section="tui")
    """TUI theme: frogdesk-dark or frogdesk-light."""
    keys: dict[str, str] = _opt(section="tui", factory=dict)
    """TUI key remaps: binding id -> key, e.g. {"review" = "ctrl+r"}."""
    acknowledged: list[str] = _opt(section="tui", factory=list)
    """Notices the user has seen once (e.g. a model's license ambiguity)."""

    @property
    def flash_attn_choice(self) -> bool | None:
        """`flash_attn` as the engine takes it: True (on), False (off) or None (auto)."""
        return {"on": True, "off": False}.get(self.flash_attn)


PLACES: dict[str, tuple[str | None, str]] = {
    f.name: (f.metadata["section"], f.metadata["key"] or f.name)
    for f in dataclasses.fields(Settings)
}
"""Each option's section (None: top level) and key there."""
_BY_PLACE = {place: name for name, place in PLACES.items()}
MINIMUM: dict[str, float] = {
    f.name: f.metadata["minimum"]
    for f in dataclasses.fields(Settings)
    if f.metadata["minimum"] is not None
}
"""Smallest sensible value of each numeric option."""


def shown_key(name: str) -> str:
    """An option as config.toml spells it: `[engine] threads`, or `model` at the top."""
    section, key = PLACES[name]
    return key if section is None else f"[{section}] {key}"


def option_docs() -> dict[str, str]:
    """Each option's one-line documentation, read from the field docstrings in this module."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(Settings))
    docs: dict[str, str] = {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    for node, nxt in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
        ):
            docs[node.target.id] = str(nxt.value.value)
    return docs


def _field_types() -> dict[str, Any]:
    hints = typing.get_type_hints(Settings)
    return {f.name: hints[f.name] for f in dataclasses.fields(Settings)}


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


CHOICES: dict[str, tuple[str, ...]] = {
    name: typing.get_args(tp)
    for name, tp in typing.get_type_hints(Settings).items()
    if typing.get_origin(tp) is Literal
}
"""Options that take one of a few words (their `Literal` types)."""
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
    types_by_key = _field_types()
    out: dict[str, Any] = {}
    for key, value in data.items():
        where = (shown or {}).get(key, key)
        if key not in types_by_key:
            raise ConfigError(f"{source}: unknown key '{where}'")
        out[key] = _check_type(where, _switch(key, value), types_by_key[key], source)
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
    types_by_key = _field_types()
    out: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name == "FROGDESK_HOME":
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key not in types_by_key:
            continue  # other FROGDESK_* variables (paths, test switches) are not settings
        out[key] = _switch(key, _parse_env(key, raw, types_by_key[key], f"environment {name}"))
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
    return Settings(**merged)


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
