"""The conversation: user prompts, reasoning, streamed markdown content, tool cards, notices."""

from __future__ import annotations

from markdown_it import MarkdownIt
from textual.containers import VerticalScroll
from textual.widgets import Collapsible, Markdown, Static

from frogdesk.core.status import ending_words
from frogdesk.engine.chat import ContentDelta, ReasoningDelta
from frogdesk.inert import inert_line, inert_text
from frogdesk.leaf.events import (
    LoopEvent,
    Notice,
    RunFinished,
    StepStarted,
    StepUsage,
    ToolFinished,
    ToolStarted,
)
from frogdesk.tui.widgets.tool_card import ToolCard


class ReasoningParagraph(Static):
    """A finished paragraph of reasoning; never re-rendered as more text arrives."""

    DEFAULT_CSS = """
    ReasoningParagraph {
        margin: 0 0 1 0;
    }
    """


class ReasoningView(Collapsible):
    """The model's reasoning for one step, dimmed, collapsible.

    Rendering is append-only: each finished paragraph (text up to a blank line) is moved
    into its own widget, and only the paragraph being written is re-rendered per frame, so
    a frame costs the same however long the reasoning has grown.
    """

    def __init__(self, collapsed: bool) -> None:
        self.text = ""
        self._done = 0
        self._tail = Static("", classes="reasoning-text", markup=False)
        super().__init__(self._tail, title="Reasoning", collapsed=collapsed, classes="reasoning")

    async def add(self, text: str) -> None:
        """Append a piece of reasoning."""
        self.text += text
        shown = self.text.strip()
        finished: list[ReasoningParagraph] = []
        while (end := shown.find("\n\n", self._done + 1)) >= 0:
            paragraph = shown[self._done : end]
            finished.append(
                ReasoningParagraph(inert_text(paragraph), classes="reasoning-text", markup=False)
            )
            self._done = end + 2
        if finished:
            await self.query_one(Collapsible.Contents).mount_all(finished, before=self._tail)
        self._tail.update(inert_text(shown[self._done :]))


class Conversation(VerticalScroll):
    """Everything said in a session, in order; fed loop events by the session screen."""

    def __init__(self, syntax_style: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.syntax_style = syntax_style
        self.reasoning_collapsed = False
        self._reasoning: ReasoningView | None = None
        self._content: Markdown | None = None
        self._cards: dict[tuple[int, int], ToolCard] = {}
        self._parser: MarkdownIt | None = None

    @property
    def cards(self) -> list[ToolCard]:
        """The tool cards shown so far, in order."""
        return list(self._cards.values())

    def _markdown_parser(self) -> MarkdownIt:
        """One parser for every streamed append (building one per frame is wasted work)."""
        if self._parser is None:
            # Character references stay as typed: `&#x202e;` decoded would put a real
            # right-to-left override on screen after inert_text had let the text pass.
            self._parser = MarkdownIt("gfm-like").disable("entity")
        return self._parser

    def _end_segment(self) -> None:
        self._reasoning = None
        self._content = None

    async def clear(self) -> None:
        """Remove everything shown (another session is opened)."""
        self._end_segment()
        self._cards.clear()
        await self.remove_children()

    async def add_user(self, text: str) -> None:
        """Show what the user typed."""
        self._end_segment()
        await self.mount(Static(inert_text(text), classes="user-prompt", markup=False))
        self.scroll_end(animate=False)

    async def add_notice(self, text: str, level: str = "info") -> None:
        """Show a line for the user only."""
        self._end_segment()
        await self.mount(Static(inert_text(text), classes=f"notice -{level}", markup=False))
        self.scroll_end(animate=False)

    def set_reasoning_collapsed(self, collapsed: bool) -> None:
        """Collapse or expand every reasoning block, now and for new ones."""
        self.reasoning_collapsed = collapsed
        for view in self.query(ReasoningView):
            view.collapsed = collapsed

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        """Say where a link in the model's answer points instead of opening it."""
        event.stop()
        self.notify(
            f"Links from the model are not opened: {inert_line(event.href)}",
            title="Link",
            markup=False,
        )

    async def apply(self, events: list[LoopEvent]) -> None:
        """Show a batch of (already merged) loop events."""
        at_end = self.is_vertical_scroll_end or self.max_scroll_y == 0
        for event in events:
            await self._apply_one(event)
        if at_end:
            self.scroll_end(animate=False)

    async def _apply_one(self, event: LoopEvent) -> None:
        if isinstance(event, StepStarted):
            self._end_segment()
        elif isinstance(event, ReasoningDelta):
            if self._reasoning is None:
                self._content = None
                self._reasoning = ReasoningView(self.reasoning_collapsed)
                await self.mount(self._reasoning)
            await self._reasoning.add(event.text)
        elif isinstance(event, ContentDelta):
            if self._content is None:
                if not event.text.strip():
                    return
                # A link the model wrote is shown, never opened: a click must not send the
                # user's browser to an address the model chose.
                self._content = Markdown(
                    "", classes="content", parser_factory=self._markdown_parser, open_links=False
                )
                await self.mount(self._content)
            # Markdown is not markup, but a raw escape in the model's text must still not pass.
            await self._content.append(inert_text(event.text))
        elif isinstance(event, ToolStarted):
            self._end_segment()
            card = ToolCard(event.call, self.syntax_style)
            self._cards[(event.step, event.index)] = card
            await self.mount(card)
        elif isinstance(event, ToolFinished):
            found = self._cards.get((event.step, event.index))
            if found is None:
                found = ToolCard(event.call, self.syntax_style)
                self._cards[(event.step, event.index)] = found
                await self.mount(found)
            found.finish(event.observation, event.elapsed, event.ok, event.command)
        elif isinstance(event, Notice):
            await self.add_notice(event.text, event.level)
        elif isinstance(event, RunFinished):
            self._end_segment()
            if event.exit_reason != "agent" or event.error:
                detail = f": {event.error}" if event.error else ""
                level = "warning" if event.exit_reason in ("cancelled", "stuck") else "error"
                await self.add_notice(f"Run {ending_words(event.exit_reason)}{detail}", level)
        elif isinstance(event, StepUsage):
            pass
