"""llama.cpp's NextN hidden-state calls, which llama-cpp-python does not bind, through ctypes.

The MTP draft head needs the target model's hidden state for every decoded token. llama.cpp
exposes it in `src/llama-ext.h` (a staging header, compiled without `extern "C"`), so the
functions exist in libllama only under their C++ (Itanium) names. Those names encode the
parameter list, so looking up the exact name also checks the parameters against the header:

    void    llama_set_embeddings_nextn    (llama_context * ctx, bool value, bool masked);
    float * llama_get_embeddings_nextn    (llama_context * ctx);
    float * llama_get_embeddings_nextn_ith(llama_context * ctx, int32_t i);

If a build changes one of them, the name changes with it and the lookup fails: `load_nextn`
then says which symbol is missing instead of calling with a wrong signature.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import llama_cpp

from frogdesk.engine.llama.load.gguf import GgufHeader

SYMBOLS = {
    "set_embeddings_nextn": "_Z26llama_set_embeddings_nextnP13llama_contextbb",
    "get_embeddings_nextn": "_Z26llama_get_embeddings_nextnP13llama_context",
    "get_embeddings_nextn_ith": "_Z30llama_get_embeddings_nextn_ithP13llama_contexti",
}
"""Function -> its mangled name in libllama (llama-cpp-python 0.3.36's llama.cpp)."""

FLOATS = ctypes.POINTER(ctypes.c_float)


def nextn_layers(header: GgufHeader) -> int:
    """`<arch>.nextn_predict_layers` from the GGUF header: its MTP blocks (0 when absent)."""
    value = header.metadata.get(f"{header.architecture}.nextn_predict_layers", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class NextnCalls:
    """The three NextN functions, typed."""

    set_embeddings_nextn: Any
    """(ctx, value, masked): also output the hidden state before the LM head; `masked`
    keeps only the rows with logits, unmasked keeps every row of the batch."""
    get_embeddings_nextn: Any
    """(ctx) -> float *: the hidden-state rows of the last batch, n_embd floats each."""
    get_embeddings_nextn_ith: Any
    """(ctx, i) -> float *: the hidden state of output row `i` (NULL if there is none)."""


def _library() -> Any:
    """The loaded libllama (llama-cpp-python keeps it as `llama_cpp.llama_cpp._lib`)."""
    module = getattr(llama_cpp, "llama_cpp", None)
    return getattr(module, "_lib", None)


def load_nextn(library: Any = None) -> NextnCalls | str:
    """The NextN calls, or why they cannot be used (a one-line reason)."""
    lib = library if library is not None else _library()
    if lib is None:
        return "llama-cpp-python does not expose its shared library"
    found: dict[str, Any] = {}
    for name, symbol in SYMBOLS.items():
        try:
            found[name] = getattr(lib, symbol)
        except AttributeError:
            return f"libllama has no {name} (symbol {symbol})"
    found["set_embeddings_nextn"].argtypes = [ctypes.c_void_p, ctypes.c_bool, ctypes.c_bool]
    found["set_embeddings_nextn"].restype = None
    found["get_embeddings_nextn"].argtypes = [ctypes.c_void_p]
    found["get_embeddings_nextn"].restype = FLOATS
    found["get_embeddings_nextn_ith"].argtypes = [ctypes.c_void_p, ctypes.c_int32]
    found["get_embeddings_nextn_ith"].restype = FLOATS
    return NextnCalls(**found)
