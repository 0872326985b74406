"""The one-line status bar: model, state, context, step, changes, then what fits of the rest."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from rich.cells import cell_len
from textual import events
from textual.content import Content
from textual.widgets import Static

from frogdesk.config import DEFAULT_MAX_STEPS
from frogdesk.inert import inert_line


@dataclass(frozen=True)
class StatusInfo:
    """Everything the status bar shows; replaced whole on each change."""

    model: str = "no model"
    quant: str = ""
    device: str = "CPU"
    sandbox: str = "?"
    context_used: int = 0
    context_budget: int = 0
    step: int = 0
    max_steps: int = DEFAULT_MAX_STEPS
    tokens_per_second: float = 0.0
    """Tokens generated per second of decoding (drafted tokens the model accepted included)."""
    changed_files: int = 0
    state: str = "ready"
    drafted: int = 0
    """Drafted tokens verified so far in this session (speculative decoding)."""
    accepted: int = 0
    """Of those, the tokens the model accepted."""
    by_drafter: tuple[tuple[str, int, int], ...] = ()
    """(drafter, drafted, accepted) for each drafter that drafted in this session."""
    dialect: str = ""
    """The model's tool-call dialect id (`hermes_json`, ...); "" when the backend does not say."""
    prompt_read: int = 0
    """Prompt tokens read so far in the prefill under way (llama.cpp's count, per batch)."""
    prompt_total: int = 0
    """Prompt tokens that prefill reads; 0: no prefill under way."""
    prompt_rate: float = 0.0
    """Prompt tokens read per second in that prefill (0.0 until measured)."""


_DIALECT_WORDS = {"qwen3_coder_xml": "XML calls", "hermes_json": "Hermes calls"}


def dialect_words(dialect: str) -> str:
    """The dialect in two words, at the end of the bar (`XML calls`); "" for none."""
    return _DIALECT_WORDS.get(dialect, f"{dialect} calls" if dialect else "")


def draft_fields(drafts: Mapping[str, Mapping[str, int]]) -> dict[str, object]:
    """The status fields for a session's draft counts (`SessionRecord.drafts` form)."""
    rows = tuple(
        (name, int(c.get("drafted", 0)), int(c.get("accepted", 0)))
        for name, c in sorted(drafts.items())
    )
    return {
        "drafted": sum(r[1] for r in rows),
        "accepted": sum(r[2] for r in rows),
        "by_drafter": rows,
    }


def short_model(model: str) -> str:
    """A model file path as its file name without .gguf; other names as they are."""
    name = model.replace("\\", "/").rsplit("/", 1)[-1]
    return name[: -len(".gguf")] if name.endswith(".gguf") else name


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _short_tokens(n: int) -> str:
    return f"{round(n / 1000)}k" if n >= 1000 else str(n)


SEP = " │ "
_ELLIPSIS = "…"
ESSENTIAL_RANK = 5
"""Fields ranked up to this stay at any width (shortened, then cut); the others drop."""


@dataclass(frozen=True)
class StatusField:
    """One field of the status line: its text, how much it matters, how it shortens."""

    rank: int
    """0 matters most; the highest rank is the first to go when the line is too wide."""
    text: str
    style: str = ""
    short: str = ""
    """A shorter form used before anything essential is cut ("" for none)."""
    joiner: str = SEP
    """What goes before it (a field that belongs to the one before joins with a space)."""
    shrinks: int = 0
    """The fewest cells it may be cut to with an ellipsis (0: never cut)."""
    tail: int = 0
    """Characters at its end a cut keeps (the quant after a model name)."""


def status_fields(info: StatusInfo) -> list[StatusField]:
    """The status line's fields in display order, each ranked by how much it matters.

    Every text is made inert here: the model name can come from an endpoint or a file name.
    """
    model = info.model
    if model.lower().endswith(".gguf") or model.startswith(("/", "~")):
        model = short_model(model)  # a file, not a name: never a whole path in the bar
    quant = f" {info.quant}" if info.quant and info.quant not in model else ""
    name = inert_line(model + quant)
    kept = inert_line(quant.strip() or info.quant)
    tail = len(kept) if kept and name.endswith(kept) else 0
    fields = [StatusField(0, name, "bold", shrinks=max(12, tail + 6), tail=tail)]
    reading = info.state == "generating" and 0 <= info.prompt_read < info.prompt_total
    if reading:
        read, total = info.prompt_read, info.prompt_total
        fields.append(
            StatusField(
                1,
                f"reading prompt {read:,}/{total:,}",
                "italic",
                short=f"prompt {_tokens(read)}/{_tokens(total)}",
            )
        )
        if info.prompt_rate > 0:
            left = (total - read) / info.prompt_rate
            fields.append(StatusField(2, f"{left:.0f}s left", joiner=", "))
            fields.append(StatusField(6, f"{info.prompt_rate:,.0f} tok/s", joiner=", "))
    else:
        fields.append(StatusField(1, inert_line(info.state), "italic", shrinks=8))
    used, budget = info.context_used, info.context_budget
    fields.append(
        StatusField(
            # during a prefill the context is the last step's; the prompt field says more
            7 if reading else 3,
            f"ctx {_tokens(used)}/{_tokens(budget)}",
            short=f"ctx {_short_tokens(used)}/{_short_tokens(budget)}",
        )
    )
    fields.append(StatusField(4, f"step {info.step}/{info.max_steps}"))
    files = "1 file changed" if info.changed_files == 1 else f"{info.changed_files} files changed"
    fields.append(StatusField(5, files, short=f"{info.changed_files} changed"))
    if not reading:
        speed = f"{info.tokens_per_second:.1f} tok/s" if info.tokens_per_second else "- tok/s"
        fields.append(StatusField(6, speed))
        if info.drafted:
            each = ", ".join(f"{name} {acc}/{n}" for name, n, acc in info.by_drafter if n)
            summary = f"(drafts {info.accepted}/{info.drafted} accepted"
            fields.append(StatusField(7, summary + ")", joiner=" "))
            if each:
                # drafter names come from the engine, but the line stays plain text anyway
                fields[-1] = replace(
                    fields[-1], text=f"{summary}: {inert_line(each)})", short=summary + ")"
                )
    if info.sandbox == "none":
        # no sandbox is a warning, kept nearly as long as the essentials
        fields.append(StatusField(ESSENTIAL_RANK, "sandbox none (asks)", "bold $error"))
    else:
        fields.append(StatusField(8, f"sandbox {inert_line(info.sandbox)}"))
    fields.append(StatusField(9, inert_line(info.device)))
    calls = dialect_words(info.dialect)
    if calls:
        fields.append(StatusField(10, inert_line(calls), "dim"))
    return fields


def _width(fields: list[StatusField]) -> int:
    return sum(cell_len(f.text) + (cell_len(f.joiner) if i else 0) for i, f in enumerate(fields))


def _cut(text: str, cells: int, tail: int = 0) -> str:
    """`text` in `cells` cells, an ellipsis where it was cut, its last `tail` chars kept."""
    head, end = (text[:-tail], text[-tail:]) if tail else (text, "")
    while head and cell_len(head) + 1 + cell_len(end) > cells:
        head = head[:-1]
    return head.rstrip() + _ELLIPSIS + end


def fit_fields(fields: list[StatusField], width: int | None) -> list[StatusField]:
    """The fields that fit in `width` cells, in display order (all of them for None).

    The least important fields go first (shortened first where they have a short form);
    then the essentials take their short forms, least important first; then the fields that
    may be cut (state, model) are cut.
    """
    shown = list(fields)
    if width is None:
        return shown
    while _width(shown) > width:
        droppable = [f for f in shown if f.rank > ESSENTIAL_RANK]
        if not droppable:
            break
        worst = max(droppable, key=lambda f: f.rank)
        if worst.short:  # its short form before it goes (the drafts without each drafter)
            shown[shown.index(worst)] = replace(worst, text=worst.short, short="")
        else:
            shown.remove(worst)
    for field in sorted(shown, key=lambda f: -f.rank):
        excess = _width(shown) - width
        if excess <= 0:
            return shown
        if field.short:
            shown[shown.index(field)] = replace(field, text=field.short, short="")
    for field in sorted(shown, key=lambda f: -f.rank):
        excess = _width(shown) - width
        if excess <= 0:
            break
        length = cell_len(field.text)
        if field.shrinks and length > field.shrinks:
            room = max(field.shrinks, length - excess)
            text = _cut(field.text, room, field.tail)
            shown[shown.index(field)] = replace(field, text=text)
    return shown


def format_status(info: StatusInfo, width: int | None = None) -> Content:
    """The status line for `width` cells (every field for None), most important fields first.

    Every field is plain text styled from outside, never markup: `[b]` in a name shows
    as typed.
    """
    parts: list[str | tuple[str, str]] = []
    for index, field in enumerate(fit_fields(status_fields(info), width)):
        if index:
            parts.append(field.joiner)
        parts.append((field.text, field.style) if field.style else field.text)
    return Content.assemble(*parts)


class StatusBar(Static):
    """Shows a StatusInfo in the bar's width; `update_info` replaces some fields and repaints."""

    def __init__(self, info: StatusInfo | None = None, *, id: str | None = None) -> None:
        self.info = info or StatusInfo()
        self._line = format_status(self.info, None)
        super().__init__(self._line, id=id, markup=False)

    def _room(self) -> int | None:
        width = self.content_size.width
        return width if width > 0 else None

    def update_info(self, **changes: object) -> None:
        """Replace the given fields (UI thread only); repaints only if the line changed.

        The bar is one line high whatever it says, so a change never needs a new layout.
        """
        self.info = replace(self.info, **changes)  # type: ignore[arg-type]
        self._show()

    def on_resize(self, event: events.Resize) -> None:
        """Lay the fields out again for the new width."""
        self._show()

    def _show(self) -> None:
        line = format_status(self.info, self._room())
        if line != self._line:
            self._line = line
            self.update(line, layout=False)
