"""Pure parts of the TUI: event coalescing, the status line, small diffs, key remaps."""

from __future__ import annotations

import threading

import pytest

from frogdesk.engine.chat import ContentDelta, Decoded, ReasoningDelta, ToolCall
from frogdesk.leaf.events import StepStarted
from frogdesk.tui.bindings import all_binding_ids, keymap_from_settings
from frogdesk.tui.stream import EventBuffer
from frogdesk.tui.widgets.diffs import edit_diff
from frogdesk.tui.widgets.status_bar import StatusInfo, format_status
from frogdesk.tui.widgets.tool_card import card_title, main_argument


def test_buffer_merges_consecutive_deltas_of_one_kind_only() -> None:
    buffer = EventBuffer()
    for event in [
        ReasoningDelta("a"),
        ReasoningDelta("b"),
        ContentDelta("c"),
        ContentDelta("d"),
        StepStarted(1),
        ContentDelta("e"),
    ]:
        buffer.push(event)
    assert buffer.drain() == [
        ReasoningDelta("ab"),
        ContentDelta("cd"),
        StepStarted(1),
        ContentDelta("e"),
    ]
    assert buffer.drain() == []
    assert buffer.pushed == 6


def test_buffer_loses_nothing_under_concurrent_pushes() -> None:
    buffer = EventBuffer()
    drained: list[str] = []

    def produce(tag: str) -> None:
        for _ in range(2000):
            buffer.push(ContentDelta(tag))

    threads = [threading.Thread(target=produce, args=(t,)) for t in "xy"]
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        drained.extend(e.text for e in buffer.drain() if isinstance(e, ContentDelta))
    drained.extend(e.text for e in buffer.drain() if isinstance(e, ContentDelta))
    text = "".join(drained)
    assert text.count("x") == 2000 and text.count("y") == 2000


class FakeClock:
    """A clock the test moves by hand (no timing in tests)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_live_rate_counts_tokens_a_tool_call_streams_no_text_for() -> None:
    clock = FakeClock()
    buffer = EventBuffer(clock=clock)
    buffer.push(StepStarted(0))
    buffer.push(ContentDelta("I will write the file."))
    buffer.push(Decoded(1))
    assert buffer.live_rate() is None  # nothing to time yet
    for n in range(2, 101):  # 99 more tokens, all inside a tool call: no text
        clock.now += 0.02
        buffer.push(Decoded(n))
    assert buffer.live_rate() == pytest.approx(99 / (99 * 0.02))
    assert buffer.drain() == [StepStarted(0), ContentDelta("I will write the file.")]
    # control: counted by text events, the same reply would read as nearly stopped
    texts = EventBuffer(clock=clock)
    texts.push(StepStarted(0))
    texts.push(ContentDelta("I will write the file."))
    clock.now += 2.0
    assert texts.live_rate() == 0.0


def test_live_rate_starts_again_with_each_reply_and_waits_half_a_second() -> None:
    clock = FakeClock()
    buffer = EventBuffer(clock=clock)
    buffer.push(StepStarted(0))
    for n in range(1, 11):
        buffer.push(Decoded(n))
        clock.now += 0.1
    assert buffer.live_rate() == pytest.approx(9 / 1.0)
    buffer.push(StepStarted(1))  # tool results were read; a new reply begins
    assert buffer.live_rate() is None
    buffer.push(Decoded(1))
    clock.now += 0.4
    buffer.push(Decoded(5))
    assert buffer.live_rate() is None  # under RATE_AFTER_SECONDS
    clock.now += 0.1
    assert buffer.live_rate() == pytest.approx(4 / 0.5)


def test_live_rate_of_a_backend_without_token_counts_reads_text_events() -> None:
    clock = FakeClock()
    buffer = EventBuffer(clock=clock)
    buffer.push(StepStarted(0))
    for _ in range(21):
        buffer.push(ReasoningDelta("x"))
        clock.now += 0.05
    assert buffer.live_rate() == pytest.approx(20 / (21 * 0.05))


def test_status_line_shows_every_field() -> None:
    info = StatusInfo(
        "FrogNano-4B",
        "Q4_K_M",
        "GPU 20/33 layers",
        "bwrap",
        12500,
        131072,
        7,
        150,
        18.25,
        3,
        "generating",
    )
    line = format_status(info).plain
    for part in [
        "FrogNano-4B Q4_K_M",
        "GPU 20/33 layers",
        "sandbox bwrap",
        "ctx 12.5k/131.1k",
        "step 7/150",
        "18.2 tok/s",
        "3 files changed",
        "generating",
    ]:
        assert part in line
    assert "1 file changed" in format_status(StatusInfo(changed_files=1)).plain
    assert "- tok/s" in format_status(StatusInfo()).plain
    drafting = format_status(StatusInfo(tokens_per_second=30.0, drafted=40, accepted=31)).plain
    assert "30.0 tok/s (drafts 31/40 accepted)" in drafting
    assert "drafts" not in format_status(StatusInfo(tokens_per_second=30.0)).plain
    assert "none (asks)" in format_status(StatusInfo(sandbox="none")).plain


def test_status_line_shows_a_model_name_literally() -> None:
    line = format_status(StatusInfo(model="[@click=app.quit]evil[/]\x1b]0;t\x07", quant="Q4"))
    assert "[@click=app.quit]evil[/]\\x1b]0;t\\x07 Q4" in line.plain
    assert not any(span.style and "click" in str(span.style) for span in line.spans)


def test_edit_and_write_diffs() -> None:
    diff = edit_diff(
        {"file_path": "a.py", "old_string": "x = 1\ny = 2\n", "new_string": "x = 3\ny = 2\n"}
    )
    assert "--- a/a.py" in diff and "-x = 1" in diff and "+x = 3" in diff
    write = edit_diff({"file_path": "new.txt", "content": "hello\nworld\n"})
    assert "+hello" in write and "+world" in write and "\n-" not in write


def test_card_title_and_main_argument() -> None:
    call = ToolCall("Bash", {"command": "pytest   -q\n  tests", "description": "run"})
    assert main_argument(call) == "pytest -q tests"
    assert card_title(call, "ok", 1.25) == "Bash  pytest -q tests  · ok · 1.2s"
    assert main_argument(ToolCall("Read", {"path": "x.py"})) == "x.py"
    assert len(main_argument(ToolCall("Bash", {"command": "x" * 200}))) == 70
    assert main_argument(ToolCall("Unknown", {})) == ""


def test_keymap_keeps_known_ids_and_reports_unknown_ones() -> None:
    keymap, errors = keymap_from_settings({"review": "f5", "nope": "x"}, all_binding_ids())
    assert keymap == {"review": "f5"}
    assert len(errors) == 1 and "nope" in str(errors[0]) and "review" in str(errors[0])
    assert {"stop", "review", "quant", "help", "theme", "review_apply", "review_undo"} <= set(
        all_binding_ids()
    )


def test_short_model_names() -> None:
    from frogdesk.tui.widgets.status_bar import short_model

    assert short_model("/x/y/SmolLM2-135M-Instruct.Q4_1.gguf") == "SmolLM2-135M-Instruct.Q4_1"
    assert short_model("FrogNano-4B") == "FrogNano-4B"
