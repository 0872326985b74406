"""The Leaf agent loop: plain synchronous code driving any Backend through the five tools."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from frogdesk.config import (
    DEFAULT_MAX_CONTEXT_TOKENS,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOKENS_PER_TURN,
    LoopSettings,
)
from frogdesk.engine.chat import (
    Backend,
    ContentDelta,
    Decoded,
    GenerationSettings,
    Message,
    ReasoningDelta,
    Reply,
    ToolCall,
    ToolCallError,
    ToolCallEvent,
    ToolSchema,
    Usage,
)
from frogdesk.leaf.errors import ToolInfrastructureError
from frogdesk.leaf.events import (
    ExitReason,
    LoopEvent,
    Notice,
    RunFinished,
    StepStarted,
    StepUsage,
    ToolFinished,
    ToolStarted,
)
from frogdesk.leaf.records import LoopResult, Observation, StepRecord, step_of_reply
from frogdesk.leaf.runner import ToolOutcome

REPEAT_NOTICE_AFTER = 3
"""Identical steps in a row (same calls, same observations) before the user is told."""
STEP_SEED_STRIDE = 1 << 16
"""How far apart two steps' sampling seeds are: more than the tokens of one reply, whose own
draws move the seed on by one per token (see engine.llama.decode.sampling)."""


def step_seed(seed: int | None, step: int) -> int | None:
    """The sampling seed of one step's reply in a seeded run: the run's seed moved on by the
    step, so the run is reproducible while its replies do not all draw the same random
    numbers (a reply on almost the same conversation would otherwise repeat itself)."""
    return None if seed is None else (seed + step * STEP_SEED_STRIDE) & 0x7FFFFFFF


class ToolRunnerLike(Protocol):
    """What the loop needs from a tool runner."""

    def run(self, call: ToolCall, cancel: threading.Event | None = None) -> ToolOutcome:
        """Run one call and return its observation."""
        ...


@dataclass(frozen=True)
class LoopConfig:
    """Budgets and sampling of one run (the vendor's evaluation values by default)."""

    max_steps: int = DEFAULT_MAX_STEPS
    max_context: int = DEFAULT_MAX_CONTEXT_TOKENS
    max_tokens_per_turn: int = DEFAULT_MAX_TOKENS_PER_TURN
    max_time: float = 0.0
    """Wall-clock budget in seconds; 0 means none."""
    temperature: float | None = 0.6
    seed: int | None = None
    enable_thinking: bool = True
    repeat_notice_after: int = REPEAT_NOTICE_AFTER
    stop_after_repeats: int = 0
    """Identical steps in a row that end the run as `stuck`; 0 never (the vendor's loop)."""

    @classmethod
    def from_settings(cls, settings: LoopSettings) -> LoopConfig:
        """The loop budgets and sampling the user's `[loop]` settings ask for."""
        return cls(
            max_steps=settings.max_steps,
            max_context=settings.max_context_tokens,
            max_tokens_per_turn=settings.max_tokens_per_turn,
            max_time=settings.max_time,
            temperature=settings.temperature,
            seed=None if settings.seed < 0 else settings.seed,
            enable_thinking=settings.enable_thinking,
            stop_after_repeats=settings.stop_after_repeats,
        )


class _Exit(Exception):
    """Raised inside the loop to end the run with a Leaf exit reason."""

    def __init__(self, reason: ExitReason, error: str = "") -> None:
        super().__init__(reason)
        self.reason: ExitReason = reason
        self.error = error


class _StopSignal:
    """Joins the caller's cancel event and the wall-time budget into one event for the work."""

    def __init__(self, cancel: threading.Event | None, deadline: float | None) -> None:
        self.event = threading.Event()
        self.reason: ExitReason | None = None
        self._cancel = cancel
        self._deadline = deadline
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="leaf-stop-watch", daemon=True)
        if cancel is not None or deadline is not None:
            self._thread.start()

    def _watch(self) -> None:
        while not self._done.is_set():
            if self._cancel is not None and self._cancel.wait(0.05):
                self.trip("cancelled")
                return
            if self._cancel is None:
                self._done.wait(0.05)
            if self._deadline is not None and time.monotonic() >= self._deadline:
                self.trip("max_time")
                return

    def trip(self, reason: ExitReason) -> None:
        """Stop the work in flight for `reason` (first reason wins)."""
        if self.reason is None:
            self.reason = reason
        self.event.set()

    def check(self) -> None:
        """Raise the exit when stopped."""
        if self._cancel is not None and self._cancel.is_set():
            self.trip("cancelled")
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self.trip("max_time")
        if self.reason is not None:
            raise _Exit(self.reason)

    def close(self) -> None:
        """Stop watching."""
        self._done.set()


def _signature(step: StepRecord) -> str:
    calls = [(c.name, c.arguments) for c in step.assistant.tool_calls]
    observations = [o.observation for o in step.observations]
    return json.dumps([calls, observations], sort_keys=True, default=str)


class LeafLoop:
    """One run of the loop over a message list; `run()` returns the LoopResult."""

    def __init__(
        self,
        backend: Backend,
        tools: Sequence[ToolSchema],
        runner: ToolRunnerLike,
        config: LoopConfig,
        messages: list[Message],
        *,
        cancel: threading.Event | None = None,
        on_event: Callable[[LoopEvent], None] | None = None,
        on_step: Callable[[StepRecord], None] | None = None,
        prior_steps: Sequence[StepRecord] = (),
    ) -> None:
        self.backend = backend
        self.tools = list(tools)
        self.runner = runner
        self.config = config
        self.messages = messages
        self.cancel = cancel
        self.on_event = on_event
        self.on_step = on_step
        self.steps: list[StepRecord] = list(prior_steps)
        self.context_tokens = 0
        self.cut_usage: Usage | None = None
        self._streak = 0
        self._last_signature = ""

    def emit(self, event: LoopEvent) -> None:
        """Hand an event to the driver."""
        if self.on_event is not None:
            self.on_event(event)

    def run(self) -> LoopResult:
        """Run steps until an exit reason; never raises for model or tool trouble."""
        started = time.monotonic()
        deadline = started + self.config.max_time if self.config.max_time > 0 else None
        stop = _StopSignal(self.cancel, deadline)
        final = ""
        try:
            final = self._steps(stop)
            reason: ExitReason = "agent"
            error = ""
        except _Exit as exit_:
            reason, error = exit_.reason, exit_.error
        finally:
            stop.close()
        n_steps = self.steps[-1].step + 1 if self.steps else 0
        self.emit(RunFinished(reason, final, error, n_steps))
        return LoopResult(
            exit_reason=reason,
            final_message=final,
            messages=self.messages,
            steps=self.steps,
            error=error,
            context_tokens=self.context_tokens,
            elapsed=time.monotonic() - started,
            cut_usage=self.cut_usage,
        )

    def _steps(self, stop: _StopSignal) -> str:
        first = self.steps[-1].step + 1 if self.steps else 0
        for index in range(first, self.config.max_steps):
            stop.check()
            final = self._step(index, stop)
            if final is not None:
                return final
        raise _Exit("max_turns")

    def _budget(self) -> int:
        try:
            prompt = self.backend.count_tokens(self.messages, self.tools)
        except Exception as exc:
            raise _Exit("llm_query_error", f"{type(exc).__name__}: {exc}") from exc
        self.context_tokens = prompt
        room = self.config.max_context - prompt
        if room <= 0:
            raise _Exit("max_context_len", f"prompt has {prompt} tokens")
        return min(self.config.max_tokens_per_turn, room)

    def _generate(
        self, cap: int, stop: _StopSignal, index: int
    ) -> tuple[Reply, list[ToolCall | ToolCallError]]:
        settings = GenerationSettings(
            temperature=self.config.temperature,
            max_tokens=cap,
            max_context=self.config.max_context,
            seed=step_seed(self.config.seed, index),
            enable_thinking=self.config.enable_thinking,
        )
        reply = Reply()
        ordered: list[ToolCall | ToolCallError] = []
        try:
            for event in self.backend.generate(self.messages, self.tools, settings, stop.event):
                reply.add(event)
                if isinstance(event, ReasoningDelta | ContentDelta | Decoded):
                    self.emit(event)
                elif isinstance(event, ToolCallEvent):
                    ordered.append(event.call)
                elif isinstance(event, ToolCallError):
                    ordered.append(event)
        except Exception as exc:
            stop.check()
            raise _Exit("llm_query_error", f"{type(exc).__name__}: {exc}") from exc
        return reply, ordered

    def _step(self, index: int, stop: _StopSignal) -> str | None:
        self.emit(StepStarted(index))
        cap = self._budget()
        gen_start = time.monotonic()
        reply, ordered = self._generate(cap, stop, index)
        gen_seconds = time.monotonic() - gen_start
        if reply.usage is not None:
            self.emit(StepUsage(index, reply.usage))
            self.context_tokens = reply.usage.prompt_tokens + reply.usage.completion_tokens
        finish = reply.finish.reason if reply.finish else "error"
        if finish == "cancelled" or stop.reason is not None:
            self.cut_usage = reply.usage
            stop.trip("cancelled")
            stop.check()
        if finish == "error":
            raise _Exit("llm_query_error", reply.finish.error if reply.finish else "no reply")
        if finish == "max_context_len":
            raise _Exit("max_context_len", reply.finish.error if reply.finish else "")
        calls = [
            dataclasses.replace(item, id=item.id or f"call_{index}_{i}")
            for i, item in enumerate(ordered)
            if isinstance(item, ToolCall)
        ]
        assistant = Message("assistant", reply.content, reply.reasoning, tuple(calls))
        if finish == "length":
            # the cut reply stays in the record; its half-written calls are not run
            assistant = dataclasses.replace(assistant, tool_calls=())
            self.messages.append(assistant)
            self._record(step_of_reply(index, assistant, (), reply, gen_seconds, 0.0, finish))
            reason: ExitReason = (
                "max_tokens_per_turn"
                if cap >= self.config.max_tokens_per_turn
                else "max_context_len"
            )
            raise _Exit(reason, f"reply cut at {cap} tokens")
        if not ordered:
            self.messages.append(assistant)
            self._record(step_of_reply(index, assistant, (), reply, gen_seconds, 0.0, finish))
            return reply.content
        self._run_tools(index, assistant, ordered, reply, gen_seconds, finish, stop)
        return None

    def _run_tools(
        self,
        index: int,
        assistant: Message,
        ordered: list[ToolCall | ToolCallError],
        reply: Reply,
        gen_seconds: float,
        finish: str,
        stop: _StopSignal,
    ) -> None:
        observations: list[Observation] = []
        tool_start = time.monotonic()
        calls = iter(assistant.tool_calls)
        ran: list[ToolCall] = []
        exit_: _Exit | None = None
        for i, item in enumerate(ordered):
            if stop.event.is_set():
                break
            if isinstance(item, ToolCallError):
                text = item.error
                observations.append(Observation(item.name or "invalid", text, False, 0.0, ""))
                call = ToolCall(item.name or "invalid", {}, "")
                self.emit(ToolFinished(index, i, call, text, 0.0, False))
                continue
            call = next(calls)
            self.emit(ToolStarted(index, i, call))
            try:
                outcome = self.runner.run(call, stop.event)
            except ToolInfrastructureError as exc:
                exit_ = _Exit("tool_error", f"{type(exc).__name__}: {exc}")
                break
            except Exception as exc:
                exit_ = _Exit("tool_error", f"{type(exc).__name__}: {exc}")
                break
            ran.append(call)
            observations.append(
                Observation(
                    call.name,
                    outcome.observation,
                    outcome.ok,
                    outcome.elapsed,
                    call.id,
                    outcome.command,
                )
            )
            self.emit(
                ToolFinished(
                    index,
                    i,
                    call,
                    outcome.observation,
                    outcome.elapsed,
                    outcome.ok,
                    outcome.command,
                )
            )
        # Only calls that ran keep their place in history, so a resumed run stays well-formed.
        assistant = dataclasses.replace(assistant, tool_calls=tuple(ran))
        tool_seconds = time.monotonic() - tool_start
        step = step_of_reply(
            index, assistant, tuple(observations), reply, gen_seconds, tool_seconds, finish
        )
        self.messages.append(assistant)
        self.messages.extend(step.tool_messages())
        self._record(step)
        stuck = self._watch_repeats(step)
        if exit_ is not None:
            raise exit_
        if stuck is not None:
            raise stuck
        stop.check()

    def _record(self, step: StepRecord) -> None:
        self.steps.append(step)
        if self.on_step is not None:
            self.on_step(step)

    def _watch_repeats(self, step: StepRecord) -> _Exit | None:
        """Tell the user when the model repeats itself; the `stuck` exit once it has done
        so `stop_after_repeats` times (what the model sees is never changed)."""
        signature = _signature(step)
        self._streak = self._streak + 1 if signature == self._last_signature else 1
        self._last_signature = signature
        if self._streak == self.config.repeat_notice_after:
            self.emit(
                Notice(
                    f"The model made the same tool call with the same result {self._streak} "
                    "times in a row; it may be stuck in a loop.",
                    "warning",
                )
            )
        limit = self.config.stop_after_repeats
        if limit and self._streak >= limit:
            return _Exit(
                "stuck",
                f"the same tool call with the same result {self._streak} times in a row "
                f"(stop_after_repeats = {limit})",
            )
        return None


def run_loop(
    backend: Backend,
    tools: Sequence[ToolSchema],
    runner: ToolRunnerLike,
    config: LoopConfig,
    messages: list[Message],
    *,
    cancel: threading.Event | None = None,
    on_event: Callable[[LoopEvent], None] | None = None,
    on_step: Callable[[StepRecord], None] | None = None,
    prior_steps: Sequence[StepRecord] = (),
) -> LoopResult:
    """Run the loop on `messages` (extended in place) until a Leaf exit reason.

    `on_event` receives every LoopEvent on the calling thread; `on_step` receives each
    finished step (the place to persist it); setting `cancel` from any thread ends the
    run with `cancelled`, also while a tool runs.
    """
    loop = LeafLoop(
        backend,
        tools,
        runner,
        config,
        messages,
        cancel=cancel,
        on_event=on_event,
        on_step=on_step,
        prior_steps=prior_steps,
    )
    return loop.run()
