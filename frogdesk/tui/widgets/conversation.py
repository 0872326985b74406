"""The conversation: user prompts, reasoning, streamed markdown content, tool cards, notices."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Collapsible, Markdown, Static

from frogdesk.engine.types import ContentDelta, ReasoningDelta
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


class ReasoningView(Collapsible):
    """The model's reasoning for one step, dimmed, collapsible."""

    def __init__(self, collapsed: bool) -> None:
        self.text = ""
        self._body = Static("", classes="reasoning-text", markup=False)
        super().__init__(self._body, title="Reasoning", collapsed=collapsed, classes="reasoning")

    def add(self, text: str) -> None:
        """Append a piece of reasoning."""
        self.text += text
        self._body.update(self.text.strip())


class Conversation(VerticalScroll):
    """Everything said in a session, in order; fed loop events by the session screen."""

    def __init__(self, syntax_style: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.syntax_style = syntax_style
        self.reasoning_collapsed = False
        self._reasoning: ReasoningView | None = None
        self._content: Markdown | None = None
        self._cards: dict[tuple[int, int], ToolCard] = {}

    @property
    def cards(self) -> list[ToolCard]:
        """The tool cards shown so far, in order."""
        return list(self._cards.values())

    def _end_segment(self) -> None:
        self._reasoning = None
        self._content = None

    async def add_user(self, text: str) -> None:
        """Show what the user typed."""
        self._end_segment()
        await self.mount(Static(text, classes="user-prompt", markup=False))
        self.scroll_end(animate=False)

    async def add_notice(self, text: str, level: str = "info") -> None:
        """Show a line for the user only."""
        self._end_segment()
        await self.mount(Static(text, classes=f"notice -{level}", markup=False))
        self.scroll_end(animate=False)

    def set_reasoning_collapsed(self, collapsed: bool) -> None:
        """Collapse or expand every reasoning block, now and for new ones."""
        self.reasoning_collapsed = collapsed
        for view in self.query(ReasoningView):
            view.collapsed = collapsed

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
            self._reasoning.add(event.text)
        elif isinstance(event, ContentDelta):
            if self._content is None:
                if not event.text.strip():
                    return
                self._content = Markdown("", classes="content")
                await self.mount(self._content)
            await self._content.append(event.text)
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
            found.finish(event.observation, event.elapsed, event.ok)
        elif isinstance(event, Notice):
            await self.add_notice(event.text, event.level)
        elif isinstance(event, RunFinished):
            self._end_segment()
            if event.exit_reason != "agent" or event.error:
                detail = f": {event.error}" if event.error else ""
                level = "warning" if event.exit_reason == "cancelled" else "error"
                await self.add_notice(f"Run ended ({event.exit_reason}){detail}", level)
        elif isinstance(event, StepUsage):
            pass
