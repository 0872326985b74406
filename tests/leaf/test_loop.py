"""The Leaf loop: messages, exit reasons, budgets, malformed calls, cancellation, loop notices."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from frogdesk.config.settings import Settings
from frogdesk.engine.chat import (
    ContentDelta,
    Decoded,
    EngineEvent,
    Finished,
    Message,
    ToolCall,
    ToolCallError,
    Usage,
)
from frogdesk.leaf.events import (
    LoopEvent,
    Notice,
    RunFinished,
    StepStarted,
    StepUsage,
    ToolFinished,
    ToolStarted,
)
from frogdesk.leaf.loop import LoopConfig, run_loop
from frogdesk.leaf.records import LoopResult, StepRecord
from frogdesk.leaf.runner import ToolRunner
from frogdesk.leaf.schemas import SYSTEM_PROMPT, tool_schemas
from tests.support.event_backend import EventBackend, reply
from tests.support.plain_shell import PlainShell


def opening(task: str = "fix it") -> list[Message]:
    return [Message("system", SYSTEM_PROMPT), Message("user", task)]


def drive(
    backend: EventBackend, runner: ToolRunner, config: LoopConfig | None = None, **kw: object
) -> tuple[list[LoopEvent], list[StepRecord], LoopResult]:
    events: list[LoopEvent] = []
    steps: list[StepRecord] = []
    result = run_loop(
        backend,
        tool_schemas(),
        runner,
        config or LoopConfig(),
        opening(),
        on_event=events.append,
        on_step=steps.append,
        **kw,  # type: ignore[arg-type]
    )
    return events, steps, result


def test_final_answer_ends_the_run(runner: ToolRunner) -> None:
    events, steps, result = drive(EventBackend([reply("All done.")]), runner)
    assert result.exit_reason == "agent"
    assert result.final_message == "All done."
    assert [m.role for m in result.messages] == ["system", "user", "assistant"]
    assert result.messages[2].reasoning == "think"
    assert len(steps) == 1 and steps[0].observations == ()
    assert isinstance(events[0], StepStarted) and isinstance(events[-1], RunFinished)
    assert events[-1] == RunFinished("agent", "All done.", "", 1)


def test_tool_messages_follow_in_call_order(runner: ToolRunner, workdir: Path) -> None:
    calls = (
        ToolCall("Read", {"file_path": "a.py", "limit": 1}),
        ToolCall("Write", {"file_path": "n.txt", "content": "abc"}),
        ToolCall("Nope", {}),
    )
    backend = EventBackend([reply("looking", *calls), reply("fixed")])
    events, steps, result = drive(backend, runner)
    msgs = result.messages
    assert [m.role for m in msgs] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
    ]
    assert [c.name for c in msgs[2].tool_calls] == ["Read", "Write", "Nope"]
    assert [m.content for m in msgs[3:6]] == [
        "a.py\n1. one",
        "Wrote n.txt (3 bytes).",
        "Unknown tool: Nope",
    ]
    assert [m.tool_call_id for m in msgs[3:6]] == [c.id for c in msgs[2].tool_calls]
    assert len({c.id for c in msgs[2].tool_calls}) == 3
    assert (workdir / "n.txt").read_text() == "abc"
    # the second request saw the whole history
    assert backend.calls[1][0] == msgs[:6]
    kinds = [type(e).__name__ for e in events]
    assert kinds[:8] == [
        "StepStarted",
        "ReasoningDelta",
        "ContentDelta",
        "StepUsage",
        "ToolStarted",
        "ToolFinished",
        "ToolStarted",
        "ToolFinished",
    ]
    assert [o.tool for o in steps[0].observations] == ["Read", "Write", "Nope"]


def test_malformed_call_becomes_an_observation_and_the_loop_goes_on(runner: ToolRunner) -> None:
    bad: list[EngineEvent] = [
        ContentDelta("x"),
        ToolCallError(
            "<tool_call><function=Read>", "Tool call is not closed: missing </function>", "Read"
        ),
        Finished("tool_calls"),
    ]
    events, steps, result = drive(EventBackend([bad, reply("ok")]), runner)
    assert result.exit_reason == "agent"
    tool_msgs = [m for m in result.messages if m.role == "tool"]
    assert [m.content for m in tool_msgs] == ["Tool call is not closed: missing </function>"]
    assert steps[0].observations[0].ok is False
    assert any(isinstance(e, ToolFinished) and not e.ok for e in events)


def test_step_budget(runner: ToolRunner) -> None:
    call = ToolCall("Glob", {"pattern": "*.py"})
    backend = EventBackend([reply("", call) for _ in range(5)])
    _, steps, result = drive(backend, runner, LoopConfig(max_steps=3))
    assert result.exit_reason == "max_turns"
    assert len(steps) == 3 and len(backend.calls) == 3


def test_reply_cut_by_the_turn_cap(runner: ToolRunner) -> None:
    cut_call = ToolCall("Write", {"file_path": "half.txt", "content": "x"})
    backend = EventBackend([reply("half a thou", cut_call, finish="length")])
    _, steps, result = drive(backend, runner, LoopConfig(max_tokens_per_turn=64))
    assert result.exit_reason == "max_tokens_per_turn"
    assert backend.calls[0][1].max_tokens == 64
    assert steps[0].finish == "length" and steps[0].observations == ()
    assert result.messages[-1] == Message("assistant", "half a thou", "think")
    assert not (runner.workdir / "half.txt").exists()


def test_context_budget_before_a_reply(runner: ToolRunner) -> None:
    backend = EventBackend([reply("never")], tokens=5000)
    _, steps, result = drive(backend, runner, LoopConfig(max_context=4096))
    assert result.exit_reason == "max_context_len"
    assert backend.calls == [] and steps == []


def test_turn_cap_shrinks_to_the_room_left_and_a_cut_then_is_context(runner: ToolRunner) -> None:
    backend = EventBackend([reply("cut", finish="length")], tokens=4000)
    _, _, result = drive(backend, runner, LoopConfig(max_context=4096, max_tokens_per_turn=8192))
    assert backend.calls[0][1].max_tokens == 96
    assert result.exit_reason == "max_context_len"


def test_engine_reported_context_overflow(runner: ToolRunner) -> None:
    _, _, result = drive(EventBackend([[Finished("max_context_len", "too long")]]), runner)
    assert result.exit_reason == "max_context_len"


@pytest.mark.parametrize(
    "item", [RuntimeError("server went away"), [ContentDelta("a"), Finished("error", "HTTP 500")]]
)
def test_llm_errors(runner: ToolRunner, item: object) -> None:
    _, _, result = drive(EventBackend([item]), runner)  # type: ignore[list-item]
    assert result.exit_reason == "llm_query_error"
    assert result.error in ("RuntimeError: server went away", "HTTP 500")


def test_tool_error_when_bash_has_no_shell(workdir: Path) -> None:
    runner = ToolRunner(workdir, None)
    _, _, result = drive(EventBackend([reply("", ToolCall("Bash", {"command": "ls"}))]), runner)
    assert result.exit_reason == "tool_error"
    assert "no shell" in result.error


def test_cancel_from_another_thread_while_a_tool_runs(workdir: Path) -> None:
    shell = PlainShell()
    runner = ToolRunner(workdir, shell)
    cancel = threading.Event()
    calls = (
        ToolCall("Bash", {"command": "sleep 300"}),
        ToolCall("Write", {"file_path": "late.txt", "content": "x"}),
    )
    backend = EventBackend([reply("", *calls), reply("never")])

    def on_event(event: LoopEvent) -> None:
        if isinstance(event, ToolStarted):
            threading.Timer(0.2, cancel.set).start()

    result = run_loop(
        backend, tool_schemas(), runner, LoopConfig(), opening(), cancel=cancel, on_event=on_event
    )
    assert result.exit_reason == "cancelled"
    assert not (workdir / "late.txt").exists()
    assert len(backend.calls) == 1
    # the history stays well formed: only the call that ran keeps its place
    assert [c.name for c in result.messages[2].tool_calls] == ["Bash"]
    assert [m.role for m in result.messages] == ["system", "user", "assistant", "tool"]


def test_cancel_before_start(runner: ToolRunner) -> None:
    cancel = threading.Event()
    cancel.set()
    backend = EventBackend([reply("x")])
    result = run_loop(backend, tool_schemas(), runner, LoopConfig(), opening(), cancel=cancel)
    assert result.exit_reason == "cancelled" and backend.calls == []


def test_wall_time_budget(workdir: Path) -> None:
    runner = ToolRunner(workdir, PlainShell())
    backend = EventBackend([reply("", ToolCall("Bash", {"command": "sleep 300"})), reply("never")])
    result = run_loop(backend, tool_schemas(), runner, LoopConfig(max_time=0.5), opening())
    assert result.exit_reason == "max_time"
    assert len(backend.calls) == 1


def test_repeats_are_told_to_the_user_not_the_model(runner: ToolRunner) -> None:
    call = ToolCall("Read", {"file_path": "a.py", "limit": 1})
    backend = EventBackend([reply("", call) for _ in range(5)] + [reply("stop")])
    events, _, result = drive(backend, runner)
    notices = [e for e in events if isinstance(e, Notice)]
    assert len(notices) == 1 and notices[0].level == "warning"
    assert "same tool call" in notices[0].text
    assert all("loop" not in m.content for m in result.messages if m.role == "tool")


def test_different_observations_are_not_repeats(runner: ToolRunner) -> None:
    replies = [reply("", ToolCall("Bash", {"command": "date +%N"})) for _ in range(4)] + [
        reply("stop")
    ]
    events, _, _ = drive(EventBackend(replies), runner)
    assert not [e for e in events if isinstance(e, Notice)]


def test_a_run_that_repeats_itself_ends_as_stuck(runner: ToolRunner) -> None:
    call = ToolCall("Read", {"file_path": "a.py", "limit": 1})
    backend = EventBackend([reply("", call) for _ in range(10)] + [reply("stop")])
    events, steps, result = drive(backend, runner, LoopConfig(stop_after_repeats=4))
    assert result.exit_reason == "stuck"
    assert len(steps) == 4 and len(backend.calls) == 4
    assert "4 times in a row" in result.error
    finished = [e for e in events if isinstance(e, RunFinished)]
    assert finished[0].exit_reason == "stuck"
    # the model saw what it sees in the vendor's loop: its calls and their observations
    assert all("stuck" not in m.content and "loop" not in m.content for m in result.messages)


def test_control_without_the_limit_the_same_run_goes_on_to_its_answer(
    runner: ToolRunner,
) -> None:
    call = ToolCall("Read", {"file_path": "a.py", "limit": 1})
    backend = EventBackend([reply("", call) for _ in range(10)] + [reply("stop")])
    _, steps, result = drive(backend, runner, LoopConfig(stop_after_repeats=0))
    assert result.exit_reason == "agent" and len(steps) == 11


def test_calls_whose_results_differ_are_never_stuck(runner: ToolRunner) -> None:
    replies = [reply("", ToolCall("Bash", {"command": "date +%N"})) for _ in range(6)]
    _, steps, result = drive(
        EventBackend([*replies, reply("stop")]), runner, LoopConfig(stop_after_repeats=2)
    )
    assert result.exit_reason == "agent" and len(steps) == 7


def test_a_tool_error_in_the_repeated_step_is_the_reason_given(workdir: Path) -> None:
    call = ToolCall("Bash", {"command": "true"})
    broken = ToolRunner(workdir, None)  # no shell: Bash is a tool error
    _, _, result = drive(
        EventBackend([reply("", call) for _ in range(3)]), broken, LoopConfig(stop_after_repeats=1)
    )
    assert result.exit_reason == "tool_error"


def test_the_settings_stop_a_stuck_run_by_default_and_the_loop_alone_does_not() -> None:
    assert LoopConfig().stop_after_repeats == 0  # the vendor's loop
    settings = Settings.of()
    assert LoopConfig.from_settings(settings.loop).stop_after_repeats == 8
    assert LoopConfig.from_settings(Settings.of(stop_after_repeats=0).loop).stop_after_repeats == 0


def test_resume_continues_numbering_and_budget(runner: ToolRunner) -> None:
    call = ToolCall("Glob", {"pattern": "*.py"})
    first = EventBackend([reply("", call), reply("", call)])
    _, steps, _ = drive(first, runner, LoopConfig(max_steps=2))
    messages = opening() + [m for s in steps for m in (s.assistant, *s.tool_messages())]
    second = EventBackend([reply("", call), reply("done")])
    result = run_loop(
        second, tool_schemas(), runner, LoopConfig(max_steps=4), messages, prior_steps=steps
    )
    assert result.exit_reason == "agent"
    assert [s.step for s in result.steps] == [0, 1, 2, 3]
    assert result.n_steps == 4


def test_usage_events(runner: ToolRunner) -> None:
    events, steps, result = drive(EventBackend([reply("x")]), runner)
    usage = [e for e in events if isinstance(e, StepUsage)]
    assert usage and usage[0].usage.prompt_tokens == 100 and steps[0].usage == usage[0].usage
    assert result.context_tokens == 105


def test_token_progress_reaches_the_driver_in_order(runner: ToolRunner) -> None:
    """`Decoded` passes to the driver where it came, between the reply's text and its call."""
    call = ToolCall("Glob", {"pattern": "*.py"})
    events_in = reply("x", call)
    events_in[2:2] = [Decoded(1), Decoded(2), Decoded(3)]  # the call's tokens, no text
    events, _steps, _result = drive(EventBackend([events_in, reply("done")]), runner)
    first = events[: next(i for i, e in enumerate(events) if isinstance(e, ToolStarted))]
    assert [e for e in first if isinstance(e, ContentDelta | Decoded)] == [
        ContentDelta("x"),
        Decoded(1),
        Decoded(2),
        Decoded(3),
    ]


class WaitingBackend(EventBackend):
    """Streams one delta, then waits for the cancel event as a decoding engine would."""

    def generate(self, messages, tools, settings, cancel=None):  # type: ignore[no-untyped-def]
        self.calls.append((list(messages), settings))
        yield ContentDelta("thinking hard")
        assert cancel is not None
        cancel.wait()
        yield Finished("cancelled")


def test_cancel_from_another_thread_while_generating(runner: ToolRunner) -> None:
    cancel = threading.Event()
    steps: list[StepRecord] = []

    def on_event(event: LoopEvent) -> None:
        if isinstance(event, ContentDelta):
            threading.Thread(target=cancel.set).start()

    backend = WaitingBackend([])
    result = run_loop(
        backend,
        tool_schemas(),
        runner,
        LoopConfig(),
        opening(),
        cancel=cancel,
        on_event=on_event,
        on_step=steps.append,
    )
    assert result.exit_reason == "cancelled"
    assert steps == [] and [m.role for m in result.messages] == ["system", "user"]


class CutBackend(EventBackend):
    """Replays `replies`, then streams a reply that only a stop ends, as an engine does:
    its usage (7 decoded tokens) and `Finished("cancelled")`."""

    def generate(self, messages, tools, settings, cancel=None):  # type: ignore[no-untyped-def]
        if self.replies:
            yield from super().generate(messages, tools, settings, cancel)
            return
        self.calls.append((list(messages), settings))
        yield ContentDelta("on and on")
        assert cancel is not None
        cancel.wait()
        yield Usage(100, 10, 90, 7)
        yield Finished("cancelled")


@pytest.mark.parametrize("stop", ["max_time", "cancelled"])
def test_a_reply_a_stop_cuts_off_still_counts_what_it_decoded(
    runner: ToolRunner, stop: str
) -> None:
    """The cut reply is no step (an unfinished reply is not kept) but its tokens were
    decoded: `cut_usage` holds them and `spent` counts them after the steps'."""
    call = ToolCall("Glob", {"pattern": "*.py"})
    cancel = threading.Event()

    def on_event(event: LoopEvent) -> None:
        if stop == "cancelled" and isinstance(event, ContentDelta) and event.text == "on and on":
            threading.Thread(target=cancel.set).start()

    config = LoopConfig(max_time=0.5 if stop == "max_time" else 0.0)
    backend = CutBackend([reply("", call)])
    result = run_loop(
        backend, tool_schemas(), runner, config, opening(), cancel=cancel, on_event=on_event
    )
    assert result.exit_reason == stop and len(backend.calls) == 2
    assert len(result.steps) == 1 and result.cut_usage is not None
    assert [u.completion_tokens for u in result.spent] == [5, 7]


def test_a_run_no_stop_cut_has_no_cut_usage(runner: ToolRunner) -> None:
    """Positive control: every reply finished, so every usage is a step's."""
    call = ToolCall("Glob", {"pattern": "*.py"})
    _, steps, result = drive(EventBackend([reply("", call), reply("done")]), runner)
    assert result.cut_usage is None and result.spent == [s.usage for s in steps]


def test_each_step_of_a_seeded_run_samples_with_its_own_seed(runner: ToolRunner) -> None:
    def seeds(config: LoopConfig) -> list[int | None]:
        call = ToolCall("Read", {"file_path": "a.py", "limit": 1})
        backend = EventBackend([reply("look", call), reply("again", call), reply("done")])
        drive(backend, runner, config)
        return [settings.seed for _, settings in backend.calls]

    seeded = seeds(LoopConfig(seed=7))
    assert len(set(seeded)) == 3, "every reply drew the same random numbers"
    assert seeded[0] == 7 and seeded == seeds(LoopConfig(seed=7)), "a seeded run is reproducible"
    # The control: unseeded, llama.cpp draws a fresh seed for every reply.
    assert seeds(LoopConfig()) == [None, None, None]
