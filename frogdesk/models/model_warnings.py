"""The honest warnings shown where a model is chosen, each with a stable id, from one producer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from frogdesk import config
from frogdesk.models.gguf_header import read_header
from frogdesk.models.gguf_info import GgufInfo, file_type_name
from frogdesk.models.spec import GgufName, parse_filename
from frogdesk.models.warning import (
    LICENSE_AMBIGUOUS,
    LOW_BITS,
    NO_QUALITY_EVAL,
    QUANT_MISNAMED,
    UNVALIDATED_PLATFORM,
    UNVALIDATED_QUANT,
    VISION_REFUSED,
    ModelWarning,
)


def is_frognano(*names: str) -> bool:
    """The model is FrogNano, judged by its repo, file or GGUF name."""
    return any("frognano" in n.lower().replace("-", "").replace("_", "") for n in names if n)


def recorded_quant(file_type: str) -> str | None:
    """The quant a GGUF records (`GgufInfo.file_type`), or None when it records none."""
    return None if file_type in ("", "unknown", "GUESSED") else file_type


def license_key(model: str) -> str:
    """The settings.tui.acknowledged entry that records the license notice for this model."""
    return f"{LICENSE_AMBIGUOUS}:{model.lower()}"


def model_warnings(
    name: GgufName,
    frognano: bool,
    acknowledged: Sequence[str] = (),
    model_key: str = "",
    file_quant: str | None = None,
) -> list[ModelWarning]:
    """The warnings for one model file; the license notice only until acknowledged.

    `file_quant` is the quant the GGUF itself records (`general.file_type`), when the file
    has been read: the warnings follow it, not the name, which anyone can choose (a Q2_K
    file named `...-BF16.gguf` would otherwise pass as validated).
    """
    out: list[ModelWarning] = []
    if file_quant and name.quant and file_quant.upper() != name.quant.upper():
        out.append(
            ModelWarning(
                QUANT_MISNAMED,
                "warning",
                f"the file name says {name.quant} but the file holds {file_quant}; "
                f"the warnings below are for {file_quant}",
            )
        )
    if file_quant:
        name = replace(name, quant=file_quant.upper())
    if name.mmproj:
        out.append(
            ModelWarning(
                VISION_REFUSED,
                "refusal",
                "vision projector: image and video input were never post-trained nor evaluated "
                "(the image-text-to-text tag comes from the base model); FrogDesk does not load it",
            )
        )
        return out
    if frognano:
        if name.quant not in {"BF16", "F32"}:
            out.append(
                ModelWarning(
                    UNVALIDATED_QUANT,
                    "warning",
                    "the vendor has validated no quantized or optimized format of FrogNano",
                )
            )
        out.append(
            ModelWarning(
                UNVALIDATED_PLATFORM,
                "warning",
                "the vendor has not validated CPU-only or desktop use; its scores come from GPU serving",
            )
        )
        if name.quant not in {"BF16", "F16", "F32"}:
            out.append(
                ModelWarning(
                    NO_QUALITY_EVAL,
                    "warning",
                    "no community quant of FrogNano has a published quality evaluation",
                )
            )
    bits = name.family_bits
    if bits is not None and bits < 4:
        out.append(
            ModelWarning(
                LOW_BITS,
                "warning",
                f"{name.quant} is below 4 bits per weight: expect noticeably worse results",
            )
        )
    if frognano and model_key and license_key(model_key) not in acknowledged:
        out.append(
            ModelWarning(
                LICENSE_AMBIGUOUS,
                "info",
                "license ambiguous: the model card's metadata and the Hub say MIT, its text says "
                "Apache License 2.0; check which applies to your use",
            )
        )
    return out


@dataclass(frozen=True)
class ModelFacts:
    """What is known of one model file where its warnings are made; they depend on nothing else."""

    name: GgufName
    """The file's name, parsed (a repo-relative path or a file name)."""
    repo: str = ""
    """The Hub repository it comes from; "" for a file known by its path alone."""
    gguf_name: str = ""
    """The model name the GGUF records (`general.name`), once the file was read."""
    file_type: str = ""
    """The quant the GGUF records (`GgufInfo.file_type`), once the file was read."""
    projector: bool = False
    """The file itself says it is a vision projector, whatever its name says."""

    @classmethod
    def of(cls, name: GgufName, repo: str = "", info: GgufInfo | None = None) -> ModelFacts:
        """The facts of a file named `name` from `repo`, with what its metadata `info` says."""
        if info is None:
            return cls(name, repo)
        return cls(name, repo, info.name, info.file_type, info.is_mmproj)

    @property
    def license_model(self) -> str:
        """The model the license notice is acknowledged for: the repo, else the GGUF's own
        name, else the file name."""
        return self.repo or self.gguf_name or PurePosixPath(self.name.path).name


def warnings_for(
    facts: ModelFacts, acknowledged: Sequence[str] = (), *, license_notice: bool = True
) -> list[ModelWarning]:
    """The warnings of one model file: the one place the CLI, the TUI and a switch get them.

    The quant is the one the file records once it was read, a file that says it is a
    projector is refused as one, and the license notice (only with `license_notice`) is
    shown until acknowledged for its model.
    """
    frognano = is_frognano(facts.repo, facts.name.path, facts.gguf_name)
    key = facts.license_model if license_notice else ""
    if facts.projector and not facts.name.mmproj:
        return model_warnings(replace(facts.name, mmproj=True), frognano, acknowledged, key)
    quant = recorded_quant(facts.file_type)
    return model_warnings(facts.name, frognano, acknowledged, key, quant)


def header_warnings(path: Path) -> list[ModelWarning]:
    """The warnings of the GGUF file at `path` from its header alone, without the license
    notice (that is for where a model is chosen): what a headless load says first.

    The header is read by the light, bounded parser (the full reader costs memory a capped
    run may not have); a file whose name or header cannot be read gets none here, and its
    load says what is wrong.
    """
    name = parse_filename(path.name)
    if name is None:
        return []
    try:
        meta = read_header(path).metadata
    except (OSError, ValueError):  # HeaderCorrupt and HeaderTruncated are ValueErrors
        return []
    code = meta.get("general.file_type")
    quant = file_type_name(code if isinstance(code, int) else None, path)
    facts = ModelFacts(name, gguf_name=str(meta.get("general.name", "")), file_type=quant)
    return warnings_for(facts, license_notice=False)


def acknowledge(config_file: Path, current: Sequence[str], key: str) -> list[str]:
    """Remember that a once-per-model notice was shown; returns the new acknowledged list."""
    if key in current:
        return list(current)
    updated = [*current, key]
    config.save_option(config_file, "acknowledged", updated)
    return updated
