"""Removing a model: from FrogDesk's own folder, or cleanly from the shared Hugging Face cache."""

from __future__ import annotations

from pathlib import Path

from frogdesk.models.errors import ModelError
from frogdesk.models.hf_cache import remove_files
from frogdesk.models.local import all_local
from frogdesk.models.local_model import LocalModel
from frogdesk.models.spec import ModelGroup, ModelSpec, pick_group


def _own_files(models_dir: Path, target: Path) -> list[Path]:
    """A path inside FrogDesk's folder with its partial-download companions.

    Decided on the real path: `..` and linked folders on the way are resolved first, so
    `<models>/../../victim.gguf` or `<models>/link-to-home/x.gguf` is refused. The name
    itself is not followed: an imported model is a link in the folder, and removing it
    removes the link, never the file it points to.
    """
    root = models_dir.resolve()
    refused = ModelError(
        f"{target} is not in FrogDesk's models dir ({root}); FrogDesk only removes its own files"
    )
    if target.name in ("", ".", ".."):
        raise refused
    real = target.parent.resolve() / target.name
    if real == root or not real.is_relative_to(root):
        raise refused
    return [
        real,
        real.with_name(real.name + ".partial"),
        real.with_name(real.name + ".partial.json"),
    ]


def _unlink(paths: list[Path]) -> list[str]:
    lines = []
    for path in paths:
        if path.is_symlink() or path.exists():
            path.unlink()
            lines.append(f"removed {path}")
    return lines


def remove_model(spec: ModelSpec, models_dir: Path, cache_dir: Path) -> list[str]:
    """Remove the model a spec names; one line per file removed or blob kept (and why).

    A repo spec finds the model in FrogDesk's old folder first, then in the cache. In the
    cache the snapshot names go; a blob goes too unless another revision's name still uses
    it, and hard links made by another tool are reported, since they keep its bytes on disk.
    """
    if spec.kind == "path":
        assert spec.path is not None
        lines = _unlink(_own_files(models_dir, spec.path.expanduser().absolute()))
    else:
        found = [m for m in all_local(models_dir, cache_dir) if m.repo == spec.repo]
        chosen = _pick(found, spec)
        if chosen.source == "hf-cache":
            removal = remove_files(cache_dir, spec.repo, list(chosen.parts))
            lines = [f"removed {p}" for p in removal.removed]
            lines += [f"kept {blob.name} in the cache: {why}" for blob, why in removal.kept_blobs]
        else:
            lines = _unlink([f for p in chosen.parts for f in _own_files(models_dir, p)])
    if not lines:
        raise ModelError(f"{spec}: nothing to remove")
    return lines


def _pick(found: list[LocalModel], spec: ModelSpec) -> LocalModel:
    groups = [ModelGroup(m.name, tuple(str(p) for p in m.parts)) for m in found]
    if not groups:
        raise ModelError(f"{spec} is not on this machine; nothing to remove")
    return found[groups.index(pick_group(groups, spec.quant, spec.repo))]
