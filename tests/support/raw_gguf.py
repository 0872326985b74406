"""GGUF files byte by byte, for headers no writer would produce (hostile or broken ones)."""

from __future__ import annotations

import struct
from collections.abc import Sequence

STRING, ARRAY, UINT32, UINT64, FLOAT32 = 8, 9, 4, 10, 6


def text(value: str | bytes) -> bytes:
    """A GGUF string: its length, then its bytes (not checked to be UTF-8)."""
    data = value.encode() if isinstance(value, str) else value
    return struct.pack("<Q", len(data)) + data


def kv_str(key: str, value: str | bytes) -> bytes:
    return text(key) + struct.pack("<I", STRING) + text(value)


def kv_u64(key: str, value: int) -> bytes:
    return text(key) + struct.pack("<IQ", UINT64, value)


def kv_u32(key: str, value: int) -> bytes:
    return text(key) + struct.pack("<II", UINT32, value)


def kv_f32_array(key: str, values: Sequence[float]) -> bytes:
    head = text(key) + struct.pack("<IIQ", ARRAY, FLOAT32, len(values))
    return head + b"".join(struct.pack("<f", v) for v in values)


def tensor(name: str, dims: Sequence[int], ggml_type: int = 0, offset: int = 0) -> bytes:
    """One tensor-info entry (type 0 is F32)."""
    shape = b"".join(struct.pack("<Q", d) for d in dims)
    return text(name) + struct.pack("<I", len(dims)) + shape + struct.pack("<IQ", ggml_type, offset)


def gguf(kvs: Sequence[bytes], tensors: Sequence[bytes] = (), data: bytes = b"") -> bytes:
    """A version-3 GGUF with these metadata entries and tensors, data aligned to 32 bytes."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    head += b"".join(tensors)
    return head + b"\0" * (-len(head) % 32) + data
