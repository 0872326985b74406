"""The `llama` backend: an embedded llama.cpp model that never re-reads the conversation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from frogdesk.engine.errors import TemplateError
from frogdesk.engine.llama.conversation.replying import ConversationBackend
from frogdesk.engine.llama.conversation.segments import reply_closing
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.log import LlamaLogCapture
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative.drafters import Drafting, drafting_for
from frogdesk.engine.template import ChatTemplate
from frogdesk.engine.toolcall.detect import choose_dialect


def model_template(model: LlamaModel, model_path: Path) -> ChatTemplate:
    """The chat template stored in the GGUF, with the model's own BOS and EOS pieces."""
    source = model.chat_template()
    if source is None:
        raise TemplateError(f"{model_path}: the GGUF has no chat template")
    return ChatTemplate(
        source,
        bos_token=model.piece(model.bos).decode("utf-8", "replace"),
        eos_token=model.piece(model.eos).decode("utf-8", "replace"),
        origin=str(model_path),
    )


class LlamaBackend(ConversationBackend):
    """A GGUF run in-process on a context of its own, with drafting when the setting is on."""

    context: LlamaContext
    drafting: Drafting

    def __init__(
        self,
        model_path: Path,
        options: LlamaOptions | None = None,
        *,
        progress: Callable[[float], None] | None = None,
    ) -> None:
        options = options if options is not None else LlamaOptions()
        log = LlamaLogCapture(verbose=options.verbose)
        model = LlamaModel(
            Path(model_path), options, log=log, progress=progress, load_mtp=options.speculative
        )
        context: LlamaContext | None = None
        try:
            context = LlamaContext(model, options)
            template = model_template(model, Path(model_path))
            super().__init__(options, log, model, context, template, choose_dialect(template),
                             reply_closing(template))  # fmt: skip
            self.drafting = drafting_for(model, context, options)
        except BaseException:
            if context is not None:
                context.close()
            model.close()
            raise
        self.load_log = log.lines  # the MTP draft context's lines too, when there is one

    @classmethod
    def like(cls, other: ConversationBackend, model_path: Path) -> LlamaBackend:
        """A backend on another file (another quant) with the same options as `other`.

        Follow with `prefill(messages, tools)` to carry a conversation over; its price in
        tokens is `reprefill_cost`.
        """
        return cls(model_path, other.options)

    def close(self) -> None:
        """Free the contexts and the model; llama.cpp's log goes back to its default handler."""
        self.drafting.close()
        self.context.close()
        self.model.close()
        self._log.uninstall()
