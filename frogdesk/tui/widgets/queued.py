"""Messages typed while the model works, shown dim above the prompt until the turn ends."""

from __future__ import annotations

from textual.containers import Vertical
from textual.widgets import Static

from frogdesk.inert import inert_text


class QueuedMessages(Vertical):
    """The queue of the next user message: sent as one when the model's turn ends."""

    DEFAULT_CSS = """
    QueuedMessages {
        height: auto;
        max-height: 6;
    }
    QueuedMessages > .queued {
        color: $text-muted;
        text-style: italic;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.texts: list[str] = []

    async def add(self, text: str) -> None:
        """Queue one message and show it (the user's text, never read as markup)."""
        self.texts.append(text)
        line = f"queued (sent when the model's turn ends; Up edits it): {text}"
        await self.mount(Static(inert_text(line), classes="queued", markup=False))

    async def take_last(self) -> str | None:
        """Remove the newest queued message and give it back (None when there is none)."""
        if not self.texts:
            return None
        children = self.query(".queued")
        if children:
            await children.last().remove()
        return self.texts.pop()

    async def take_all(self) -> list[str]:
        """Empty the queue and give back its messages, oldest first."""
        texts, self.texts = self.texts, []
        await self.remove_children()
        return texts
