"""Model specs (path, REPO, REPO:QUANT, alias) and what a GGUF file name says about its quant."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Literal

from frogdesk.models.errors import ModelError

DEFAULT_QUANT = "Q4_K_M"

NOMINAL_BITS: Mapping[str, float] = MappingProxyType(
    {
        "IQ1_S": 1.56, "IQ1_M": 1.75, "TQ1_0": 1.69, "TQ2_0": 2.06,
        "IQ2_XXS": 2.06, "IQ2_XS": 2.31, "IQ2_S": 2.5, "IQ2_M": 2.7,
        "Q2_K": 3.0, "Q2_K_S": 2.9, "Q2_K_L": 3.3,
        "IQ3_XXS": 3.06, "IQ3_XS": 3.3, "IQ3_S": 3.44, "IQ3_M": 3.66,
        "Q3_K_S": 3.5, "Q3_K_M": 3.9, "Q3_K_L": 4.3, "Q3_K_XL": 4.5,
        "IQ4_XS": 4.25, "IQ4_NL": 4.5, "MXFP4": 4.25, "MXFP4_MOE": 4.25,
        "Q4_0": 4.5, "Q4_1": 5.0, "Q4_K_S": 4.6, "Q4_K_M": 4.85, "Q4_K_L": 5.1, "Q4_K_XL": 5.2,
        "Q5_0": 5.5, "Q5_1": 6.0, "Q5_K_S": 5.5, "Q5_K_M": 5.7, "Q5_K_L": 5.9, "Q5_K_XL": 6.0,
        "Q6_K": 6.56, "Q6_K_L": 6.7, "Q6_K_XL": 6.8, "Q8_0": 8.5, "Q8_K_XL": 8.7,
        "BF16": 16.0, "F16": 16.0, "F32": 32.0,
    }
)  # fmt: skip
"""Approximate bits per weight of each llama.cpp quant type (mixtures included)."""

_QUANT_RE = re.compile(
    r"(?<![A-Za-z0-9])(?P<i1>i1[-_.])?"
    r"(?P<quant>IQ[1-4]_(?:XXS|XS|NL|S|M)|TQ[12]_0|Q[2-8]_K(?:_(?:XL|S|M|L))?"
    r"|Q[4-8]_[01](?:_[48]_[48])?|MXFP4(?:_MOE)?|BF16|F16|FP16|F32)(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_SPLIT_RE = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)
_REPO_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


@dataclass(frozen=True)
class GgufName:
    """What a .gguf file name tells: its quant, imatrix, split part, vision projector."""

    path: str
    """The name as given (repo-relative path or file name)."""
    stem: str
    """The name without its split suffix: all parts of one model share it."""
    quant: str | None
    imatrix: bool
    mmproj: bool
    split_index: int = 1
    split_count: int = 1

    @property
    def bits(self) -> float | None:
        """Approximate bits per weight, when the quant is known."""
        return NOMINAL_BITS.get(self.quant) if self.quant else None

    @property
    def family_bits(self) -> int | None:
        """The quant's base bit width (3 for Q3_K_L, 2 for IQ2_M), 16 for BF16/F16."""
        if self.quant is None:
            return None
        match = re.search(r"(\d+)", self.quant)
        return int(match.group(1)) if match else None


def normalize_quant(text: str) -> str:
    """Quant names compare upper-case; FP16 is F16."""
    upper = text.strip().upper()
    return "F16" if upper == "FP16" else upper


def parse_filename(path: str) -> GgufName | None:
    """Parse a GGUF file name; None when it is not a .gguf file."""
    name = PurePosixPath(path).name
    if not name.lower().endswith(".gguf"):
        return None
    split_index, split_count = 1, 1
    stem = path
    split = _SPLIT_RE.search(name)
    # -00001-of-00000 or -00003-of-00002 names no split: read as a plain file name
    if split and 1 <= int(split.group(1)) <= int(split.group(2)):
        split_index, split_count = int(split.group(1)), int(split.group(2))
        stem = path[: len(path) - len(split.group(0))] + ".gguf"
    matches = list(_QUANT_RE.finditer(PurePosixPath(stem).name))
    quant: str | None = None
    imatrix = False
    if matches:
        last = matches[-1]
        quant = normalize_quant(last.group("quant"))
        imatrix = last.group("i1") is not None
    lowered = name.lower()
    imatrix = imatrix or ".i1-" in lowered or "imatrix" in lowered or "-imat" in lowered
    return GgufName(
        path=path,
        stem=stem,
        quant=quant,
        imatrix=imatrix,
        mmproj="mmproj" in lowered,
        split_index=split_index,
        split_count=split_count,
    )


@dataclass(frozen=True)
class ModelGroup:
    """One model in a listing: a single .gguf, or all parts of a split one."""

    name: GgufName
    """The first part's parsed name."""
    parts: tuple[str, ...]
    """Every part's path, in order."""

    @property
    def complete(self) -> bool:
        """All split parts are present."""
        return len(self.parts) == self.name.split_count

    @property
    def label(self) -> str:
        """The name shown to the user (the stem for a split model)."""
        return self.name.stem if self.name.split_count > 1 else self.name.path


def group_files(paths: Iterable[str]) -> list[ModelGroup]:
    """Group .gguf paths into models (split parts together), in name order; others dropped."""
    by_stem: dict[str, list[GgufName]] = {}
    for path in paths:
        parsed = parse_filename(path)
        if parsed is not None:
            by_stem.setdefault(parsed.stem, []).append(parsed)
    groups = []
    for stem in sorted(by_stem):
        parts = sorted(by_stem[stem], key=lambda n: n.split_index)
        groups.append(ModelGroup(name=parts[0], parts=tuple(p.path for p in parts)))
    return groups


def pick_group(groups: Iterable[ModelGroup], quant: str | None, where: str) -> ModelGroup:
    """The model of the wanted quant (default Q4_K_M); plain preferred over imatrix unless asked.

    Raises ModelError naming the quants available when there is none, or when only a
    vision projector matches.
    """
    wanted = normalize_quant(quant or DEFAULT_QUANT)
    want_i1 = wanted.startswith("I1-")
    wanted = wanted.removeprefix("I1-")
    all_groups = list(groups)
    models = [g for g in all_groups if not g.name.mmproj]
    matching = [g for g in models if g.name.quant == wanted and (g.name.imatrix or not want_i1)]
    if not matching:
        if any(g.name.mmproj and g.name.quant == wanted for g in all_groups):
            raise ModelError(
                f"{where}: the only {wanted} file is a vision projector (mmproj); "
                "vision is unsupported, so FrogDesk does not load it"
            )
        known = sorted(
            {(("i1-" if g.name.imatrix else "") + (g.name.quant or "?")) for g in models}
        )
        raise ModelError(
            f"{where}: no {wanted} model file; available: {', '.join(known) or 'none'}"
        )
    matching.sort(key=lambda g: (g.name.imatrix != want_i1, g.label))
    return matching[0]


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec: a local file, or a Hub repo with an optional quant."""

    text: str
    kind: Literal["path", "repo"]
    path: Path | None = None
    repo: str = ""
    quant: str | None = None
    revision: str = "main"

    def __str__(self) -> str:
        if self.kind == "path":
            return str(self.path)
        return f"{self.repo}:{self.quant}" if self.quant else self.repo


def _looks_like_path(text: str) -> bool:
    # a folder on disk is a path too (OWNER/REPO can look like one): it is said to be a
    # folder rather than listed on the Hub
    return (
        text.lower().endswith(".gguf")
        or text.startswith(("/", "./", "../", "~"))
        or (len(text) > 2 and text[1] == ":" and text[2] in "\\/")
        or Path(text).expanduser().is_dir()
    )


def known_quant(quant: str) -> bool:
    """A quant name a GGUF file name can carry (the only ones a repo's files can match)."""
    bare = normalize_quant(quant).removeprefix("I1-")
    return bare in NOMINAL_BITS or _QUANT_RE.fullmatch(bare) is not None


def quant_typo(repo: str, quant: str) -> str:
    """The line for a quant no file can carry: a typo, with the nearest known names."""
    bare = normalize_quant(quant).removeprefix("I1-")
    scored = sorted(
        (-difflib.SequenceMatcher(None, bare, name).ratio(), name != DEFAULT_QUANT, name)
        for name in NOMINAL_BITS
    )
    best = scored[0][0]
    # the names as near as the nearest (Q4_K_N is one letter from M, S and L alike)
    near = [name for score, _, name in scored if score == best][:3] if best <= -0.5 else []
    if not near:
        return f"no quant {quant} in {repo}; quant names look like Q4_K_M, IQ3_M or Q8_0"
    names = ", ".join(near[:-1]) + " or " + near[-1] if len(near) > 1 else near[0]
    return f"no quant {quant} in {repo}; did you mean {names}?"


def parse_spec(text: str, aliases: Mapping[str, str] | None = None) -> ModelSpec:
    """Parse a spec: alias (resolved once), a .gguf path, REPO, REPO:QUANT or REPO@REVISION:QUANT."""
    raw = text.strip()
    if not raw:
        raise ModelError("empty model spec")
    if aliases and raw in aliases:
        target = aliases[raw].strip()
        if target in aliases:
            raise ModelError(f"alias '{raw}' points at another alias '{target}'")
        raw = target
    if _looks_like_path(raw):
        return ModelSpec(text=text, kind="path", path=Path(raw).expanduser())
    repo_part, _, quant = raw.partition(":")
    repo, _, revision = repo_part.partition("@")
    if not _REPO_RE.match(repo):
        raise ModelError(
            f"'{text}' is not a model spec: use a .gguf path, OWNER/REPO, OWNER/REPO:QUANT "
            "or an alias from the settings"
        )
    if ":" in raw and not quant:
        raise ModelError(f"'{text}': empty quant after ':'")
    if quant and not re.fullmatch(r"(?:i1-)?[A-Za-z0-9_]+", quant):
        raise ModelError(f"'{text}': '{quant}' is not a quant name (like Q4_K_M, IQ3_M, i1-Q4_K_S)")
    if quant and not known_quant(quant):
        raise ModelError(quant_typo(repo, quant))
    return ModelSpec(
        text=text,
        kind="repo",
        repo=repo,
        quant=normalize_quant(quant) if quant else None,
        revision=revision or "main",
    )
