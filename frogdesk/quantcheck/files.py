"""Which GGUF files a check compares: quant labels, same-model siblings, the default reference."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frogdesk.quantcheck.corpus import default_corpus_dir
from frogdesk.quantcheck.store import check_dir, load_results

PRECISION_ORDER = (
    "F32", "BF16", "F16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_1", "Q5_K_S", "Q5_0", "Q4_K_M",
    "Q4_1", "Q4_K_S", "Q4_0", "IQ4_NL", "IQ4_XS", "Q3_K_L", "Q3_K_M", "IQ3_M", "IQ3_S",
    "Q3_K_S", "IQ3_XS", "IQ3_XXS", "Q2_K", "Q2_K_S", "IQ2_M", "IQ2_S", "IQ2_XS", "IQ2_XXS",
    "IQ1_M", "IQ1_S",
)  # fmt: skip
"""Quant types from most to least precise; the default reference is the first one on disk."""

_NAME_RE = re.compile(r"(?i)(?<![A-Za-z0-9])(" + "|".join(PRECISION_ORDER) + r")(?![A-Za-z0-9])")


@dataclass(frozen=True)
class GgufIdentity:
    """What makes two GGUF files quants of the same model."""

    architecture: str
    block_count: int
    embedding_length: int
    vocab_size: int


def _ftype_names() -> dict[int, str]:
    import llama_cpp

    names: dict[int, str] = {}
    for attr in dir(llama_cpp):
        for prefix in ("LLAMA_FTYPE_MOSTLY_", "LLAMA_FTYPE_ALL_"):
            if attr.startswith(prefix):
                value = getattr(llama_cpp, attr)
                if isinstance(value, int):
                    names[value] = attr[len(prefix) :]
    return names


def _read_fields(path: Path) -> dict[str, Any]:
    """Architecture, file type, depth, width and vocabulary size, from a vocabulary-only load."""
    import llama_cpp

    if not path.is_file():
        raise OSError(f"not a file: {path}")
    probe = llama_cpp.Llama(model_path=str(path), vocab_only=True, n_ctx=64, verbose=False)
    try:
        meta: dict[str, str] = dict(probe.metadata)
        n_vocab = int(probe.n_vocab())
    finally:
        probe.close()
    arch = meta.get("general.architecture", "")

    def number(key: str) -> int:
        try:
            return int(meta.get(key, "-1"))
        except ValueError:
            return -1

    return {
        "general.architecture": arch,
        "general.file_type": number("general.file_type"),
        "block_count": number(f"{arch}.block_count"),
        "embedding_length": number(f"{arch}.embedding_length"),
        "vocab_size": n_vocab,
    }


def quant_label(path: Path) -> str:
    """The file's quant type (e.g. "Q4_K_M") from its metadata, else from its name, else "unknown"."""
    try:
        file_type = _read_fields(path).get("general.file_type")
    except (OSError, ValueError):
        file_type = None
    if isinstance(file_type, int):
        name = _ftype_names().get(file_type)
        if name:
            return name
    match = _NAME_RE.search(path.name)
    return match.group(1).upper() if match else "unknown"


def identity(path: Path) -> GgufIdentity | None:
    """The model identity of a GGUF file, or None when it is not a readable language model."""
    try:
        fields = _read_fields(path)
    except (OSError, ValueError):
        return None
    arch = str(fields.get("general.architecture", ""))
    if not arch or arch == "clip" or fields["vocab_size"] <= 0:
        return None
    return GgufIdentity(
        arch, fields["block_count"], fields["embedding_length"], fields["vocab_size"]
    )


def precision_rank(path: Path) -> tuple[int, int]:
    """Sort key: known quant types by precision, unknown ones after them; larger file first."""
    label = quant_label(path)
    rank = PRECISION_ORDER.index(label) if label in PRECISION_ORDER else len(PRECISION_ORDER)
    return rank, -path.stat().st_size


def same_model_files(files: list[Path]) -> list[Path]:
    """The given files plus the other GGUF files beside them that are quants of the same model."""
    wanted = {identity(f) for f in files} - {None}
    found: dict[Path, Path] = {f.resolve(): f for f in files}
    for folder in {f.absolute().parent for f in files}:
        for candidate in sorted(folder.glob("*.gguf")):
            if candidate.resolve() not in found and identity(candidate) in wanted:
                found[candidate.resolve()] = candidate
    return list(found.values())


def choose_reference(files: list[Path]) -> Path:
    """The most precise file of the same model on disk (BF16 > F16 > Q8_0 > ...)."""
    if not files:
        raise ValueError("no files to choose a reference from")
    return min(same_model_files(files), key=precision_rank)


def latest_result(data_dir: Path, path: Path) -> dict[str, Any] | None:
    """The most recent cached check result of a file, without hashing it (None: not measured)."""
    try:
        index = json.loads((check_dir(data_dir) / "sha256.json").read_text())
        stat = path.resolve().stat()
    except (OSError, ValueError):
        return None
    known = index.get(str(path.resolve()))
    if not known or known.get("size") != stat.st_size or known.get("mtime_ns") != stat.st_mtime_ns:
        return None
    entries = load_results(data_dir, str(known["sha256"]))
    if not entries:
        return None
    result = entries[-1].get("result")
    return result if isinstance(result, dict) else None


def describe_result(result: dict[str, Any] | None) -> str:
    """One short line for `models list` and the picker: the drift, against what, and when."""
    if result is None:
        return "not measured"
    fidelity = result.get("tool_call_fidelity")
    calls = "n/a" if fidelity is None else f"{100 * fidelity:.0f}%"
    outcomes = result.get("tool_calls")
    if isinstance(outcomes, dict) and (outcomes.get("recovered") or outcomes.get("lost")):
        calls += f" ({outcomes.get('recovered', 0)} recovered, {outcomes.get('lost', 0)} lost)"
    measured_on = str(result.get("corpus_version", "?"))
    older = (
        f", on corpus v{measured_on}: not comparable with v{shipped_corpus_version()} results,"
        " run `frogdesk models check` again"
        if measured_on != shipped_corpus_version()
        else ""
    )
    return (
        f"KL {result['mean_kl']:.4f} (p99 {result['p99_kl']:.3f}), top-1 "
        f"{100 * result['top1_agreement']:.1f}%, calls {calls} vs {result['reference_quant']}"
        f" ({str(result['date'])[:10]}, local measurement{older})"
    )


@functools.cache
def shipped_corpus_version() -> str:
    """The version of the corpus shipped with this FrogDesk ("?" when its manifest is unreadable)."""
    try:
        manifest = json.loads((default_corpus_dir() / "corpus.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "?"
    return str(manifest.get("version", "?")) if isinstance(manifest, dict) else "?"
