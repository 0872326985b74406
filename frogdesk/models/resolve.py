"""From a model spec to a GGUF file on disk, or a clear error saying how to get it."""

from __future__ import annotations

from pathlib import Path

from frogdesk.config import Settings
from frogdesk.models.errors import ModelError
from frogdesk.models.local import all_local, check_loadable
from frogdesk.models.local_model import LocalModel
from frogdesk.models.spec import ModelGroup, ModelSpec, parse_spec, pick_group
from frogdesk.paths import AppPaths


def find_local(
    spec: ModelSpec, models_dir: Path, hf_cache: Path | None = None
) -> LocalModel | None:
    """The on-disk model a repo spec names (FrogDesk's dir first, then the HF cache), or None."""
    candidates = [m for m in all_local(models_dir, hf_cache) if m.repo == spec.repo and m.complete]
    if not candidates:
        return None
    groups = [ModelGroup(m.name, tuple(str(p) for p in m.parts)) for m in candidates]
    try:
        chosen = pick_group(groups, spec.quant, spec.repo)
    except ModelError:
        return None
    return candidates[groups.index(chosen)]


def resolve_local(
    spec: str, settings: Settings, paths: AppPaths | None = None, hf_cache: Path | None = None
) -> Path:
    """The GGUF to load for a spec already on disk (first part of a split model).

    Raises ModelError saying how to pull the model when it is not there.
    """
    parsed = parse_spec(spec, settings.aliases)
    if parsed.kind == "path":
        assert parsed.path is not None
        return check_loadable(parsed.path)
    app_paths = paths or AppPaths.default()
    found = find_local(parsed, app_paths.models_dir, hf_cache)
    if found is None:
        raise ModelError(
            f"{parsed} is not on this machine; download it with `frogdesk models pull {parsed}` "
            f"(or list the quants with `frogdesk models list {parsed.repo}`)"
        )
    return found.path


def check_spec(spec: str, settings: Settings) -> None:
    """Refuse at start, without the network, a spec that can never load: one that does not
    parse (a typo'd quant among them) or a path with no model file there (ModelError).

    A Hub spec not on disk passes: the picker offers to download it.
    """
    parsed = parse_spec(spec, settings.aliases)
    if parsed.kind == "path":
        assert parsed.path is not None
        check_loadable(parsed.path)
