"""Chat template rendering: a GGUF's Jinja `tokenizer.chat_template` in a sandbox."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

import jinja2
import jinja2.nodes
import jinja2.parser
from jinja2.ext import Extension, loopcontrols

from frogdesk.engine.chat import Message, ToolSchema
from frogdesk.engine.errors import TemplateError
from frogdesk.engine.template_limits import (
    MAX_OUTPUT_CHARS,
    RENDER_SECONDS,
    BoundedSandbox,
    RenderLimitExceeded,
)
from frogdesk.models.gguf_header import read_header, string_items


def _raise_exception(message: str) -> NoReturn:
    """The `raise_exception` templates call to refuse a conversation they cannot format."""
    raise TemplateError(f"the chat template refused the conversation: {message}")


def _strftime_now(fmt: str) -> str:
    """The current local time formatted with `fmt` (templates stamp dates with it)."""
    return datetime.now().strftime(fmt)


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """JSON as Hugging Face renders it: non-ASCII kept, keys in the given order, `, ` and `: `."""
    return json.dumps(
        value,
        ensure_ascii=ensure_ascii,
        indent=indent,
        separators=separators,
        sort_keys=sort_keys,
    )


class _GenerationTag(Extension):
    """Accept `{% generation %}...{% endgeneration %}` (training-mask markers) and render the body."""

    tags = {"generation"}  # noqa: RUF012 - the Extension API reads a class attribute

    def parse(self, parser: jinja2.parser.Parser) -> list[jinja2.nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def _make_environment() -> BoundedSandbox:
    env = BoundedSandbox(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[loopcontrols, _GenerationTag],
    )
    env.filters["tojson"] = _tojson
    env.bound_filters()  # tojson too: its indent and separators write text
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


class ChatTemplate:
    """A compiled chat template that renders message lists into prompt text."""

    def __init__(
        self,
        source: str,
        bos_token: str = "",
        eos_token: str = "",
        origin: str = "",
        *,
        render_seconds: float = RENDER_SECONDS,
        max_output_chars: int = MAX_OUTPUT_CHARS,
    ) -> None:
        self.render_seconds = render_seconds
        self.max_output_chars = max_output_chars
        self.origin = origin
        """The model file the template came from (named in error messages)."""
        if not source.strip():
            raise TemplateError(self._where("the chat template is empty"))
        self.source = source
        """The Jinja source as stored in the model."""
        self.bos_token = bos_token
        self.eos_token = eos_token
        self._env = _make_environment()
        try:
            self._template = self._env.from_string(source)
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(
                self._where(
                    f"the chat template does not compile: {exc.message} "
                    f"(template line {exc.lineno})"
                )
            ) from None

    def _where(self, message: str) -> str:
        return f"{self.origin}: {message}" if self.origin else message

    def render(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema] = (),
        *,
        add_generation_prompt: bool,
        enable_thinking: bool = True,
        **extra: Any,
    ) -> str:
        """The prompt text for `messages` (and `tools`, when any), as the model was trained on.

        `extra` adds template variables; a template that fails raises `TemplateError`, and
        so does one that renders longer than RENDER_SECONDS or more than MAX_OUTPUT_CHARS
        (the template is code from a model file: it must not hang or flood FrogDesk).
        """
        context: dict[str, Any] = {
            "messages": [message.to_template_dict() for message in messages],
            "add_generation_prompt": add_generation_prompt,
            "enable_thinking": enable_thinking,
            "bos_token": self.bos_token,
            "eos_token": self.eos_token,
            # Hugging Face passes None when there are no tools; templates test for it.
            "tools": [dict(tool) for tool in tools] if tools else None,
        }
        context.update(extra)
        try:
            with self._env.bounded(self.render_seconds, self.max_output_chars) as budget:
                parts: list[str] = []
                size = 0
                for part in self._template.generate(**context):
                    size += len(part)
                    if size > budget.max_chars:
                        raise RenderLimitExceeded(f"wrote more than {budget.max_chars} characters")
                    budget.check()
                    parts.append(part)
                return "".join(parts)
        except TemplateError:
            raise
        except RenderLimitExceeded as exc:
            raise TemplateError(
                self._where(
                    f"the chat template {exc} and was stopped; use a model file with a working template"
                )
            ) from None
        except Exception as exc:  # the template is untrusted code from a model file
            raise TemplateError(
                self._where(f"the chat template failed: {type(exc).__name__}: {exc}")
            ) from None


def _whole(value: Any) -> int | None:
    """A token id from a header value (an int, not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def load_gguf_template(path: Path) -> ChatTemplate:
    """The chat template stored in a GGUF file, with its BOS and EOS token texts.

    Raises `TemplateError` when the file has no `tokenizer.chat_template`.
    """
    try:
        header = read_header(path)
        source = header.metadata.get("tokenizer.chat_template")
        if not isinstance(source, str):
            raise TemplateError(f"{path}: the GGUF has no tokenizer.chat_template")
        bos_id = _whole(header.metadata.get("tokenizer.ggml.bos_token_id"))
        eos_id = _whole(header.metadata.get("tokenizer.ggml.eos_token_id"))
        ids = [i for i in (bos_id, eos_id) if i is not None]
        texts = string_items(path, header, "tokenizer.ggml.tokens", ids)
    except (OSError, ValueError) as exc:
        raise TemplateError(f"{path}: cannot read GGUF metadata: {exc}") from None
    bos = texts.get(bos_id, "") if bos_id is not None else ""
    eos = texts.get(eos_id, "") if eos_id is not None else ""
    return ChatTemplate(source, bos_token=bos, eos_token=eos, origin=str(path))
