"""The prompt input with a history recalled by Up and Down."""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class PromptInput(Input):
    """An Input that remembers what was submitted; Up/Down walk the history."""

    def __init__(self, *, id: str | None = None, placeholder: str = "") -> None:
        super().__init__(id=id, placeholder=placeholder)
        self.history: list[str] = []
        self._cursor: int | None = None
        self._draft = ""

    def remember(self, text: str) -> None:
        """Add a submitted prompt to the history (no consecutive duplicates)."""
        if text and (not self.history or self.history[-1] != text):
            self.history.append(text)
        self._cursor = None

    async def _on_key(self, event: events.Key) -> None:
        if event.key not in {"up", "down"} or not self.history:
            return
        event.stop()
        event.prevent_default()
        if self._cursor is None:
            if event.key == "down":
                return
            self._draft = self.value
            self._cursor = len(self.history) - 1
        elif event.key == "up":
            self._cursor = max(0, self._cursor - 1)
        else:
            self._cursor += 1
            if self._cursor >= len(self.history):
                self._cursor = None
                self.value = self._draft
                self.cursor_position = len(self.value)
                return
        self.value = self.history[self._cursor]
        self.cursor_position = len(self.value)
