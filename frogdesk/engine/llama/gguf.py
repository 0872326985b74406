"""Checking a GGUF file's header before llama.cpp sees it: magic, sizes, architecture."""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frogdesk.engine.llama.errors import ModelLoadError

GGUF_MAGIC = b"GGUF"
_SCALARS: dict[int, tuple[str, int]] = {
    0: ("<B", 1),
    1: ("<b", 1),
    2: ("<H", 2),
    3: ("<h", 2),
    4: ("<I", 4),
    5: ("<i", 4),
    6: ("<f", 4),
    7: ("<?", 1),
    10: ("<Q", 8),
    11: ("<q", 8),
    12: ("<d", 8),
}
_STRING = 8
_ARRAY = 9
_DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4
"""ggml's GGML_MAX_DIMS: a tensor with more is no tensor llama.cpp can load."""
_VISION_ARCHS = frozenset({"clip", "mmproj"})


class _Truncated(Exception):
    """The header runs past the end of the file."""


@dataclass
class GgufHeader:
    """What FrogDesk reads from a GGUF header: scalar metadata, tensor count and expected size."""

    version: int
    n_tensors: int
    metadata: dict[str, Any] = field(default_factory=dict)
    """Scalar and string values; arrays are reduced to their length."""
    data_offset: int = 0
    expected_size: int = 0
    """Bytes the file must have to hold every tensor the header lists."""
    file_size: int = 0
    arrays: dict[str, list[Any]] = field(default_factory=dict)
    """Short numeric arrays in full (per-layer values such as head_count_kv)."""
    repackable: dict[str, int] = field(default_factory=dict)
    """Matrix weight bytes by quant type the CPU backend may repack (see `GgufInfo`)."""

    @property
    def architecture(self) -> str:
        """`general.architecture`, or "" when absent."""
        value = self.metadata.get("general.architecture", "")
        return value if isinstance(value, str) else ""


class _Cursor:
    """Reads little-endian GGUF fields from a buffer, refusing to run past its end."""

    def __init__(self, buf: mmap.mmap | bytes) -> None:
        self.buf = buf
        self.pos = 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.buf):
            raise _Truncated
        out = bytes(self.buf[self.pos : end])
        self.pos = end
        return out

    def scalar(self, code: int) -> Any:
        fmt, size = _SCALARS[code]
        return struct.unpack(fmt, self.take(size))[0]

    def u32(self) -> int:
        return int(self.scalar(4))

    def u64(self) -> int:
        return int(self.scalar(10))

    def string(self) -> str:
        return self.take(self.u64()).decode("utf-8", errors="replace")

    def skip_strings(self, count: int) -> None:
        for _ in range(count):
            length = self.u64()
            if self.pos + length > len(self.buf):
                raise _Truncated
            self.pos += length

    def value(self, code: int) -> Any:
        if code == _STRING:
            return self.string()
        if code == _ARRAY:
            item, count = self.u32(), self.u64()
            if item == _STRING:
                self.skip_strings(count)
            elif item in _SCALARS:
                size = _SCALARS[item][1] * count
                if self.pos + size > len(self.buf):
                    raise _Truncated
                self.pos += size
            else:
                raise ValueError(f"unknown array item type {item}")
            return count
        if code in _SCALARS:
            return self.scalar(code)
        raise ValueError(f"unknown value type {code}")


def _tensor_bytes(ggml_type: int, dims: list[int]) -> int:
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    block, size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
    n = 1
    for d in dims:
        n *= d
    return n // block * size


def _type_name(ggml_type: int) -> str:
    from gguf.constants import GGMLQuantizationType

    return GGMLQuantizationType(ggml_type).name


SHORT_ARRAY = 4096
"""Numeric arrays up to this many items are kept whole in `GgufHeader.arrays`."""


def _short_array(buf: mmap.mmap | bytes, start: int) -> list[Any] | None:
    """The numeric array whose type code is at `start`, when it is short; else None."""
    cur = _Cursor(buf)
    cur.pos = start
    if cur.u32() != _ARRAY:
        return None
    item, count = cur.u32(), cur.u64()
    if item not in _SCALARS or count > SHORT_ARRAY:
        return None
    return [cur.scalar(item) for _ in range(count)]


def _parse(buf: mmap.mmap | bytes, file_size: int) -> GgufHeader:
    cur = _Cursor(buf)
    if cur.take(4) != GGUF_MAGIC:
        raise ValueError("magic")
    version = cur.u32()
    if version not in (2, 3):
        raise ValueError(f"unsupported GGUF version {version}")
    n_tensors, n_kv = cur.u64(), cur.u64()
    header = GgufHeader(version=version, n_tensors=n_tensors, file_size=file_size)
    for _ in range(n_kv):
        key = cur.string()
        start = cur.pos
        header.metadata[key] = cur.value(cur.u32())
        short = _short_array(buf, start)
        if short is not None:
            header.arrays[key] = short
    end = 0
    for _ in range(n_tensors):
        name = cur.string()
        n_dims = cur.u32()
        if n_dims > MAX_DIMS:  # multiplying thousands of 2^64 sizes costs seconds, then fails
            raise ValueError(f"tensor {name!r} has {n_dims} dimensions; GGUF allows {MAX_DIMS}")
        dims = [cur.u64() for _ in range(n_dims)]
        ggml_type, offset = cur.u32(), cur.u64()
        size = _tensor_bytes(ggml_type, dims)
        end = max(end, offset + size)
        if len(dims) >= 2 and dims[1] % 8 == 0 and not name.startswith("token_embd"):
            kind = _type_name(ggml_type)
            header.repackable[kind] = header.repackable.get(kind, 0) + size
    align = header.metadata.get("general.alignment", _DEFAULT_ALIGNMENT)
    align = align if isinstance(align, int) and align > 0 else _DEFAULT_ALIGNMENT
    header.data_offset = (cur.pos + align - 1) // align * align
    header.expected_size = header.data_offset + end
    return header


def read_gguf_header(path: Path) -> GgufHeader:
    """Parse and check a GGUF header; raises `ModelLoadError` with a message for the user."""
    if not path.exists():
        raise ModelLoadError(path, "missing", "no such file")
    if not path.is_file():
        raise ModelLoadError(path, "missing", "not a regular file")
    file_size = path.stat().st_size
    with path.open("rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ModelLoadError(path, "not_gguf", "not a GGUF model file (wrong magic bytes)")
        if file_size < 24:
            raise ModelLoadError(path, "truncated", "the GGUF header is cut short")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            try:
                header = _parse(buf, file_size)
            except _Truncated:
                raise ModelLoadError(
                    path, "truncated", "the GGUF header is cut short (incomplete download?)"
                ) from None
            except (ValueError, KeyError, UnicodeError) as exc:
                raise ModelLoadError(path, "not_gguf", f"corrupt GGUF header ({exc})") from None
    if header.expected_size > file_size:
        raise ModelLoadError(
            path,
            "truncated",
            f"the file is truncated: {file_size:,} bytes of {header.expected_size:,}"
            " (incomplete download?)",
        )
    return header


def check_loadable(path: Path) -> GgufHeader:
    """The header of a GGUF FrogDesk can hand to llama.cpp, or `ModelLoadError` saying why not."""
    header = read_gguf_header(path)
    arch = header.architecture
    if arch in _VISION_ARCHS or header.metadata.get("general.type") == "mmproj":
        raise ModelLoadError(
            path,
            "vision_projector",
            "this is a vision projector (mmproj), not a language model; vision is unsupported,"
            " choose the model's main GGUF instead",
        )
    if not arch:
        raise ModelLoadError(path, "unsupported_architecture", "the GGUF names no architecture")
    from gguf.constants import MODEL_ARCH_NAMES

    if arch not in set(MODEL_ARCH_NAMES.values()):
        raise ModelLoadError(
            path,
            "unsupported_architecture",
            f"architecture {arch!r} is not supported by this llama.cpp",
        )
    return header
