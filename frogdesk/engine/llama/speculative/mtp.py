"""A drafter that runs the model's own multi-token-prediction (NextN) head.

Some GGUFs keep the checkpoint's MTP block (`<arch>.nextn_predict_layers` > 0): one more
full-attention decoder block that predicts the token after next from the token embedding
and the trunk's last hidden state. llama.cpp runs it in a second context of type
`LLAMA_CONTEXT_TYPE_MTP` on the same weights, with a KV cache of its own for that block.

The draft context follows the target context position by position: after every target
decode, the same tokens are decoded in the draft context, token p paired with the target's
hidden state at p - 1 (the pairing llama.cpp's `draft-mtp` speculative driver uses). A
draft then starts from the newest sampled token and the hidden state before it, and each
drafted token is fed back with the draft head's own hidden state. Rejected or stale
positions are dropped from the draft cache before the next decode there; the target's
output never depends on the draft context (drafts are verified by the target model).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

import llama_cpp

from frogdesk.engine.llama.decode.context import SEQ, LlamaContext
from frogdesk.engine.llama.load.model import KV_CACHE_TYPES, LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative.nextn import NextnCalls, load_nextn, nextn_layers
from frogdesk.models.memory import MTP_ARCHITECTURES, MTP_UBATCH

MTP_MAX_DRAFT = 4
"""The most tokens one MTP draft chains (a single head loses accuracy at each step)."""


def mtp_unavailable(model: LlamaModel) -> str:
    """Why the MTP drafter cannot run on `model` ("" when it can)."""
    arch = model.architecture
    layers = nextn_layers(model.header)
    if layers == 0:
        return f"no MTP layer in the GGUF ({arch}.nextn_predict_layers is absent)"
    if arch not in MTP_ARCHITECTURES:
        return f"MTP drafting is not supported for architecture {arch!r}"
    if layers != 1:
        return f"llama.cpp's {arch} MTP graph runs one NextN block; the GGUF has {layers}"
    if not model.mtp_loaded:
        return "the model was loaded without its MTP layer"
    loaded = int(llama_cpp.llama_model_n_layer_nextn(model.handle))
    if loaded != layers:
        return f"llama.cpp loaded {loaded} NextN layers of {layers}"
    calls = load_nextn()
    return calls if isinstance(calls, str) else ""


class MtpDrafter:
    """Proposes tokens with the NextN head, in a draft context kept in step with the target."""

    name = "mtp"
    max_draft = MTP_MAX_DRAFT
    """The most tokens one proposal holds."""

    def __init__(self, model: LlamaModel, target: LlamaContext, options: LlamaOptions) -> None:
        """Make the draft context and start following `target` (check `mtp_unavailable` first).

        Raises RuntimeError when llama.cpp refuses the draft context.
        """
        calls = load_nextn()
        if isinstance(calls, str):
            raise RuntimeError(calls)
        self._calls: NextnCalls = calls
        self._target = target
        self.n_embd = int(llama_cpp.llama_model_n_embd(model.handle))
        cparams = llama_cpp.llama_context_default_params()
        cparams.ctx_type = llama_cpp.LLAMA_CONTEXT_TYPE_MTP
        cparams.n_ctx = target.n_ctx
        cparams.n_batch = target.n_batch  # one call follows a whole target batch
        cparams.n_ubatch = min(target.n_batch, MTP_UBATCH)
        cparams.n_seq_max = 1
        cparams.n_threads = options.threads
        cparams.n_threads_batch = options.threads
        cparams.flash_attn_type = (
            llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
            if options.flash_attn_for(model.is_hybrid)
            else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        )
        cparams.type_k = KV_CACHE_TYPES.get(options.kv_cache_type, llama_cpp.GGML_TYPE_F16)
        cparams.type_v = cparams.type_k
        cparams.no_perf = True
        ctx = llama_cpp.llama_init_from_model(model.handle, cparams)
        if not ctx:
            raise RuntimeError("llama.cpp could not make the MTP draft context")
        self._ctx: Any = ctx
        self._mem = llama_cpp.llama_get_memory(ctx)
        self._batch: Any = llama_cpp.llama_batch_ext_init(ctx)
        self._greedy: Any = llama_cpp.llama_sampler_init_greedy()
        # Target: a hidden-state row for every token of a batch; draft: for its output rows.
        calls.set_embeddings_nextn(target.handle, True, False)
        calls.set_embeddings_nextn(ctx, True, True)
        self._rows = (ctypes.c_float * 0)()
        """The target's hidden states of its last decoded batch, row after row."""
        self._rows_start = 0
        self._before: ctypes.Array[ctypes.c_float] | None = None
        """The target's hidden state at `_rows_start - 1`, if known."""
        self.failed = ""
        """Why drafting stopped for good ("" while it works)."""
        self.mirrored = 0
        """Target tokens decoded again in the draft context."""
        target.observers.append(self.observe)

    # Following the target -------------------------------------------------------

    def _hidden(self, pos: int) -> ctypes.Array[ctypes.c_float] | None:
        """The target's hidden state after the token at `pos`, if it is still at hand."""
        n = len(self._rows) // self.n_embd if self.n_embd else 0
        if self._rows_start <= pos < self._rows_start + n:
            row = (ctypes.c_float * self.n_embd)()
            offset = (pos - self._rows_start) * self.n_embd * ctypes.sizeof(ctypes.c_float)
            ctypes.memmove(row, ctypes.addressof(self._rows) + offset, ctypes.sizeof(row))
            return row
        if pos == self._rows_start - 1:
            return self._before
        return None

    def _add(self, token: int, pos: int, hidden: ctypes.Array[ctypes.c_float], out: bool) -> None:
        idx = int(llama_cpp.llama_batch_ext_add_token(self._batch, SEQ, token))
        if idx < 0:
            raise RuntimeError(f"the MTP batch refused a token ({idx})")
        where = llama_cpp.llama_pos(pos)
        llama_cpp.llama_batch_ext_set_pos(self._batch, idx, ctypes.byref(where))
        # llama.cpp reads the hidden state as the entry's embedding (set_embd_state is a stub).
        embd = llama_cpp.llama_embd(
            ctypes.cast(hidden, ctypes.POINTER(ctypes.c_float)), 1, self.n_embd
        )
        if not llama_cpp.llama_batch_ext_set_embd_token(self._batch, idx, embd):
            raise RuntimeError("the MTP batch refused a hidden state")
        if out:
            llama_cpp.llama_batch_ext_set_output_logits(self._batch, idx, True)

    def observe(self, tokens: Sequence[int], start: int) -> None:
        """Decode in the draft context what the target just decoded at positions start.."""
        if self.failed or self._ctx is None or not tokens:
            return
        source = self._calls.get_embeddings_nextn(self._target.handle)
        if not source:
            self.failed = "llama.cpp gave no hidden states for the target's batch"
            return
        rows = (ctypes.c_float * (len(tokens) * self.n_embd))()
        ctypes.memmove(rows, source, ctypes.sizeof(rows))
        before = self._hidden(start - 1)
        if before is None:  # the conversation went back past what is kept: start from zeros
            before = (ctypes.c_float * self.n_embd)()
        llama_cpp.llama_memory_seq_rm(self._mem, SEQ, start, -1)
        llama_cpp.llama_batch_ext_clear(self._batch)
        try:
            for i, token in enumerate(tokens):
                hidden = before if i == 0 else self._row_view(rows, i - 1)
                self._add(token, start + i, hidden, False)
        except RuntimeError as exc:
            self.failed = str(exc)
            return
        rc = int(
            llama_cpp.llama_process(self._ctx, llama_cpp.LLAMA_PROCESS_TYPE_DECODE, self._batch)
        )
        if rc != 0:
            self.failed = f"llama_process on the MTP context failed with code {rc} at {start}"
            return
        self._rows, self._rows_start, self._before = rows, start, before
        self.mirrored += len(tokens)

    def _row_view(self, rows: ctypes.Array[ctypes.c_float], i: int) -> ctypes.Array[ctypes.c_float]:
        """Row `i` of `rows` without a copy (valid while `rows` lives)."""
        offset = i * self.n_embd * ctypes.sizeof(ctypes.c_float)
        view_type = ctypes.c_float * self.n_embd
        return view_type.from_buffer(rows, offset)

    # Drafting ---------------------------------------------------------------------

    def propose(self, tokens: Sequence[int], limit: int) -> list[int]:
        """Up to `limit` tokens after `tokens`, whose last one the target has not decoded yet."""
        if self.failed or self._ctx is None or limit <= 0 or not tokens:
            return []
        pos = len(tokens) - 1
        before = self._hidden(pos - 1)
        if before is None:
            return []
        hidden = (ctypes.c_float * self.n_embd)()
        ctypes.memmove(hidden, before, ctypes.sizeof(hidden))
        llama_cpp.llama_memory_seq_rm(self._mem, SEQ, pos, -1)
        token, out = tokens[-1], []
        for step in range(min(limit, self.max_draft)):
            llama_cpp.llama_batch_ext_clear(self._batch)
            try:
                self._add(token, pos + step, hidden, True)
            except RuntimeError as exc:
                self.failed = str(exc)
                break
            rc = int(
                llama_cpp.llama_process(self._ctx, llama_cpp.LLAMA_PROCESS_TYPE_DECODE, self._batch)
            )
            if rc != 0:
                self.failed = f"llama_process on the MTP context failed with code {rc}"
                break
            token = int(llama_cpp.llama_sampler_sample(self._greedy, self._ctx, 0))
            state = self._calls.get_embeddings_nextn_ith(self._ctx, 0)
            if not state:
                self.failed = "llama.cpp gave no hidden state for the draft row"
                break
            out.append(token)
            ctypes.memmove(hidden, state, ctypes.sizeof(hidden))
        return out

    def close(self) -> None:
        """Stop following the target and free the draft context."""
        if self._ctx is None:
            return
        if self.observe in self._target.observers:
            self._target.observers.remove(self.observe)
        llama_cpp.llama_sampler_free(self._greedy)
        llama_cpp.llama_batch_ext_free(self._batch)
        llama_cpp.llama_free(self._ctx)
        self._ctx = None
