"""Helpers of the integration tests: a service on the real script backend that records prompts."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from frogdesk import config
from frogdesk.engine.chat import (
    Backend,
    BackendInfo,
    EngineEvent,
    GenerationSettings,
    Message,
    ToolSchema,
)
from frogdesk.paths import AppPaths
from frogdesk.sessions.parts import default_backend
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.service import SessionService


@dataclass
class Prompts:
    """Every message list a backend of the service was asked to continue, in order."""

    seen: list[list[Message]] = field(default_factory=list)


class RecordingBackend:
    """The real backend of a session, with each prompt it gets written down first."""

    def __init__(self, inner: Backend, prompts: Prompts) -> None:
        self.inner = inner
        self.prompts = prompts

    @property
    def info(self) -> BackendInfo:
        return self.inner.info

    def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> Iterator[EngineEvent]:
        self.prompts.seen.append(list(messages))
        return self.inner.generate(messages, tools, settings, cancel)

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> int:
        return self.inner.count_tokens(messages, tools)

    def close(self) -> None:
        self.inner.close()


def recording_service(**overrides: object) -> tuple[SessionService, Prompts]:
    """A SessionService in the test's FROGDESK_HOME whose backends record their prompts."""
    paths = AppPaths.default()
    loaded = config.load(paths.config_file, environ={}, overrides=dict(overrides))
    prompts = Prompts()

    def factory(record: SessionRecord, settings: config.Settings, replies_done: int = 0) -> Backend:
        return RecordingBackend(default_backend(record, settings, replies_done), prompts)

    return SessionService(paths, loaded, backend_factory=factory), prompts


def script_file(path: Path, replies: list[str]) -> Path:
    """A script of raw replies for the script backend."""
    import json

    path.write_text("".join(json.dumps({"text": r}) + "\n" for r in replies), encoding="utf-8")
    return path
