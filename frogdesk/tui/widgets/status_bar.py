"""The one-line status bar: model, backend, sandbox, context, step, speed, changes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

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


def format_status(info: StatusInfo) -> Content:
    """The status line, every field always shown in a fixed order.

    The model name can come from an endpoint or a file name, so every field is plain text
    styled from outside, never markup: `[b]` in a name shows as typed.
    """
    quant = f" {info.quant}" if info.quant and info.quant not in info.model else ""
    sandbox: tuple[str, str] = (
        (info.sandbox, "") if info.sandbox != "none" else ("none (asks)", "bold $error")
    )
    speed = f"{info.tokens_per_second:.1f} tok/s" if info.tokens_per_second else "- tok/s"
    if info.drafted:
        each = ", ".join(f"{name} {acc}/{n}" for name, n, acc in info.by_drafter if n)
        # drafter names come from the engine, but the line stays plain text anyway
        speed += f" (drafts {info.accepted}/{info.drafted} accepted" + (
            f": {inert_line(each)})" if each else ")"
        )
    files = "1 file changed" if info.changed_files == 1 else f"{info.changed_files} files changed"
    sep = " │ "
    calls = dialect_words(info.dialect)
    return Content.assemble(
        (inert_line(info.model + quant), "bold"),
        sep,
        (inert_line(info.state), "italic"),
        sep,
        inert_line(info.device),
        sep,
        "sandbox ",
        (inert_line(sandbox[0]), sandbox[1]),
        sep,
        f"ctx {_tokens(info.context_used)}/{_tokens(info.context_budget)}",
        sep,
        f"step {info.step}/{info.max_steps}",
        sep,
        speed,
        sep,
        files,
        # last: the fields a user checks most come first and stay in a narrow terminal
        (f"{sep}{inert_line(calls)}" if calls else "", "dim"),
    )


class StatusBar(Static):
    """Shows a StatusInfo; `update_info` replaces some fields and repaints."""

    def __init__(self, info: StatusInfo | None = None, *, id: str | None = None) -> None:
        self.info = info or StatusInfo()
        self._line = format_status(self.info)
        super().__init__(self._line, id=id, markup=False)

    def update_info(self, **changes: object) -> None:
        """Replace the given fields (UI thread only); repaints only if the line changed.

        The bar is one line high whatever it says, so a change never needs a new layout.
        """
        self.info = replace(self.info, **changes)  # type: ignore[arg-type]
        line = format_status(self.info)
        if line != self._line:
            self._line = line
            self.update(line, layout=False)
