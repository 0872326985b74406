"""A GGUF loaded through llama.cpp's low-level API: weights, vocabulary and metadata."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import llama_cpp

from frogdesk.engine.llama.errors import ModelLoadError
from frogdesk.engine.llama.load.gguf import GgufHeader, check_loadable
from frogdesk.engine.llama.load.log import LlamaLogCapture
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative.nextn import nextn_layers
from frogdesk.models.memory import MTP_ARCHITECTURES

KV_CACHE_TYPES: dict[str, int] = {
    "f32": llama_cpp.GGML_TYPE_F32,
    "f16": llama_cpp.GGML_TYPE_F16,
    "bf16": 30,
    "q8_0": llama_cpp.GGML_TYPE_Q8_0,
    "q5_1": llama_cpp.GGML_TYPE_Q5_1,
    "q5_0": llama_cpp.GGML_TYPE_Q5_0,
    "q4_1": llama_cpp.GGML_TYPE_Q4_1,
    "q4_0": llama_cpp.GGML_TYPE_Q4_0,
    "iq4_nl": llama_cpp.GGML_TYPE_IQ4_NL,
}
"""KV-cache type names FrogDesk accepts, with their ggml type codes."""


@dataclass(frozen=True)
class SamplingDefaults:
    """The model's own sampling defaults from `general.sampling.*` (None where absent)."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None


def _report(progress: Callable[[float], None], done: float) -> bool:
    """Hand llama.cpp's load fraction on; True lets the load go on."""
    progress(min(max(float(done), 0.0), 1.0))
    return True


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class LlamaModel:
    """Model weights and vocabulary; contexts are made from it (see `context`)."""

    loads: ClassVar[int] = 0
    """Models this process has loaded from their files (each holds its own weights)."""

    def __init__(
        self,
        path: Path,
        options: LlamaOptions | None = None,
        *,
        log: LlamaLogCapture | None = None,
        progress: Callable[[float], None] | None = None,
        load_mtp: bool = False,
    ) -> None:
        """Load `path`; `load_mtp` also loads its MTP (NextN) block if the file has one that
        FrogDesk can draft with."""
        self.path = path
        self.header: GgufHeader = check_loadable(path)
        self.log = log if log is not None else LlamaLogCapture()
        self.log.install()
        llama_cpp.llama_backend_init()
        params = llama_cpp.llama_model_default_params()
        options = options or LlamaOptions()
        params.n_gpu_layers = options.n_gpu_layers
        tensor_bytes = self.header.expected_size - self.header.data_offset
        self.use_mmap = options.mmap_for(self.header.repackable, tensor_bytes)
        """Whether the file is mapped (else read into memory)."""
        # this llama.cpp has no use_mmap field (a ctypes Structure ignores unknown names)
        params.load_mode = (
            llama_cpp.LLAMA_LOAD_MODE_MMAP if self.use_mmap else llama_cpp.LLAMA_LOAD_MODE_NONE
        )
        self.mtp_loaded = (
            load_mtp
            and nextn_layers(self.header) > 0
            and self.header.architecture in MTP_ARCHITECTURES
        )
        """Whether the GGUF's multi-token-prediction (NextN) block was loaded."""
        params.load_mtp = self.mtp_loaded
        if progress is not None:
            # llama.cpp reports the fraction loaded; the callback lives as long as the load
            report = llama_cpp.llama_progress_callback(lambda done, _user: _report(progress, done))
            params.progress_callback = report
        mark = self.log.mark()
        model = llama_cpp.llama_model_load_from_file(str(path).encode("utf-8"), params)
        if not model:
            raise self._load_failure(self.log.since(mark))
        self._model: Any = model
        LlamaModel.loads += 1
        self.vocab: Any = llama_cpp.llama_model_get_vocab(model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.is_hybrid = bool(llama_cpp.llama_model_is_hybrid(model))
        self.is_recurrent = bool(llama_cpp.llama_model_is_recurrent(model))
        self.add_bos = bool(llama_cpp.llama_vocab_get_add_bos(self.vocab))
        self.bos = int(llama_cpp.llama_vocab_bos(self.vocab))
        self.eos = int(llama_cpp.llama_vocab_eos(self.vocab))
        self._pieces: dict[int, bytes] = {}
        self._eog: dict[int, bool] = {}

    def _load_failure(self, lines: list[str]) -> ModelLoadError:
        text = "\n".join(lines)
        if "unknown model architecture" in text or "unsupported model architecture" in text:
            return ModelLoadError(
                self.path,
                "unsupported_architecture",
                f"llama.cpp does not support architecture {self.header.architecture!r}",
            )
        errors = [line.strip() for line in lines if "error" in line.lower()][-3:]
        reason = "; ".join(errors) if errors else "llama.cpp could not load it"
        return ModelLoadError(self.path, "load_failed", f"cannot load the model: {reason}")

    @property
    def handle(self) -> Any:
        """The `llama_model *` for low-level calls."""
        if self._model is None:
            raise RuntimeError("the model is closed")
        return self._model

    @property
    def architecture(self) -> str:
        """llama.cpp's architecture name, e.g. `qwen35` or `llama`."""
        return self.header.architecture

    @property
    def n_ctx_train(self) -> int:
        """The context length the model was trained with."""
        return int(llama_cpp.llama_model_n_ctx_train(self.handle))

    def metadata(self, key: str) -> str | None:
        """One GGUF metadata value as llama.cpp prints it, or None."""
        buf = ctypes.create_string_buffer(4096)
        n = llama_cpp.llama_model_meta_val_str(self.handle, key.encode(), buf, len(buf))
        if n < 0:
            return None
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            llama_cpp.llama_model_meta_val_str(self.handle, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", errors="replace")

    def chat_template(self) -> str | None:
        """The Jinja chat template stored in the GGUF, if any."""
        value = self.header.metadata.get("tokenizer.chat_template")
        return value if isinstance(value, str) else None

    def sampling_defaults(self) -> SamplingDefaults:
        """`general.sampling.*` from the GGUF."""
        meta = self.header.metadata
        top_k = meta.get("general.sampling.top_k")
        return SamplingDefaults(
            temperature=_number(meta.get("general.sampling.temp")),
            top_p=_number(meta.get("general.sampling.top_p")),
            top_k=int(top_k) if isinstance(top_k, int) and not isinstance(top_k, bool) else None,
            min_p=_number(meta.get("general.sampling.min_p")),
        )

    def tokenize(self, text: str, *, add_special: bool = False) -> list[int]:
        """Tokens for `text`, with special tokens (`<|im_start|>` ...) parsed as such."""
        data = text.encode("utf-8")
        capacity = len(data) + 8
        buf = (llama_cpp.llama_token * capacity)()
        n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, capacity, add_special, True)
        if n < 0:
            capacity = -n
            buf = (llama_cpp.llama_token * capacity)()
            n = llama_cpp.llama_tokenize(
                self.vocab, data, len(data), buf, capacity, add_special, True
            )
        if n < 0:
            raise RuntimeError(f"tokenization failed ({n})")
        return list(buf[:n])

    def piece(self, token: int) -> bytes:
        """The bytes of one token, special tokens rendered as their text."""
        cached = self._pieces.get(token)
        if cached is not None:
            return cached
        buf = ctypes.create_string_buffer(64)
        n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, True)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, True)
        out = buf.raw[: max(n, 0)]
        self._pieces[token] = out
        return out

    def detokenize(self, tokens: list[int]) -> str:
        """Text of a token sequence, special tokens included."""
        return b"".join(self.piece(t) for t in tokens).decode("utf-8", errors="replace")

    def is_eog(self, token: int) -> bool:
        """Whether `token` ends a turn (EOS, `<|im_end|>`, ...)."""
        known = self._eog.get(token)
        if known is None:
            # asked once per token id: a foreign call lets another thread take the GIL
            known = self._eog[token] = bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))
        return known

    def single_token(self, text: str) -> int | None:
        """The id of `text` when it is exactly one token, else None."""
        tokens = self.tokenize(text)
        return tokens[0] if len(tokens) == 1 else None

    def close(self) -> None:
        """Free the weights."""
        if self._model is not None:
            llama_cpp.llama_model_free(self._model)
            self._model = None
