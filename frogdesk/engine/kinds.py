"""The backend kinds FrogDesk knows and what each can do: a value table, no I/O.

Callers ask a kind's abilities (`kind_of(record.backend).local_model`) instead of
comparing its name, so a new kind is one entry here and one maker in `engine.registry`,
the only module that tells `llama`, `openai` and `script` apart by name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BackendKind:
    """One backend kind: its name (as in the settings and session records) and abilities."""

    name: str
    local_model: bool = False
    """Runs a GGUF on this machine, in-process: its model is resolved through the model
    resolver, its memory planned, its warnings shown before loading, its quants switched."""
    remote_endpoint: bool = False
    """Talks to an OpenAI-compatible endpoint the settings name (which reports its model)."""
    replays_script: bool = False
    """Replays a file of recorded replies: a session's model is that file, and each session
    replays its own (a backend loaded for others is never handed to it)."""
    rereads_on_switch: bool = False
    """Moving a session to another model re-reads (prefills) the whole conversation on it,
    a cost priced and announced first."""
    shared_weights: bool = False
    """Parallel attempts share one model in memory: one context of N sequences."""
    drafting: bool = False
    """Speculative drafting (n-gram, MTP) can propose tokens that the model verifies."""


LLAMA = BackendKind(
    "llama",
    local_model=True,
    rereads_on_switch=True,
    shared_weights=True,
    drafting=True,
)
"""llama.cpp in-process on a local GGUF."""
OPENAI = BackendKind("openai", remote_endpoint=True)
"""Any OpenAI-compatible server (llama-server, SGLang, vLLM, LM Studio, Ollama)."""
SCRIPT = BackendKind("script", replays_script=True)
"""Recorded raw replies replayed through the same parser (tests, demos, bug reports)."""

KINDS: dict[str, BackendKind] = {kind.name: kind for kind in (LLAMA, OPENAI, SCRIPT)}
"""Every kind by name, in the order the user is offered them."""
KIND_NAMES: tuple[str, ...] = tuple(KINDS)
"""The names the settings and `--backend` accept."""


def kind_of(name: str) -> BackendKind:
    """The kind called `name`; an unknown name (an old or hand-edited record) gets a kind
    that can do nothing (its maker in `engine.registry` says which names there are)."""
    return KINDS.get(name) or BackendKind(name)
