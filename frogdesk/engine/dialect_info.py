"""The tool-call dialect a GGUF's chat template teaches, as `models info` shows it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from frogdesk.engine.errors import DialectError, TemplateError
from frogdesk.engine.template import load_gguf_template
from frogdesk.engine.toolcall.detect import choose_dialect


def tool_call_dialect(path: Path) -> dict[str, Any]:
    """`{"name", "title", "taught", "refused"}` for the model at `path`.

    `name` is "" and `refused` says why when FrogDesk would refuse the template at load
    (a form it does not speak, or a template that does not compile).
    """
    try:
        choice = choose_dialect(load_gguf_template(path))
    except DialectError as exc:
        return {"name": "", "title": "", "taught": True, "refused": str(exc)}
    except TemplateError as exc:
        return {"name": "", "title": "", "taught": False, "refused": str(exc)}
    return {
        "name": choice.dialect.name,
        "title": choice.describe(),
        "taught": choice.taught,
        "refused": "",
    }


def dialect_line(dialect: dict[str, Any] | None) -> str:
    """The `tool calls` row of `models info`."""
    if dialect is None:
        return "none (no chat template)"
    if dialect["refused"]:
        return f"refused: {dialect['refused']}"
    return f"{dialect['title']} [{dialect['name']}]"
