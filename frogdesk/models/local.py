"""Models already on disk: FrogDesk's models dir, the shared Hugging Face cache, imported files."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from frogdesk.durable import publish
from frogdesk.models.errors import ModelError
from frogdesk.models.gguf_info import missing_model_line, split_parts
from frogdesk.models.local_model import LocalModel, Source
from frogdesk.models.spec import group_files

IMPORTED = "imported"


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache, from HF_HUB_CACHE / HF_HOME at call time."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(home).expanduser() / "hub"


def _groups(repo: str, root: Path, files: Iterable[Path], source: Source) -> list[LocalModel]:
    by_rel = {str(f.relative_to(root).as_posix()): f for f in files}
    return [
        LocalModel(repo, g.name, tuple(by_rel[p] for p in g.parts), source)
        for g in group_files(by_rel)
    ]


def frogdesk_models(models_dir: Path) -> list[LocalModel]:
    """Models pulled into (OWNER/NAME/...) or imported into (imported/...) FrogDesk's dir."""
    out: list[LocalModel] = []
    if not models_dir.is_dir():
        return out
    imported = models_dir / IMPORTED
    if imported.is_dir():
        out += _groups("", imported, (p for p in imported.iterdir() if p.exists()), "imported")
    for owner in sorted(p for p in models_dir.iterdir() if p.is_dir() and p.name != IMPORTED):
        for repo_dir in sorted(p for p in owner.iterdir() if p.is_dir()):
            files = [p for p in repo_dir.rglob("*.gguf") if p.is_file()]
            out += _groups(f"{owner.name}/{repo_dir.name}", repo_dir, files, "frogdesk")
    return out


def hf_cache_models(cache_dir: Path | None = None) -> list[LocalModel]:
    """GGUF models in the Hugging Face cache, through huggingface_hub's cache scanner."""
    from huggingface_hub import scan_cache_dir
    from huggingface_hub.errors import CacheNotFound

    root = cache_dir or hf_cache_dir()
    try:
        info = scan_cache_dir(root)
    except (CacheNotFound, OSError, ValueError):
        return []
    out: list[LocalModel] = []
    for repo in sorted(info.repos, key=lambda r: r.repo_id):
        if repo.repo_type != "model":
            continue
        seen: set[str] = set()
        # newest revision first: a model pulled at an older commit is still listed, once
        for revision in sorted(repo.revisions, key=lambda r: r.last_modified, reverse=True):
            snapshot = revision.snapshot_path
            by_rel = {
                f.file_path.relative_to(snapshot).as_posix(): f.file_path for f in revision.files
            }
            for group in group_files(by_rel):
                if group.name.stem in seen:
                    continue
                seen.add(group.name.stem)
                parts = tuple(by_rel[p] for p in group.parts)
                out.append(LocalModel(repo.repo_id, group.name, parts, "hf-cache"))
    return out


def all_local(models_dir: Path, cache_dir: Path | None = None) -> list[LocalModel]:
    """Everything on disk: FrogDesk's own models first, then the Hugging Face cache."""
    return frogdesk_models(models_dir) + hf_cache_models(cache_dir)


def check_loadable(path: Path) -> Path:
    """A local file FrogDesk may load: it exists, is a GGUF, and is not a vision projector."""
    if not path.is_file():
        raise ModelError(missing_model_line(path))
    if not is_gguf(path):
        raise ModelError(f"{path}: not a GGUF file (no GGUF magic at its start)")
    if "mmproj" in path.name.lower():
        raise ModelError(
            f"{path.name} is a vision projector: vision is unsupported, FrogDesk does not load it"
        )
    return path


def is_gguf(path: Path) -> bool:
    """The file starts with the GGUF magic."""
    try:
        with path.open("rb") as handle:
            return handle.read(4) == b"GGUF"
    except OSError:
        return False


def import_model(source: Path, models_dir: Path, copy: bool = False) -> Path:
    """Make a local GGUF known to FrogDesk: a symlink (or a copy) under models_dir/imported."""
    source = check_loadable(source.expanduser().resolve())
    parts = split_parts(source)
    missing = [p for p in parts if not p.is_file()]
    if missing:
        raise ModelError(f"{source}: split part missing: {missing[0].name}")
    target_dir = models_dir / IMPORTED
    target_dir.mkdir(parents=True, exist_ok=True)
    for part in parts:
        target = target_dir / part.name
        if target.is_symlink() or target.exists():
            if target.resolve() == part.resolve():
                continue
            raise ModelError(
                f"{target.name} is already imported from {target.resolve()}; remove it first"
            )
        if copy:
            tmp = target.with_name(target.name + ".partial")
            try:
                shutil.copyfile(part, tmp)
            except OSError:
                tmp.unlink(missing_ok=True)
                raise
            publish(tmp, target)
        else:
            target.symlink_to(part)
    return target_dir / parts[0].name
