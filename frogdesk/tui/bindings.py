"""Key bindings with ids, and the user's remaps from settings.tui.keys."""

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
    """Bindings available on every screen.

    Keys that type no text are priority bindings, so a focused input field (the prompt,
    the picker's path) cannot swallow them; `?` is text, so it opens the help only where it
    would type nothing (FrogDeskApp.check_action).
    """
    return [
        Binding(
            "question_mark",
            "help",
            "Help",
            id="help",
            key_display="?",
            priority=True,
            tooltip="Show every key of this screen",
        ),
        Binding(
            "f1",
            "help",
            "Help",
            id="help_f1",
            show=False,
            priority=True,
            tooltip="Show every key of this screen",
        ),
        Binding(
            "ctrl+p",
            "command_palette",
            "Commands",
            id="palette",
            show=False,  # the footer shows it once, docked at the right
            priority=True,
            tooltip="Search every action by name or description",
        ),
        Binding(
            "ctrl+t",
            "toggle_theme",
            "Theme",
            id="theme",
            priority=True,
            tooltip="Change the theme: dark or light (saved)",
        ),
        Binding(
            "ctrl+c",
            "interrupt",
            "Stop/quit",
            id="stop_alt",
            show=False,
            priority=True,
            tooltip="Stop the model; when nothing runs, press twice to quit",
        ),
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            id="quit",
            priority=True,
            tooltip="Quit FrogDesk (asks first while the model or a command runs)",
        ),
    ]


def session_bindings() -> list[BindingType]:
    """Bindings of the session screen (priority: the prompt has the focus and must not eat
    them; Input's own Ctrl+E, end of line, is also the End key)."""
    return [
        Binding(
            "escape",
            "stop",
            "Stop",
            id="stop",
            priority=True,
            tooltip="Stop the model or the running command now",
        ),
        Binding(
            "ctrl+r",
            "review",
            "Review",
            id="review",
            priority=True,
            tooltip="Review the session's changes and apply them",
        ),
        Binding(
            "ctrl+o",
            "switch_quant",
            "Quant",
            id="quant",
            priority=True,
            tooltip="Switch the quant or model, after showing what it costs",
        ),
        Binding(
            "ctrl+s",
            "sessions",
            "Sessions",
            id="sessions",
            priority=True,
            tooltip="Open or discard a stored session of this repository",
        ),
        Binding(
            "ctrl+l",
            "new_session",
            "New",
            id="new_session",
            priority=True,
            tooltip="New session: a fresh task prompt on this repository and model",
        ),
        Binding(
            "ctrl+e",
            "toggle_reasoning",
            "Reasoning",
            id="reasoning",
            priority=True,
            tooltip="Show or hide the model's reasoning",
        ),
        Binding(
            "ctrl+up",
            "card(-1)",
            "Prev card",
            id="card_previous",
            show=False,
            priority=True,
            tooltip="Focus the previous tool card (Enter opens it)",
        ),
        Binding(
            "ctrl+down",
            "card(1)",
            "Next card",
            id="card_next",
            show=False,
            priority=True,
            tooltip="Focus the next tool card; past the last, back to the prompt",
        ),
        Binding(
            "up",
            "edit_queued",
            "Edit queued",
            id="edit_queued",
            show=False,
            priority=True,
            tooltip="Take the queued message back into the empty prompt to edit or delete it",
        ),
        Binding(
            "ctrl+n",
            "attempts",
            "N attempts",
            id="attempts",
            priority=True,
            tooltip="Run the typed task as N attempts side by side",
        ),
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
