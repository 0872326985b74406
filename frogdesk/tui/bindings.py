"""Key bindings with ids, and the user's remaps from settings.keys."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True)
class KeyRemapError:
    """A remap that names no binding id."""

    binding_id: str
    known: tuple[str, ...]

    def __str__(self) -> str:
        return f"keys: unknown binding id '{self.binding_id}' (known: {', '.join(self.known)})"


def app_bindings() -> list[BindingType]:
    """Bindings available on every screen."""
    return [
        Binding("question_mark,f1", "help", "Help", id="help", key_display="?"),
        Binding("ctrl+p", "command_palette", "Commands", id="palette"),
        Binding("ctrl+t", "toggle_theme", "Theme", id="theme"),
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
    ]


def session_bindings() -> list[BindingType]:
    """Bindings of the session screen."""
    return [
        Binding("escape", "stop", "Stop", id="stop", priority=True),
        Binding("ctrl+c", "stop", "Stop", id="stop_alt", show=False, priority=True),
        Binding("ctrl+r", "review", "Review", id="review"),
        Binding("ctrl+o", "switch_quant", "Quant", id="quant"),
        Binding("ctrl+s", "sessions", "Sessions", id="sessions"),
        Binding("ctrl+e", "toggle_reasoning", "Reasoning", id="reasoning"),
        Binding("ctrl+n", "attempts", "N attempts", id="attempts"),
    ]


def review_bindings() -> list[BindingType]:
    """Single-key bindings of the review screen."""
    return [
        Binding("a", "approve_hunk", "Approve", id="review_approve"),
        Binding("r", "reject_hunk", "Reject", id="review_reject"),
        Binding("e", "edit_hunk", "Edit", id="review_edit"),
        Binding("A", "approve_file", "Approve file", id="review_approve_file"),
        Binding("R", "reject_file", "Reject file", id="review_reject_file"),
        Binding("j,down", "next_hunk", "Next", id="review_next", show=False),
        Binding("k,up", "previous_hunk", "Previous", id="review_previous", show=False),
        Binding("v", "toggle_layout", "Split/unified", id="review_layout"),
        Binding("p", "apply", "Apply", id="review_apply"),
        Binding("u", "undo", "Undo apply", id="review_undo"),
        Binding("s", "send_back", "Send back", id="review_send_back"),
        Binding("escape", "close", "Back", id="review_close"),
    ]


def attempts_bindings() -> list[BindingType]:
    """Bindings of the attempts screen."""
    return [
        Binding("left,h", "move(-1)", "Previous", id="attempts_previous", show=False),
        Binding("right,l", "move(1)", "Next", id="attempts_next", show=False),
        Binding("d", "diff", "Diff", id="attempts_diff"),
        Binding("enter", "choose", "Review this one", id="attempts_choose"),
        Binding("k", "toggle_keep", "Keep/discard others", id="attempts_keep"),
        Binding("escape", "leave", "Back", id="attempts_close"),
    ]


def binding_ids(groups: Iterable[Iterable[BindingType]]) -> tuple[str, ...]:
    """Every binding id in the given groups, sorted."""
    return tuple(
        sorted({b.id for group in groups for b in group if isinstance(b, Binding) and b.id})
    )


def keymap_from_settings(
    keys: Mapping[str, str], known: Iterable[str]
) -> tuple[dict[str, str], list[KeyRemapError]]:
    """The valid remaps as a Textual keymap, and one error per unknown id."""
    known_ids = tuple(sorted(known))
    keymap: dict[str, str] = {}
    errors: list[KeyRemapError] = []
    for binding_id, key in keys.items():
        if binding_id in known_ids:
            keymap[binding_id] = key
        else:
            errors.append(KeyRemapError(binding_id, known_ids))
    return keymap, errors


def all_binding_ids() -> tuple[str, ...]:
    """Every remappable binding id of the app."""
    return binding_ids([app_bindings(), session_bindings(), review_bindings(), attempts_bindings()])
