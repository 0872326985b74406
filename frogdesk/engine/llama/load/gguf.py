"""Checking a GGUF file's header before llama.cpp sees it: magic, sizes, architecture."""

from __future__ import annotations

from pathlib import Path

from frogdesk.engine.llama.errors import ModelLoadError
from frogdesk.models.gguf_header import (
    GGUF_MAGIC,
    GgufHeader,
    HeaderCorrupt,
    HeaderTruncated,
    read_header,
)

__all__ = ["GgufHeader", "check_loadable", "read_gguf_header"]

_VISION_ARCHS = frozenset({"clip", "mmproj"})


def read_gguf_header(path: Path) -> GgufHeader:
    """Parse and check a GGUF header; raises `ModelLoadError` with a message for the user."""
    if not path.exists():
        raise ModelLoadError(path, "missing", "no such file")
    if not path.is_file():
        raise ModelLoadError(path, "missing", "not a regular file")
    with path.open("rb") as handle:
        if handle.read(4) != GGUF_MAGIC:
            raise ModelLoadError(path, "not_gguf", "not a GGUF model file (wrong magic bytes)")
    try:
        header = read_header(path)
    except HeaderTruncated:
        raise ModelLoadError(
            path, "truncated", "the GGUF header is cut short (incomplete download?)"
        ) from None
    except (HeaderCorrupt, ValueError, KeyError, UnicodeError) as exc:
        raise ModelLoadError(path, "not_gguf", f"corrupt GGUF header ({exc})") from None
    file_size = header.file_size
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
