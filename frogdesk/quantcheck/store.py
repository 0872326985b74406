"""On-disk state of the quant check: compact reference distributions, results, file checksums."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from frogdesk.durable import atomic_write_bytes

STORE_FORMAT = 1


def check_dir(data_dir: Path) -> Path:
    """Where the quant check keeps its files under FrogDesk's data dir."""
    return data_dir / "quant_check"


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, data)


def file_sha256(path: Path, data_dir: Path) -> str:
    """The file's sha256, remembered by (path, size, mtime) so a multi-GB file is hashed once."""
    path = path.resolve()
    stat = path.stat()
    index_path = check_dir(data_dir) / "sha256.json"
    try:
        index: dict[str, Any] = json.loads(index_path.read_text())
    except (OSError, ValueError):
        index = {}
    if not isinstance(index, dict):
        index = {}  # a cache: a damaged one is rebuilt
    known = index.get(str(path))
    if (
        isinstance(known, dict)
        and known.get("size") == stat.st_size
        and known.get("mtime_ns") == stat.st_mtime_ns
        and isinstance(known.get("sha256"), str)
    ):
        return str(known["sha256"])
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    sha = digest.hexdigest()
    index[str(path)] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha}
    _atomic_write(index_path, json.dumps(index, indent=1).encode())
    return sha


@dataclass(frozen=True)
class ReferenceKey:
    """What a stored reference depends on."""

    sha256: str
    corpus_version: str
    corpus_digest: str
    window: int
    top_k: int
    tokens: int  # cap on scored positions, -1 for the whole corpus
    cases: int  # cap on tool-call cases, -1 for all

    def filename(self) -> str:
        """The reference's file name in the store."""
        return (
            f"{self.sha256[:32]}-c{self.corpus_version}-{self.corpus_digest}"
            f"-w{self.window}-k{self.top_k}-t{self.tokens}-n{self.cases}.npz"
        )


@dataclass
class ReferenceRecord:
    """The reference's distributions, compact: top-k log-probs, the rest's mass, the truth's log-prob."""

    token_digest: str
    top_ids: npt.NDArray[np.int32]  # (positions, k)
    top_logp: npt.NDArray[np.float32]  # (positions, k)
    rest_logp: npt.NDArray[np.float32]  # (positions,) log of the mass outside the top k
    argmax: npt.NDArray[np.int32]  # (positions,)
    target_logp: npt.NDArray[np.float32]  # (positions,) log-prob of the actual next token
    continuations: list[str]  # greedy text after each tool-call case

    @property
    def positions(self) -> int:
        """How many scored positions the record covers."""
        return int(self.argmax.shape[0])


def save_reference(data_dir: Path, key: ReferenceKey, record: ReferenceRecord) -> Path:
    """Store a reference record atomically and return its path."""
    path = check_dir(data_dir) / "references" / key.filename()
    meta = {"format": STORE_FORMAT, "key": asdict(key), "token_digest": record.token_digest}
    meta["continuations"] = record.continuations
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        top_ids=record.top_ids,
        top_logp=record.top_logp,
        rest_logp=record.rest_logp,
        argmax=record.argmax,
        target_logp=record.target_logp,
    )
    atomic_write_bytes(path, buffer.getvalue())
    return path


def load_reference(data_dir: Path, key: ReferenceKey) -> ReferenceRecord | None:
    """The stored record for key, or None when absent or unreadable (it is then recomputed)."""
    path = check_dir(data_dir) / "references" / key.filename()
    try:
        with np.load(path) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            if meta.get("format") != STORE_FORMAT or meta.get("key") != asdict(key):
                return None
            return ReferenceRecord(
                token_digest=str(meta["token_digest"]),
                top_ids=data["top_ids"],
                top_logp=data["top_logp"],
                rest_logp=data["rest_logp"],
                argmax=data["argmax"],
                target_logp=data["target_logp"],
                continuations=[str(c) for c in meta["continuations"]],
            )
    except (OSError, ValueError, KeyError):
        return None


def _results_path(data_dir: Path, sha256: str) -> Path:
    return check_dir(data_dir) / "results" / f"{sha256}.json"


def load_results(data_dir: Path, sha256: str) -> list[dict[str, Any]]:
    """Every cached result entry of the file with this checksum (oldest first)."""
    try:
        entries = json.loads(_results_path(data_dir, sha256).read_text())["entries"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [e for e in entries if isinstance(e, dict)]


def save_result(data_dir: Path, sha256: str, entry: dict[str, Any]) -> None:
    """Add or replace (same "key") one result entry of a file."""
    entries = [e for e in load_results(data_dir, sha256) if e.get("key") != entry["key"]]
    entries.append(entry)
    _atomic_write(
        _results_path(data_dir, sha256), json.dumps({"entries": entries}, indent=1).encode()
    )
