"""One llama.cpp context on sequence 0: decoding, logits, memory trimming and state snapshots."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import llama_cpp

from frogdesk.engine.llama.decode.compute_thread import llama_decode
from frogdesk.engine.llama.errors import DecodeError, ModelLoadError
from frogdesk.engine.llama.load.model import KV_CACHE_TYPES, LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions

if TYPE_CHECKING:
    from frogdesk.engine.llama.decode.sampling import Pick, Sampler

SEQ = 0
"""The one sequence FrogDesk uses; llama_memory_seq_rm is always called with it, never -1."""
PARTIAL = llama_cpp.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY


class LlamaContext:
    """A context of its own with a reusable batch, as a `DecodeTarget` on sequence 0."""

    def __init__(self, model: LlamaModel, params: LlamaOptions, n_seq_max: int = 1) -> None:
        if params.kv_cache_type not in KV_CACHE_TYPES:
            names = ", ".join(KV_CACHE_TYPES)
            raise ValueError(f"unknown KV-cache type {params.kv_cache_type!r} (one of {names})")
        self.model = model
        cparams = llama_cpp.llama_context_default_params()
        # each of n_seq_max sequences has a KV stream of its own (not unified): the
        # training length bounds one sequence, so the whole context is n_seq_max of them
        ceiling = model.n_ctx_train * n_seq_max
        n_ctx = min(params.n_ctx, ceiling) if model.n_ctx_train > 0 else params.n_ctx
        cparams.n_ctx = n_ctx
        cparams.n_batch = params.n_batch
        cparams.n_ubatch = params.ubatch
        cparams.n_seq_max = n_seq_max
        if n_seq_max > 1:
            cparams.kv_unified = False  # a KV stream per sequence: each decodes as if alone
        cparams.n_threads = params.threads
        cparams.n_threads_batch = params.threads
        cparams.flash_attn_type = (
            llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
            if params.flash_attn_for(model.is_hybrid)
            else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        )
        cparams.type_k = KV_CACHE_TYPES[params.kv_cache_type]
        cparams.type_v = KV_CACHE_TYPES[params.kv_cache_type]
        cparams.no_perf = True
        ctx = llama_cpp.llama_init_from_model(model.handle, cparams)
        if not ctx:
            lines = [line for line in model.log.lines[-5:] if line.strip()]
            raise ModelLoadError(
                model.path,
                "context_failed",
                "cannot create a context of "
                f"{n_ctx} tokens: " + ("; ".join(lines) or "out of memory?"),
            )
        self._ctx: Any = ctx
        self.n_ctx = int(llama_cpp.llama_n_ctx(ctx))
        self.n_batch = int(llama_cpp.llama_n_batch(ctx))
        self.n_ubatch = int(llama_cpp.llama_n_ubatch(ctx))
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        self._mem = llama_cpp.llama_get_memory(ctx)
        self.observers: list[Callable[[Sequence[int], int], None]] = []
        """Called with (tokens, start) after each successful decode of sequence 0 (a draft
        context that follows this one)."""

    @property
    def handle(self) -> Any:
        """The `llama_context *` for low-level calls."""
        if self._ctx is None:
            raise RuntimeError("the context is closed")
        return self._ctx

    @property
    def can_verify(self) -> bool:
        """Whether `decode_rows` works (always: the batch is this sequence's alone)."""
        return True

    def decode(
        self,
        tokens: Sequence[int],
        start: int,
        *,
        between_chunks: Callable[[int], bool] | None = None,
    ) -> int:
        """Decode `tokens` at positions start.. in batches; logits only for the last token.

        `between_chunks(done)` runs after each batch; returning False stops early. Returns
        the number of tokens decoded.
        """
        done = 0
        batch = self._batch
        # A prefill that can be stopped hands llama.cpp one ubatch per call, so a stop waits
        # for one ubatch's compute, not a whole batch's (512 tokens of a 4B model take many
        # seconds on a CPU); the compute is the same, as llama.cpp splits a batch into ubatches.
        size = self.n_ubatch if between_chunks is not None else self.n_batch
        while done < len(tokens):
            chunk = tokens[done : done + size]
            last_chunk = done + len(chunk) == len(tokens)
            for i, token in enumerate(chunk):
                batch.token[i] = token
                batch.pos[i] = start + done + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = SEQ
                batch.logits[i] = False
            batch.logits[len(chunk) - 1] = last_chunk
            batch.n_tokens = len(chunk)
            rc = llama_decode(self.handle, batch)
            if rc != 0:
                raise DecodeError(f"llama_decode failed with code {rc} at position {start + done}")
            self._decoded(chunk, start + done)
            done += len(chunk)
            if between_chunks is not None and not last_chunk and not between_chunks(done):
                break
        return done

    def sample(self, sampler: Sampler, row: int = -1) -> int:
        """Sample the next token from batch row `row` of the last batch (the last row)."""
        return sampler.sample(self.handle, row)

    def choose(self, sampler: Sampler, row: int = -1) -> Pick:
        """The sampler's pick from batch row `row` of the last batch, not yet accepted."""
        return sampler.choose(self.handle, row)

    def decode_one(self, token: int, pos: int) -> None:
        """Decode a single token at `pos`, with logits (the generation step)."""
        batch = self._batch
        batch.token[0] = token
        batch.pos[0] = pos
        batch.n_seq_id[0] = 1
        batch.seq_id[0][0] = SEQ
        batch.logits[0] = True
        batch.n_tokens = 1
        rc = llama_decode(self.handle, batch)
        if rc != 0:
            raise DecodeError(f"llama_decode failed with code {rc} at position {pos}")
        self._decoded((token,), pos)

    def decode_rows(self, tokens: Sequence[int], start: int) -> None:
        """Decode `tokens` (at most one batch) at positions start.., with logits for every row.

        Row i's logits (`sample` index i) follow tokens[: i + 1]: how a draft is verified.
        """
        if not 0 < len(tokens) <= self.n_batch:
            raise ValueError(f"a verification batch holds 1 to {self.n_batch} tokens")
        batch = self._batch
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = start + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = SEQ
            batch.logits[i] = True
        batch.n_tokens = len(tokens)
        rc = llama_decode(self.handle, batch)
        if rc != 0:
            raise DecodeError(f"llama_decode failed with code {rc} at position {start}")
        self._decoded(tokens, start)

    def _decoded(self, tokens: Sequence[int], start: int) -> None:
        for observer in self.observers:
            observer(tokens, start)

    def logits(self) -> list[float]:
        """A copy of the logits of the last decoded token."""
        ptr = llama_cpp.llama_get_logits_ith(self.handle, -1)
        return list(ptr[: self.model.n_vocab])

    def clear(self) -> None:
        """Forget every position (KV cache and recurrent state)."""
        llama_cpp.llama_memory_clear(self._mem, True)

    def trim(self, pos: int) -> bool:
        """Drop positions >= pos of sequence 0; False when the memory cannot (recurrent state)."""
        return bool(llama_cpp.llama_memory_seq_rm(self._mem, SEQ, pos, -1))

    def snapshot(self) -> bytes:
        """The recurrent part of sequence 0's state (constant size; empty for a transformer)."""
        size = int(llama_cpp.llama_state_seq_get_size_ext(self.handle, SEQ, PARTIAL))
        buf = (ctypes.c_uint8 * size)()
        written = int(llama_cpp.llama_state_seq_get_data_ext(self.handle, buf, size, SEQ, PARTIAL))
        return bytes(buf[:written])

    def restore(self, data: bytes, pos: int) -> bool:
        """Restore a `snapshot` taken when sequence 0 held exactly `pos` tokens.

        Sets the recurrent state back, then drops the attention cache from `pos` on.
        """
        buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        read = int(
            llama_cpp.llama_state_seq_set_data_ext(self.handle, buf, len(data), SEQ, PARTIAL)
        )
        if read == 0 and data:
            return False
        return self.trim(pos)

    def held_positions(self) -> tuple[int, int]:
        """The lowest and highest position sequence 0 holds ((-1, -1): none)."""
        return held_positions(self._mem, SEQ)

    def save_sequence(self) -> bytes:
        """Sequence 0's whole state (KV cache and recurrent state)."""
        return sequence_bytes(self.handle, SEQ)

    def load_sequence(self, data: bytes) -> bool:
        """Replace sequence 0's state with `save_sequence` bytes; False when refused."""
        return set_sequence_bytes(self.handle, SEQ, data)

    def close(self) -> None:
        """Free the batch and the context."""
        if self._ctx is not None:
            llama_cpp.llama_batch_free(self._batch)
            llama_cpp.llama_free(self._ctx)
            self._ctx = None


def sequence_bytes(handle: Any, seq: int) -> bytes:
    """Sequence `seq`'s whole state in the context `handle` (empty when llama.cpp fails)."""
    size = int(llama_cpp.llama_state_seq_get_size(handle, seq))
    buf = (ctypes.c_uint8 * size)()
    written = int(llama_cpp.llama_state_seq_get_data(handle, buf, size, seq))
    return bytes(memoryview(buf)[: max(written, 0)])


def set_sequence_bytes(handle: Any, seq: int, data: bytes) -> bool:
    """Replace sequence `seq`'s state with `sequence_bytes` data; whether llama.cpp took it all."""
    buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    return int(llama_cpp.llama_state_seq_set_data(handle, buf, len(data), seq)) == len(data)


def held_positions(memory: Any, seq: int) -> tuple[int, int]:
    """The lowest and highest position sequence `seq` holds in `memory` ((-1, -1): none)."""
    low = int(llama_cpp.llama_memory_seq_pos_min(memory, seq))
    return low, int(llama_cpp.llama_memory_seq_pos_max(memory, seq))
