"""The drafting a llama backend does: its drafters, the policy over them, and what they read.

A backend of its own drafts from the conversation's own tokens (n-gram) and, when the GGUF
keeps one, from the model's MTP head; `DrafterChoice` then picks between them per draft.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from frogdesk.engine.chat import Message
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative.choice import DrafterChoice
from frogdesk.engine.llama.speculative.drafting import Drafter, DraftPolicy
from frogdesk.engine.llama.speculative.listing import unnumbered
from frogdesk.engine.llama.speculative.mtp import MtpDrafter, mtp_unavailable
from frogdesk.engine.llama.speculative.ngram import NgramDrafter

_FILE_LOG = logging.getLogger("frogdesk.llama")

OFF = "off: speculative decoding is off"


@dataclass
class Drafting:
    """What proposes drafts (`drafter`) and decides how much of one to verify (`policy`).

    `enabled` is the setting: when False no reply drafts, whatever the drafter would say.
    The policy is kept across replies (acceptance and batch costs measured so far).
    """

    drafter: Drafter
    policy: DraftPolicy
    ngram: NgramDrafter
    """Drafts from the conversation's own tokens (alone, or beside the MTP head)."""
    enabled: bool = True
    mtp: MtpDrafter | None = None
    mtp_status: str = OFF
    """Whether the MTP head drafts ("on") or why not ("off: ...")."""
    _remembered: set[int] = field(default_factory=set)
    """Tool results already given to the n-gram drafter (by hash of their text)."""

    def remember_listings(
        self, messages: Sequence[Message], tokenize: Callable[[str], list[int]]
    ) -> None:
        """Give the n-gram drafter the plain lines of files the conversation read with numbers."""
        for message in messages:
            if message.role != "tool" or not message.content:
                continue
            key = hash(message.content)
            if key in self._remembered:
                continue
            self._remembered.add(key)
            text = unnumbered(message.content)
            if text is not None:
                self.ngram.remember(tokenize(text))

    def close(self) -> None:
        """Free the MTP draft context, when there is one."""
        if self.mtp is not None:
            self.mtp.close()
            self.mtp = None


def drafting_for(model: LlamaModel, context: LlamaContext, options: LlamaOptions) -> Drafting:
    """The n-gram drafter, and the model's MTP head beside it when the GGUF has one and
    `options.speculative` is on (a draft context of its own that follows `context`)."""
    ngram = NgramDrafter(unambiguous=True)
    hybrid = model.is_hybrid
    drafting = Drafting(ngram, DraftPolicy(rollback_redecodes=hybrid), ngram, options.speculative)
    if not options.speculative:
        return drafting
    reason = mtp_unavailable(model)
    if not reason:
        try:
            drafting.mtp = MtpDrafter(model, context, options)
        except RuntimeError as exc:
            reason = str(exc)
    if drafting.mtp is None:
        drafting.mtp_status = f"off: {reason}"
    else:
        choice = DrafterChoice([ngram, drafting.mtp], rollback_redecodes=hybrid)
        drafting.drafter, drafting.policy = choice, choice
        drafting.mtp_status = "on"
    _FILE_LOG.info("MTP drafting %s", drafting.mtp_status)
    return drafting
