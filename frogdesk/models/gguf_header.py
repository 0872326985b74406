"""The one GGUF header reader: metadata and tensor table in bounded time and memory.

A GGUF header is bytes from the Hub or a stranger's disk. The `gguf` package's reader builds
a numpy view per array item (19 s and 722 MiB for one array of a million strings), so a
hostile 30 MB file could exhaust memory in `models info`. This reader walks the header once:
numeric arrays are kept only when short (per-layer values), long arrays and string arrays
are reduced to their length and the place they start, and the tensor table is summed as it
is read (parameters, bytes per layer, bytes per quant type). Counts no real model reaches are
refused before any loop runs over them, and every length is checked against the bytes left.
Both `models` (listing, memory estimates) and the engine (the check before llama.cpp sees a
file) read headers through it.
"""

from __future__ import annotations

import mmap
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
_U64 = struct.Struct("<Q")
_ARRAY = 9
_DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4
"""ggml's GGML_MAX_DIMS: a tensor with more is no tensor llama.cpp can load."""
MAX_TENSORS = 1 << 17
"""More tensors than any model file holds (a 4B model has about 400, large MoE files some
thousands): a header claiming more is refused before its table is walked."""
MAX_KEYS = 1 << 16
"""More metadata keys than any model file holds (tens)."""
MAX_LAYERS = 4096
"""More layers than any model has: per-layer byte counts stop there."""
SHORT_ARRAY = 4096
"""Numeric arrays up to this many items are kept whole in `GgufHeader.arrays`."""
_LAYER_RE = re.compile(r"blk\.(\d+)\.")


class HeaderTruncated(ValueError):
    """The header runs past the end of the file."""


class HeaderCorrupt(ValueError):
    """The header's bytes are no GGUF header (an unknown type, a count no model has)."""


@dataclass
class GgufHeader:
    """What a GGUF header says: metadata, and the tensor table summed as it was read."""

    version: int
    n_tensors: int
    metadata: dict[str, Any] = field(default_factory=dict)
    """Scalar and string values (None for text that is not UTF-8); arrays are reduced to
    their length."""
    data_offset: int = 0
    expected_size: int = 0
    """Bytes the file must have to hold every tensor the header lists."""
    file_size: int = 0
    arrays: dict[str, list[Any]] = field(default_factory=dict)
    """Short numeric arrays in full (per-layer values such as head_count_kv)."""
    array_starts: dict[str, int] = field(default_factory=dict)
    """Where each string array's first item starts in the file (for `string_items`)."""
    repackable: dict[str, int] = field(default_factory=dict)
    """Matrix weight bytes by quant type whose rows come in multiples of 8, the token
    embedding excepted: what llama.cpp's CPU backend may repack."""
    parameters: int = 0
    tensor_bytes: int = 0
    layer_bytes: dict[int, int] = field(default_factory=dict)
    """Tensor bytes of each repeating layer blk.N (N below `MAX_LAYERS`)."""

    @property
    def architecture(self) -> str:
        """`general.architecture`, or "" when absent."""
        value = self.metadata.get("general.architecture", "")
        return value if isinstance(value, str) else ""

    def value(self, key: str, default: Any = None) -> Any:
        """A key's value: a short numeric array whole, else the scalar (an array's length)."""
        if key in self.arrays:
            return self.arrays[key]
        return self.metadata.get(key, default)


class _Cursor:
    """Reads little-endian GGUF fields from a buffer, refusing to run past its end."""

    def __init__(self, buf: mmap.mmap | bytes, pos: int = 0) -> None:
        self.buf = buf
        self.pos = pos

    def left(self) -> int:
        return len(self.buf) - self.pos

    def take(self, n: int) -> bytes:
        if n < 0 or n > self.left():
            raise HeaderTruncated
        out = bytes(self.buf[self.pos : self.pos + n])
        self.pos += n
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

    def skip(self, n: int) -> None:
        if n < 0 or n > self.left():
            raise HeaderTruncated
        self.pos += n

    def skip_strings(self, count: int) -> None:
        if count * 8 > self.left():  # each item has at least its 8-byte length
            raise HeaderTruncated
        buf, pos, end, unpack = self.buf, self.pos, len(self.buf), _U64.unpack_from
        for _ in range(count):  # a vocabulary is 150,000 of them: no object per item
            if pos + 8 > end:
                raise HeaderTruncated
            pos += 8 + unpack(buf, pos)[0]
            if pos > end:
                raise HeaderTruncated
        self.pos = pos


def _tensor_bytes(ggml_type: int, dims: list[int]) -> tuple[int, int]:
    """(elements, bytes) of a tensor of this ggml type and shape."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        block, size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
    except (ValueError, KeyError):
        raise HeaderCorrupt(f"unknown tensor type {ggml_type}") from None
    n = 1
    for d in dims:
        n *= d
    return n, n // block * size


def _type_name(ggml_type: int) -> str:
    from gguf.constants import GGMLQuantizationType

    return GGMLQuantizationType(ggml_type).name


def _read_value(cur: _Cursor, header: GgufHeader, key: str) -> Any:
    code = cur.u32()
    if code == _STRING:
        raw = cur.take(cur.u64())
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return None  # text that is not UTF-8 reads as absent, never as mangled text
    if code == _ARRAY:
        item, count = cur.u32(), cur.u64()
        if item == _STRING:
            header.array_starts[key] = cur.pos
            cur.skip_strings(count)
        elif item in _SCALARS:
            fmt, size = _SCALARS[item]
            if count * size > cur.left():
                raise HeaderTruncated
            if count <= SHORT_ARRAY:
                raw = cur.take(count * size)
                header.arrays[key] = list(struct.unpack(f"<{count}{fmt[1]}", raw))
            else:
                cur.skip(count * size)
        else:
            raise HeaderCorrupt(f"unknown array item type {item}")
        return count
    if code in _SCALARS:
        return cur.scalar(code)
    raise HeaderCorrupt(f"unknown value type {code}")


def parse_header(buf: mmap.mmap | bytes, file_size: int) -> GgufHeader:
    """The header in `buf`; `HeaderTruncated` or `HeaderCorrupt` (both ValueError) if none."""
    cur = _Cursor(buf)
    if cur.take(4) != GGUF_MAGIC:
        raise HeaderCorrupt("wrong magic bytes")
    version = cur.u32()
    if version not in (2, 3):
        raise HeaderCorrupt(f"unsupported GGUF version {version}")
    n_tensors, n_kv = cur.u64(), cur.u64()
    if n_tensors > MAX_TENSORS:
        raise HeaderCorrupt(f"the header claims {n_tensors:,} tensors; no model has so many")
    if n_kv > MAX_KEYS:
        raise HeaderCorrupt(f"the header claims {n_kv:,} metadata keys; no model has so many")
    header = GgufHeader(version=version, n_tensors=n_tensors, file_size=file_size)
    for _ in range(n_kv):
        key = cur.string()
        header.metadata[key] = _read_value(cur, header, key)
    end = 0
    for _ in range(n_tensors):
        name = cur.string()
        n_dims = cur.u32()
        if n_dims > MAX_DIMS:  # multiplying thousands of 2^64 sizes costs seconds, then fails
            raise HeaderCorrupt(f"tensor {name!r} has {n_dims} dimensions; GGUF allows {MAX_DIMS}")
        dims = [cur.u64() for _ in range(n_dims)]
        ggml_type, offset = cur.u32(), cur.u64()
        elements, size = _tensor_bytes(ggml_type, dims)
        end = max(end, offset + size)
        header.parameters += elements
        header.tensor_bytes += size
        if len(dims) >= 2 and dims[1] % 8 == 0 and not name.startswith("token_embd"):
            kind = _type_name(ggml_type)
            header.repackable[kind] = header.repackable.get(kind, 0) + size
        layer = _LAYER_RE.match(name)
        if layer and len(layer.group(1)) <= 4 and int(layer.group(1)) < MAX_LAYERS:
            index = int(layer.group(1))
            header.layer_bytes[index] = header.layer_bytes.get(index, 0) + size
    align = header.metadata.get("general.alignment", _DEFAULT_ALIGNMENT)
    align = align if isinstance(align, int) and not isinstance(align, bool) and align > 0 else 32
    header.data_offset = (cur.pos + align - 1) // align * align
    header.expected_size = header.data_offset + end
    return header


def read_header(path: Path) -> GgufHeader:
    """Parse the header of the GGUF file at `path` (mapped, never read whole).

    Raises OSError for a file that cannot be opened, `HeaderTruncated` or `HeaderCorrupt`
    for one whose bytes are no whole GGUF header.
    """
    with path.open("rb") as handle:
        file_size = path.stat().st_size
        if file_size < 24:
            if handle.read(4) != GGUF_MAGIC:
                raise HeaderCorrupt("wrong magic bytes")
            raise HeaderTruncated
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            return parse_header(buf, file_size)


def string_items(
    path: Path, header: GgufHeader, key: str, indices: Iterable[int]
) -> dict[int, str]:
    """Items `indices` of the string array `key` (a token's text by id), walked once."""
    wanted = {i for i in indices if i >= 0}
    start = header.array_starts.get(key)
    count = header.metadata.get(key)
    if start is None or not isinstance(count, int) or not wanted:
        return {}
    last = min(max(wanted), count - 1)
    found: dict[int, str] = {}
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        cur = _Cursor(buf, start)
        for index in range(last + 1):
            if index in wanted:
                found[index] = cur.string()
            else:
                cur.skip(cur.u64())
    return found
