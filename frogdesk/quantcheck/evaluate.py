"""Full next-token distributions and greedy continuations from one GGUF, through llama.cpp."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from frogdesk.errors import ModelLoadError
from frogdesk.system import thread_count

FloatArray = npt.NDArray[np.float32]


@dataclass(frozen=True)
class EvalOptions:
    """How a model is run for the check: context size, batch size, threads and GPU layers."""

    n_ctx: int = 4096
    n_batch: int = 0  # 0: as large as keeps the logits buffer near 128 MiB (at most 512)
    threads: int = 0
    gpu_layers: int = 0


_SOFTMAX_ROWS = 64
_LOGITS_BUDGET_BYTES = 128 * 1024 * 1024


def _auto_batch(path: Path) -> int:
    """A batch size whose all-token logits stay near the budget for this vocabulary."""
    import llama_cpp

    probe = llama_cpp.Llama(model_path=str(path), vocab_only=True, n_ctx=64, verbose=False)
    try:
        n_vocab = int(probe.n_vocab())
    finally:
        probe.close()
    return int(max(32, min(512, _LOGITS_BUDGET_BYTES // (4 * max(n_vocab, 1)))))


def log_softmax(logits: FloatArray) -> FloatArray:
    """Row-wise log-probabilities, computed in float64 for stability."""
    wide = logits.astype(np.float64)
    wide -= wide.max(axis=-1, keepdims=True)
    wide -= np.log(np.exp(wide).sum(axis=-1, keepdims=True))
    return wide.astype(np.float32)


class ModelEvaluator:
    """One loaded model; scores token windows and continues prompts greedily, one at a time."""

    def __init__(self, path: Path, options: EvalOptions | None = None) -> None:
        import llama_cpp

        # loads llama_cpp: decodes run on the process's one compute thread, as a session's
        from frogdesk.engine.llama.decode.compute_thread import llama_decode

        self._lib: Any = llama_cpp
        self._llama_decode = llama_decode
        self.options = options or EvalOptions()
        threads = thread_count(self.options.threads)
        try:
            n_batch = self.options.n_batch or _auto_batch(path)
            self._llm: Any = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=self.options.n_ctx,
                n_batch=n_batch,
                n_ubatch=n_batch,
                n_threads=threads,
                n_threads_batch=threads,
                n_gpu_layers=self.options.gpu_layers,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ModelLoadError(
                Path(path), "load_failed", f"llama.cpp could not load it: {exc}"
            ) from exc
        self.n_vocab: int = int(self._llm.n_vocab())
        self._vocab = llama_cpp.llama_model_get_vocab(self._llm.model)
        self.n_batch = n_batch
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self._closed = False

    def close(self) -> None:
        """Free the batch, the context and the model."""
        if not self._closed:
            self._closed = True
            self._lib.llama_batch_free(self._batch)
            self._llm.close()

    def __enter__(self) -> ModelEvaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def tokenize(self, text: str) -> list[int]:
        """Tokens of text, special tokens parsed, BOS added only where the model asks for it."""
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=True))

    def detokenize(self, tokens: list[int]) -> str:
        """Text of tokens, special tokens included."""
        data: bytes = self._llm.detokenize(tokens, special=True)
        return data.decode("utf-8", errors="replace")

    def _clear(self) -> None:
        lib = self._lib
        lib.llama_memory_clear(lib.llama_get_memory(self._llm.ctx), True)

    def _decode(self, tokens: list[int], start: int, want_logits: bool | None) -> FloatArray:
        """Decode one chunk at positions start..; logits for every token, the last, or none."""
        batch = self._batch
        n = len(tokens)
        batch.n_tokens = n
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = start + i
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = 1 if want_logits or (want_logits is None and i == n - 1) else 0
        rc = self._llama_decode(self._llm.ctx, batch)
        if rc != 0:
            raise RuntimeError(f"llama_decode failed with code {rc}")
        rows = n if want_logits else (1 if want_logits is None else 0)
        if rows == 0:
            return np.empty((0, self.n_vocab), dtype=np.float32)
        ptr = self._lib.llama_get_logits(self._llm.ctx)
        array = np.ctypeslib.as_array(
            ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(rows, self.n_vocab)
        )
        return np.array(array, dtype=np.float32)

    def window_logprobs(self, tokens: list[int]) -> Iterator[tuple[int, FloatArray]]:
        """For a fresh sequence, yield (offset, log-probs) chunks; row j predicts tokens[offset+j+1]."""
        if len(tokens) > self.options.n_ctx:
            raise ValueError(f"window of {len(tokens)} tokens exceeds n_ctx {self.options.n_ctx}")
        self._clear()
        step = self.n_batch
        for start in range(0, len(tokens), step):
            chunk = tokens[start : start + step]
            logits = self._decode(chunk, start, True)
            end = min(len(chunk), len(tokens) - 1 - start)
            for sub in range(0, max(end, 0), _SOFTMAX_ROWS):
                yield start + sub, log_softmax(logits[sub : min(end, sub + _SOFTMAX_ROWS)])

    def greedy(self, prompt: list[int], max_tokens: int, stop: str) -> str:
        """Greedy continuation of prompt: stops at an end-of-generation token, stop, or max_tokens."""
        if len(prompt) + max_tokens > self.options.n_ctx:
            raise ValueError(
                f"prompt of {len(prompt)} tokens does not fit n_ctx {self.options.n_ctx}"
            )
        self._clear()
        step = self.n_batch
        logits = np.empty((0, self.n_vocab), dtype=np.float32)
        for start in range(0, len(prompt), step):
            chunk = prompt[start : start + step]
            last = start + step >= len(prompt)
            logits = self._decode(chunk, start, None if last else False)
        out: list[int] = []
        position = len(prompt)
        for _ in range(max_tokens):
            token = int(np.argmax(logits[-1]))
            if self._lib.llama_vocab_is_eog(self._vocab, token):
                break
            out.append(token)
            if stop in self.detokenize(out):
                break
            logits = self._decode([token], position, None)
            position += 1
        return self.detokenize(out)
