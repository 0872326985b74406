"""Moving models from FrogDesk's old models folder into the shared Hugging Face cache, once."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from frogdesk.durable import publish
from frogdesk.models.hf_cache import blob_path, link_snapshot, snapshot_path, write_ref
from frogdesk.models.listing import RepoListing
from frogdesk.models.names import inside, name_problem
from frogdesk.models.pull import object_id

_BLOCK = 1 << 20


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _move(source: Path, blob: Path) -> None:
    """Rename when both are on one file system, else copy next to the blob and rename there."""
    blob.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(source, blob)
        return
    except OSError:
        pass
    tmp = blob.with_name(blob.name + ".frogdesk-move")
    try:
        shutil.copyfile(source, tmp)
        publish(tmp, blob)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    source.unlink()


def migrate_repo(listing: RepoListing, models_dir: Path, cache_dir: Path) -> list[str]:
    """Move this repo's files found in the old models folder into the cache; one line per file.

    A file moves only when its bytes match the listing's sha256 (the same file, at the
    listed commit); any other file stays where it is and is still found there.
    """
    if not listing.commit or name_problem(listing.repo) is not None:
        return []
    old_root = models_dir / listing.repo.split("/", 1)[0] / listing.repo.split("/", 1)[1]
    if not old_root.is_dir() or old_root.is_symlink():
        return []
    lines = []
    for hub_file in listing.files:
        if not hub_file.sha256:
            continue
        old = inside(old_root, hub_file.path, "the listing")
        if old.is_symlink() or not old.is_file() or old.stat().st_size != hub_file.size:
            continue
        blob = blob_path(cache_dir, listing.repo, object_id(hub_file))
        if _sha256(old) != hub_file.sha256:
            continue
        if blob.is_file() and blob.stat().st_size == hub_file.size:
            old.unlink()  # the cache already holds these bytes: the old copy is a duplicate
        else:
            _move(old, blob)
        link = snapshot_path(cache_dir, listing.repo, listing.commit, hub_file.path)
        link_snapshot(blob, link)
        write_ref(cache_dir, listing.repo, listing.revision, listing.commit)
        lines.append(
            f"moved {hub_file.path} from FrogDesk's old models folder into the Hugging Face "
            f"cache ({link}); other tools can use it now"
        )
    return lines
