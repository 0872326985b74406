"""Moving a session to another quant or model: price it, announce it, then carry the conversation."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from frogdesk.config import Settings
from frogdesk.engine.estimate import estimate_prompt_tokens
from frogdesk.engine.kinds import kind_of
from frogdesk.engine.registry import reopened_like
from frogdesk.leaf.schemas import tool_schemas
from frogdesk.models.move_cost import plan_switch
from frogdesk.models.switch_plan import SwitchPlan
from frogdesk.paths import AppPaths
from frogdesk.sessions.active import ActiveSession, shown_status
from frogdesk.sessions.errors import SessionBusyError, SessionClosedError, SwitchRefusedError
from frogdesk.sessions.factories import BackendFactory
from frogdesk.sessions.operator import NOBODY, Operator
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore, Transcript


class SessionHost(Protocol):
    """The part of the session service a switch uses: the store, the backends, reopening."""

    paths: AppPaths
    settings: Settings
    store: SessionStore
    backend_factory: BackendFactory

    def open(
        self,
        session_id: str,
        *,
        record: SessionRecord | None = None,
        overrides: dict[str, Any] | None = None,
        operator: Operator = NOBODY,
    ) -> ActiveSession:
        """Reopen a stored session to run it, `operator` told how its state was read."""
        ...


def measured_prefill_rate(transcript: Transcript) -> float | None:
    """Prompt tokens per second of the latest step that evaluated some, or None."""
    for step in reversed(transcript.steps):
        usage = step.usage
        if usage is not None and usage.evaluated_tokens > 0 and usage.prefill_seconds > 0:
            return usage.evaluated_tokens / usage.prefill_seconds
    return None


@dataclass
class ModelSwitch:
    """A priced switch: show `announcement()` first, then `perform()` it.

    Nothing is loaded and nothing is written until `perform()`.
    """

    service: SessionHost
    session_id: str
    plan: SwitchPlan
    active: ActiveSession | None = None
    evaluated: int = 0
    """Tokens the new model evaluated to take over the conversation (after perform)."""
    notes: list[str] = field(default_factory=list)

    def announcement(self) -> str:
        """The cost line, and the warnings of the new model, for the user."""
        return self.plan.announcement()

    def perform(
        self, cancel: threading.Event | None = None, operator: Operator = NOBODY
    ) -> ActiveSession:
        """Load the new model, re-read the conversation on it, and record it on the session.

        The transcript is kept as it is; on failure the session keeps its old model.
        """
        store = self.service.store
        record = store.get(self.session_id)
        previous = record.model
        active = self.active
        opened_here = active is None
        record.model = self.plan.spec
        try:
            if active is not None:
                old = active.backend
                active.backend = reopened_like(old, self.plan.path) or self.service.backend_factory(
                    record, active.settings, len(active.transcript.steps)
                )
                old.close()
                active.record = record
            else:
                active = self.service.open(record.id, record=record, operator=operator)
            messages = active.transcript.conversation()
            rereads = kind_of(record.backend).rereads_on_switch
            prefill = getattr(active.backend, "prefill", None) if rereads else None
            if prefill is not None:
                try:
                    self.evaluated = int(prefill(messages, active.tools, cancel=cancel))
                except ValueError as exc:
                    if opened_here:
                        active.close()
                    raise SwitchRefusedError(f"{self.plan.path.name}: {exc}") from None
        except BaseException:
            record.model = previous
            store.update(record)
            raise
        store.update(record)
        return active


def price_switch(service: SessionHost, session: str | ActiveSession, spec: str) -> ModelSwitch:
    """Resolve and price moving `session` (an id or a running session) to the model `spec`."""
    active = session if isinstance(session, ActiveSession) else None
    record = active.record if active is not None else service.store.get(str(session))
    if not kind_of(record.backend).local_model:
        raise SwitchRefusedError(
            f"session {record.id} runs on the {record.backend} backend; only llama sessions "
            "switch models"
        )
    if active is None:
        if record.status == "discarded":
            raise SessionClosedError(f"session {record.id} was discarded; start a new one")
        if shown_status(record) == "running":
            raise SessionBusyError(f"session {record.id} is running (pid {record.pid})")
        transcript = service.store.read_transcript(record.id)
        if transcript.ended_with_answer():
            raise SessionClosedError(
                f"session {record.id} already ended with a final answer; send it back first"
            )
        tokens = estimate_prompt_tokens(transcript.conversation(), tool_schemas())
    else:
        transcript = active.transcript
        tokens = active.backend.count_tokens(transcript.conversation(), active.tools)
    settings = active.settings if active is not None else service.settings
    plan = plan_switch(
        spec, settings, tokens, measured_prefill_rate(transcript), paths=service.paths
    )
    return ModelSwitch(service, record.id, plan, active)
