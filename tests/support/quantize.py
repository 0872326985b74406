"""Quantizes a GGUF with llama.cpp's own quantizer (to make test quants of the tiny model)."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import llama_cpp


class QuantizeError(RuntimeError):
    """llama.cpp refused or failed to quantize a file."""


def ftype_code(ftype: str) -> int:
    """The llama_ftype value for a name such as "Q8_0", "Q4_K_M" or "F16" (case-insensitive)."""
    name = ftype.upper()
    for prefix in ("LLAMA_FTYPE_MOSTLY_", "LLAMA_FTYPE_ALL_"):
        value = getattr(llama_cpp, prefix + name, None)
        if isinstance(value, int):
            return value
    raise ValueError(f"unknown quantization type {ftype!r}")


def quantize(src: Path, dst: Path, ftype: str, *, threads: int = 2) -> Path:
    """Quantize src into dst as ftype (e.g. "Q8_0", "Q4_0") and return dst."""
    if not Path(src).is_file():
        raise FileNotFoundError(src)
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype_code(ftype)
    params.nthread = threads
    params.allow_requantize = False
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
    if rc != 0 or not Path(dst).is_file():
        raise QuantizeError(f"llama_model_quantize({src} -> {dst}, {ftype}) returned {rc}")
    return Path(dst)


if __name__ == "__main__":
    quantize(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
