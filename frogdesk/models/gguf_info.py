"""GGUF metadata without loading the weights: architecture, sizes, attention and recurrent dims."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frogdesk.models.errors import ModelError
from frogdesk.models.gguf_header import MAX_LAYERS, GgufHeader, HeaderTruncated, read_header
from frogdesk.models.spec import parse_filename


@dataclass(frozen=True)
class GgufInfo:
    """What a GGUF file says about itself (read from the header and tensor table only)."""

    path: Path
    parts: tuple[Path, ...]
    architecture: str
    name: str
    file_type: str
    """llama.cpp's file type name, e.g. Q4_K_M, or the file name's quant when absent."""
    parameters: int
    file_bytes: int
    tensor_bytes: int
    context_length: int
    block_count: int
    embedding_length: int
    feed_forward_length: int
    vocab_size: int
    head_count: int
    head_count_kv: int
    key_length: int
    value_length: int
    full_attention_layers: int
    """Layers with a KV cache (all of them for a plain transformer)."""
    full_attention_interval: int
    """1 for a plain transformer; 4 for FrogNano (3 DeltaNet layers per attention layer)."""
    recurrent_layers: int
    ssm_conv_kernel: int
    ssm_inner_size: int
    ssm_state_size: int
    ssm_group_count: int
    ssm_time_step_rank: int
    nextn_layers: int
    """Multi-token-prediction draft layers kept in the file."""
    chat_template: bool
    license: str
    is_mmproj: bool
    layer_bytes: tuple[int, ...]
    """Tensor bytes of each repeating layer (blk.N), for the offload plan."""
    sampling: dict[str, Any] = field(default_factory=dict)
    """The file's general.sampling.* defaults (temp, top_k, top_p, ...)."""
    repackable_bytes: dict[str, int] = field(default_factory=dict)
    """Bytes of matrix weights by quant type (e.g. "Q4_K") whose rows come in multiples of 8,
    the token embedding excepted: what llama.cpp's CPU backend may repack (see memory)."""

    @property
    def bits_per_weight(self) -> float:
        """Measured bits per weight of the tensors."""
        return self.tensor_bytes * 8 / self.parameters if self.parameters else 0.0

    @property
    def kv_bytes_per_token_f16(self) -> int:
        """KV cache bytes per token in f16 over the full-attention layers."""
        return (
            self.full_attention_layers
            * self.head_count_kv
            * (self.key_length + self.value_length)
            * 2
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        out = {k: v for k, v in self.__dict__.items() if k not in {"path", "parts", "layer_bytes"}}
        out["path"] = str(self.path)
        out["parts"] = [str(p) for p in self.parts]
        out["bits_per_weight"] = round(self.bits_per_weight, 3)
        out["kv_bytes_per_token_f16"] = self.kv_bytes_per_token_f16
        return out


def _number(value: Any) -> int | None:
    """A whole number from a GGUF value, or None (NaN, infinity, text, bool)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value)


def _text(value: Any) -> str:
    """A text value of the header, or "" (absent, not UTF-8, or not text)."""
    return value if isinstance(value, str) else ""


def _scalar(value: Any, default: int = 0) -> int:
    """An int from a number or a per-layer array (the largest entry); `default` for anything else."""
    if isinstance(value, list):
        numbers = [n for n in map(_number, value) if n is not None]
        return max(numbers, default=default) if len(numbers) == len(value) else default
    number = _number(value)
    return default if number is None else number


def split_parts(path: Path) -> tuple[Path, ...]:
    """All parts of a split GGUF given any one of them (just the file when it is not split)."""
    parsed = parse_filename(path.name)
    if parsed is None or parsed.split_count == 1:
        return (path,)
    base = path.name[: -len("-00001-of-00001.gguf")]
    count = parsed.split_count
    return tuple(path.with_name(f"{base}-{i:05d}-of-{count:05d}.gguf") for i in range(1, count + 1))


def file_type_name(code: int | None, path: Path) -> str:
    """The quant a `general.file_type` code names (Q4_K_M), else the file name's, else unknown."""
    if code is not None:
        try:
            from gguf import LlamaFileType

            return str(LlamaFileType(code).name).removeprefix("MOSTLY_").removeprefix("ALL_")
        except ValueError:
            pass
    parsed = parse_filename(path.name)
    return (parsed.quant or "unknown") if parsed else "unknown"


def missing_model_line(path: Path) -> str:
    """Why `path` is no model file: a folder (with the .gguf files in it) or nothing there."""
    if not path.is_dir():
        return f"no such model file: {path}"
    try:
        inside = sorted(p.name for p in path.iterdir() if p.name.lower().endswith(".gguf"))
    except OSError:
        inside = []
    if not inside:
        return f"{path} is a folder, not a model file. It holds no .gguf file."
    shown = ", ".join(inside[:5]) + (f" and {len(inside) - 5} more" if len(inside) > 5 else "")
    return f"{path} is a folder, not a model file. The .gguf files in it: {shown}."


def _read(path: Path) -> GgufHeader:
    try:
        header = read_header(path)
    except FileNotFoundError:
        raise ModelError(missing_model_line(path)) from None
    except HeaderTruncated:
        raise ModelError(
            f"{path}: not a readable GGUF file (the header is cut short); it may be truncated"
            " or corrupt"
        ) from None
    except (ValueError, OSError) as exc:
        raise ModelError(
            f"{path}: not a readable GGUF file ({exc}); it may be truncated or corrupt"
        ) from None
    if header.expected_size > header.file_size:
        raise ModelError(
            f"{path}: not a readable GGUF file ({header.file_size:,} bytes of the "
            f"{header.expected_size:,} its tensors need); it may be truncated or corrupt"
        )
    return header


def architecture_dims(key: Callable[[str], Any]) -> dict[str, int]:
    """The layer, attention and recurrent sizes of GgufInfo, read as `key("block_count")` etc.

    `key` looks a name up under the architecture's prefix; shared by the full GGUF reader
    and the light header parse so both read a model the same way.
    """
    block_count = _scalar(key("block_count"))
    if not 0 <= block_count <= MAX_LAYERS:
        raise ModelError(
            f"the GGUF header claims {block_count} layers; no model has over {MAX_LAYERS}"
        )
    embedding = _scalar(key("embedding_length"))
    head_count = _scalar(key("attention.head_count"))
    kv_raw = key("attention.head_count_kv")
    head_dim = embedding // head_count if head_count else 0
    interval = _scalar(key("full_attention_interval"))
    conv_kernel = _scalar(key("ssm.conv_kernel"))
    nextn = _scalar(key("nextn_predict_layers"))
    main_layers = block_count - nextn
    full_attention = full_attention_layers(kv_raw, interval, conv_kernel, main_layers)
    return {
        "context_length": _scalar(key("context_length")),
        "block_count": block_count,
        "embedding_length": embedding,
        "feed_forward_length": _scalar(key("feed_forward_length")),
        "vocab_size": _scalar(key("vocab_size")),
        "head_count": head_count,
        "head_count_kv": _scalar(kv_raw, head_count),
        "key_length": _scalar(key("attention.key_length"), head_dim),
        "value_length": _scalar(key("attention.value_length"), head_dim),
        "full_attention_layers": full_attention,
        "full_attention_interval": interval or 1,
        "recurrent_layers": (main_layers - full_attention) if conv_kernel > 0 else 0,
        "ssm_conv_kernel": conv_kernel,
        "ssm_inner_size": _scalar(key("ssm.inner_size")),
        "ssm_state_size": _scalar(key("ssm.state_size")),
        "ssm_group_count": _scalar(key("ssm.group_count")),
        "ssm_time_step_rank": _scalar(key("ssm.time_step_rank")),
        "nextn_layers": nextn,
    }


def full_attention_layers(kv_raw: Any, interval: int, conv_kernel: int, main_layers: int) -> int:
    """How many layers keep a KV cache: per-layer KV head counts, else the hybrid interval."""
    if isinstance(kv_raw, list):
        return sum(1 for v in kv_raw[:main_layers] if (_number(v) or 0) > 0)
    if interval > 0:
        return sum(1 for i in range(main_layers) if (i + 1) % interval == 0)
    if conv_kernel > 0:
        return 0  # a purely recurrent model
    return main_layers


def inspect_gguf(path: Path) -> GgufInfo:
    """Read a GGUF's metadata and tensor table (every split part) without loading weights.

    Anything the file's bytes can make go wrong is a ModelError naming the file: a listing
    of models shows it as unreadable and goes on with the rest.
    """
    try:
        return _inspect(path)
    except ModelError:
        raise
    except (ValueError, TypeError, IndexError, KeyError, OverflowError, RecursionError) as exc:
        raise ModelError(
            f"{path}: not a readable GGUF file ({type(exc).__name__}: {exc})"
        ) from None


def _inspect(path: Path) -> GgufInfo:
    if not path.is_file():
        raise ModelError(missing_model_line(path))
    parts = split_parts(path)
    missing = [p for p in parts if not p.is_file()]
    if missing:
        raise ModelError(f"{path}: split part missing: {missing[0].name}")
    return info_from_headers(parts, [_read(part) for part in parts])


def info_from_headers(parts: tuple[Path, ...], headers: list[GgufHeader]) -> GgufInfo:
    """The GgufInfo of a model from the headers of its parts (the first holds the metadata)."""
    first = headers[0]
    arch = first.architecture
    if not arch:
        raise ModelError(f"{parts[0]}: GGUF header has no general.architecture")

    def key(name: str) -> Any:
        return first.value(f"{arch}.{name}")

    layers: dict[int, int] = {}
    repackable: dict[str, int] = {}
    for header in headers:
        for layer, size in header.layer_bytes.items():
            layers[layer] = layers.get(layer, 0) + size
        for kind, size in header.repackable.items():
            repackable[kind] = repackable.get(kind, 0) + size
    dims = architecture_dims(key)
    if not dims["vocab_size"]:
        dims["vocab_size"] = _scalar(first.metadata.get("tokenizer.ggml.tokens"))
    general_type = _text(first.metadata.get("general.type"))
    code = first.metadata.get("general.file_type")
    sampling = {
        k.removeprefix("general.sampling."): first.value(k)
        for k in first.metadata
        if k.startswith("general.sampling.")
    }
    return GgufInfo(
        path=parts[0],
        parts=parts,
        architecture=arch,
        name=_text(first.metadata.get("general.name")),
        file_type=file_type_name(code if isinstance(code, int) else None, parts[0]),
        parameters=sum(h.parameters for h in headers),
        file_bytes=sum(h.file_size for h in headers),
        tensor_bytes=sum(h.tensor_bytes for h in headers),
        **dims,
        chat_template="tokenizer.chat_template" in first.metadata,
        license=_text(first.metadata.get("general.license")),
        is_mmproj=general_type == "mmproj" or arch == "clip",
        layer_bytes=tuple(layers.get(i, 0) for i in range(dims["block_count"])),
        sampling=sampling,
        repackable_bytes=repackable,
    )
