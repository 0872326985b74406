"""A footer that shows only the key labels that fit whole; the rest are one `?` (Help) away."""

from __future__ import annotations

from textual import events
from textual.geometry import Size
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# Always shown: the key that lists every other key.
_KEEP_ACTIONS = frozenset({"help", "app.help"})


def fitting_labels(widths: list[int], room: int, keep: set[int]) -> set[int]:
    """Indexes of the labels to show, in order, within `room` columns; `keep` first, always."""
    left = room - sum(widths[i] for i in keep)
    shown = set(keep)
    for index, width in enumerate(widths):
        if index in keep:
            continue
        if width > left:
            break  # later labels stay hidden too, so the footer keeps its order
        shown.add(index)
        left -= width
    return shown


class FittingFooter(Footer):
    """Textual's footer, but a label that would be cut at the right edge is hidden instead."""

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
        shown = fitting_labels(widths, room, keep)
        for index, key in enumerate(flowing):
            key.display = index in shown


def _natural_width(key: FooterKey) -> int:
    return key.get_content_width(Size(0, 0), Size(0, 0)) + key.styles.gutter.width
