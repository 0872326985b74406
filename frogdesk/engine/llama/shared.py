"""N conversations on one model: the llama backend's sequences of one shared context.

Each attempt gets a `SequenceBackend`, the llama backend on one sequence (its own token
transcript, snapshots and no-re-read planning, exactly as with a context of its own).
The first reply of any of them evaluates the shared opening (system prompt, tools,
task) once, and its cells (KV cache and, for hybrid models, the recurrent state) are
copied to every other sequence before it moves on.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import llama_cpp

from frogdesk.engine.chat import EngineEvent, GenerationSettings, Message, ToolSchema
from frogdesk.engine.llama.backend import model_template
from frogdesk.engine.llama.conversation.replying import ConversationBackend
from frogdesk.engine.llama.conversation.segments import reply_closing
from frogdesk.engine.llama.decode.batch import BatchScheduler, BatchStats, SequenceContext
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.log import LlamaLogCapture
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.toolcall.detect import choose_dialect


class SharedLlama:
    """One model and one context of `n_seq` sequences, handed out as N backends.

    The model may be one a session already has loaded: its context stays, the shared one
    is made beside it (the weights are read, never written, by both).
    """

    def __init__(
        self,
        model_path: Path,
        n_seq: int,
        options: LlamaOptions,
        *,
        model: LlamaModel | None = None,
        mix_prefill: bool = True,
    ) -> None:
        """Load `model_path` (or use `model`, already loaded from it, which stays its
        owner's: closing this leaves it loaded) and make a context of `n_seq` sequences."""
        # drafting verifies several rows of one sequence: the shared batches take one row each
        options = replace(options, speculative=False)
        self.options = options
        self._owns_model = model is None
        if model is None:
            self.log = LlamaLogCapture(verbose=options.verbose)
            self.model = LlamaModel(Path(model_path), options, log=self.log)
        else:
            self.log = model.log
            self.model = model
        try:
            # n_ctx is per sequence; LlamaContext caps each at the training length
            whole = replace(options, n_ctx=options.n_ctx * n_seq)
            self.context = LlamaContext(self.model, whole, n_seq_max=n_seq)
            self.template = model_template(self.model, Path(model_path))
            self.dialect_choice = choose_dialect(self.template)
            self.closing = reply_closing(self.template)
        except BaseException:
            if self._owns_model:
                self.model.close()
            raise
        self.n_seq = n_seq
        self.n_ctx_seq = int(llama_cpp.llama_n_ctx_seq(self.context.handle))
        self.scheduler = BatchScheduler(self.context, n_seq, mix_prefill=mix_prefill)
        self.backends = [SequenceBackend(self, seq) for seq in range(n_seq)]
        self.prefix_evaluated = 0
        """Tokens the shared opening took to evaluate (once, for every sequence)."""
        self._prefix_lock = threading.Lock()
        self._prefix_done = False

    @property
    def stats(self) -> BatchStats:
        """Batches and tokens decoded so far."""
        return self.scheduler.stats

    def share_prefix(
        self,
        owner: SequenceBackend,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        enable_thinking: bool,
    ) -> None:
        """Evaluate the opening on `owner`'s sequence and copy it to every empty sequence.

        Only the first call does anything; it runs before `owner` generates, so the copied
        cells hold exactly the opening (a recurrent state cannot be copied in part).
        """
        with self._prefix_lock:
            if self._prefix_done:
                return
            self._prefix_done = True
            if owner.transcript.tokens:
                return
            conversation = owner.conversation
            plan = conversation.plan(
                messages, tools, enable_thinking=enable_thinking, generation_prompt=False
            )
            conversation.apply(plan)
            try:
                self.prefix_evaluated = owner.catch_up()
            finally:
                owner.slot.release()
            for other in self.backends:
                if other is owner or other.transcript.tokens:
                    continue
                owner.slot.copy_to(other.seq)
                other.conversation.adopt(conversation.copied())
                if other.generating:
                    # It waits for this lock inside `generate`, which ends by releasing its
                    # slot: the first batches wait for it, so the attempts start together.
                    self.scheduler.join(other.seq)

    def close(self) -> None:
        """Free the context, and the model when it was loaded here."""
        self.scheduler.close()
        self.context.close()
        if self._owns_model:
            self.model.close()
            self.log.uninstall()


class SequenceBackend(ConversationBackend):
    """The llama backend on one sequence of a `SharedLlama` (built by it, not loaded).

    It never drafts: a shared batch gives each sequence one row of logits.
    """

    context: SequenceContext

    def __init__(  # the model and context are the shared ones: nothing is loaded here
        self, shared: SharedLlama, seq: int
    ) -> None:
        slot = SequenceContext(shared.scheduler, seq, shared.n_ctx_seq)
        super().__init__(shared.options, shared.log, shared.model, slot, shared.template,
                         shared.dialect_choice, shared.closing)  # fmt: skip
        self.shared = shared
        self.seq = seq
        self.slot = slot
        self.generating = False
        """Inside `generate` (from its start to its slot's release)."""

    def generate(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSchema],
        settings: GenerationSettings,
        cancel: threading.Event | None = None,
    ) -> Iterator[EngineEvent]:
        """Stream the next reply, decoding in the shared batches; see `Backend.generate`."""
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("this backend is already generating")
        self.generating = True
        try:
            self.shared.share_prefix(self, messages, tools, settings.enable_thinking)
            yield from self._generate(messages, tools, settings, cancel)
        finally:
            self.generating = False
            self.slot.release()  # the others need not wait for this one's logits
            self._busy.release()

    def close(self) -> None:
        """Free this sequence's cells; the shared model stays until its owner closes it."""
        self.slot.close()
