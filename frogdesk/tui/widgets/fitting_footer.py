"""A footer that shows only the key labels that fit whole, the screen's main actions first;
the rest are one `?` (Help) away."""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.geometry import Size
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# Always shown: the key that lists every other key.
_KEEP_ACTIONS = frozenset({"help", "app.help"})


def fitting_labels(
    widths: list[int], room: int, keep: set[int], first: Sequence[int] = ()
) -> set[int]:
    """Indexes of the labels to show within `room` columns: `keep` always, then those of
    `first` that fit (in that order of importance), then the others in order while they fit."""
    left = room - sum(widths[i] for i in keep)
    shown = set(keep)
    for index in first:
        if index not in shown and widths[index] <= left:
            shown.add(index)
            left -= widths[index]
    for index, width in enumerate(widths):
        if index in shown:
            continue
        if width > left:
            break  # later labels stay hidden too, so the footer keeps its order
        shown.add(index)
        left -= width
    return shown


class FittingFooter(Footer):
    """Textual's footer, but a label that would be cut at the right edge is hidden instead.

    `first` names the actions that matter most on the screen, most important first: they
    are shown before the others where the width is short (each still in its place).
    """

    def __init__(self, *, first: Sequence[str] = ()) -> None:
        super().__init__()
        self.first = tuple(first)

    async def recompose(self) -> None:
        """Rebuild the keys, then fit them."""
        await super().recompose()
        self.call_after_refresh(self.fit_labels)

    def on_resize(self, event: events.Resize) -> None:
        """Fit again at the new width."""
        self.call_after_refresh(self.fit_labels)

    def fit_labels(self) -> None:
        """Show the keys that fit whole, in order; hide the others."""
        keys = list(self.query(FooterKey))
        docked = [k for k in keys if k.has_class("-command-palette")]
        flowing = [k for k in keys if not k.has_class("-command-palette")]
        room = self.size.width - sum(_natural_width(k) for k in docked)
        widths = [_natural_width(k) for k in flowing]
        keep = {i for i, k in enumerate(flowing) if k.action in _KEEP_ACTIONS}
        ranked = [
            index
            for action in self.first
            for index, key in enumerate(flowing)
            if key.action == action
        ]
        shown = fitting_labels(widths, room, keep, ranked)
        for index, key in enumerate(flowing):
            key.display = index in shown


def _natural_width(key: FooterKey) -> int:
    return key.get_content_width(Size(0, 0), Size(0, 0)) + key.styles.gutter.width
