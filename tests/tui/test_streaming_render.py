"""Streaming repaint economy: append-only reasoning, status repaints, the GIL switch interval."""

from __future__ import annotations

import sys

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from frogdesk.engine.chat import ReasoningDelta
from frogdesk.leaf.events import StepStarted
from frogdesk.tui.gil import decode_switch_interval
from frogdesk.tui.widgets.conversation import Conversation, ReasoningParagraph, ReasoningView
from frogdesk.tui.widgets.status_bar import StatusBar


class ConversationApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Conversation("monokai", id="conversation")
        yield StatusBar(id="status")


def shown_paragraphs(view: ReasoningView) -> list[str]:
    return [str(p.content) for p in view.query(ReasoningParagraph)]


@pytest.mark.anyio
async def test_reasoning_freezes_finished_paragraphs_and_keeps_only_the_tail_live() -> None:
    app = ConversationApp()
    async with app.run_test(size=(80, 30)) as pilot:
        conversation = app.query_one(Conversation)
        pieces = ["\n  First ", "idea.\n", "\nSecond", " idea,\nstill second.\n\n", "\n", "Third"]
        await conversation.apply([StepStarted(0)])
        for piece in pieces:
            await conversation.apply([ReasoningDelta(piece)])
            await pilot.pause()
        view = conversation.query_one(ReasoningView)
        assert view.text == "".join(pieces)
        assert shown_paragraphs(view) == ["First idea.", "Second idea,\nstill second."]
        tail = view.query("Static.reasoning-text").last(Static)
        assert not isinstance(tail, ReasoningParagraph)
        assert str(tail.content) == "\nThird"
        # Nothing is lost or doubled: paragraphs and tail rebuild the stripped text.
        assert "\n\n".join([*shown_paragraphs(view), str(tail.content)]) == view.text.strip()


@pytest.mark.anyio
async def test_reasoning_without_a_blank_line_stays_one_live_widget() -> None:
    app = ConversationApp()
    async with app.run_test(size=(80, 30)) as pilot:
        conversation = app.query_one(Conversation)
        for word in ["one", " two\n", "three  "]:
            await conversation.apply([ReasoningDelta(word)])
        await pilot.pause()
        view = conversation.query_one(ReasoningView)
        assert shown_paragraphs(view) == []
        assert str(view.query("Static.reasoning-text").last(Static).content) == "one two\nthree"


@pytest.mark.anyio
async def test_status_bar_repaints_only_when_its_line_changes() -> None:
    app = ConversationApp()
    async with app.run_test(size=(80, 30)) as pilot:
        bar = app.query_one(StatusBar)
        bar.update_info(tokens_per_second=12.34)
        await pilot.pause()
        first = bar.content
        assert "12.3 tok/s" in str(first)
        bar.update_info(tokens_per_second=12.31)  # same text on screen
        assert bar.content is first
        bar.update_info(tokens_per_second=20.0)
        assert "20.0 tok/s" in str(bar.content)
        assert bar.info.tokens_per_second == 20.0


def test_switch_interval_is_short_inside_and_restored_after_an_error() -> None:
    before = sys.getswitchinterval()
    with pytest.raises(RuntimeError), decode_switch_interval(0.0002):
        assert sys.getswitchinterval() == pytest.approx(0.0002, rel=0.05)
        raise RuntimeError("generation failed")
    assert sys.getswitchinterval() == before


def test_switch_interval_never_lengthens_a_shorter_one() -> None:
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.0001)
    try:
        with decode_switch_interval(0.001):
            assert sys.getswitchinterval() == pytest.approx(0.0001, rel=0.05)
        assert sys.getswitchinterval() == pytest.approx(0.0001, rel=0.05)
    finally:
        sys.setswitchinterval(before)
