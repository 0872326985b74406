"""The Hugging Face cache layout as huggingface_hub writes it: blobs, snapshot links, refs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from frogdesk.durable import atomic_write_text, publish
from frogdesk.models.names import check_commit, check_object_id, inside, safe_relative


def repo_folder(cache_dir: Path, repo: str) -> Path:
    """models--OWNER--NAME under the cache (the repo id's slashes become `--`)."""
    safe_relative(repo, "a repo id")
    return cache_dir / ("models--" + repo.replace("/", "--"))


def blob_path(cache_dir: Path, repo: str, object_id: str) -> Path:
    """blobs/<sha256 or git blob id>: the bytes, stored once per repo."""
    return repo_folder(cache_dir, repo) / "blobs" / check_object_id(object_id, "the listing")


def incomplete_path(blob: Path) -> Path:
    """Where a blob's bytes are received, as huggingface_hub names it (so either tool resumes it)."""
    return blob.with_name(blob.name + ".incomplete")


def lock_path(cache_dir: Path, repo: str, object_id: str) -> Path:
    """huggingface_hub's lock file for one blob; holding it keeps both tools off the same bytes."""
    folder = repo_folder(cache_dir, repo).name
    return cache_dir / ".locks" / folder / (check_object_id(object_id, "the listing") + ".lock")


def snapshot_path(cache_dir: Path, repo: str, commit: str, path: str) -> Path:
    """snapshots/<commit>/<path in repo>: the name other tools open."""
    snapshots = repo_folder(cache_dir, repo) / "snapshots" / check_commit(commit, "the listing")
    return inside(snapshots, path, f"the listing of {repo}")


def link_snapshot(blob: Path, link: Path) -> None:
    """Point the snapshot name at the blob with a relative symlink, as huggingface_hub does."""
    link.parent.mkdir(parents=True, exist_ok=True)
    target = os.path.relpath(blob, link.parent)
    if link.is_symlink() and os.readlink(link) == target:
        return
    tmp = link.with_name(link.name + ".frogdesk-tmp")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target)
    publish(tmp, link)


def write_ref(cache_dir: Path, repo: str, revision: str, commit: str) -> None:
    """refs/<revision> holds the commit it pointed at (not written when the revision is the commit)."""
    if revision == commit:
        return
    refs = repo_folder(cache_dir, repo) / "refs"
    ref = inside(refs, revision, "the revision")
    ref.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(ref, check_commit(commit, "the listing"))


@dataclass(frozen=True)
class Removal:
    """What removing one model's files from the cache did."""

    removed: tuple[Path, ...]
    kept_blobs: tuple[tuple[Path, str], ...]
    """Blobs left on disk, each with why (another revision's link, another tool's hard link)."""


def _links_to(repo_dir: Path, blob: Path, skip: set[Path]) -> list[Path]:
    """Snapshot links other than `skip` that lead to this blob."""
    out: list[Path] = []
    snapshots = repo_dir / "snapshots"
    if not snapshots.is_dir():
        return out
    for link in snapshots.rglob("*"):
        if link in skip or not link.is_symlink():
            continue
        if Path(os.path.abspath(link.parent / os.readlink(link))) == blob:
            out.append(link)
    return out


def remove_files(cache_dir: Path, repo: str, links: list[Path]) -> Removal:
    """Remove snapshot links, their blobs unless still used, empty snapshots and refs to them."""
    repo_dir = repo_folder(cache_dir, repo)
    removed: list[Path] = []
    kept: list[tuple[Path, str]] = []
    skip = set(links)
    for link in links:
        blob = Path(os.path.abspath(link.parent / os.readlink(link))) if link.is_symlink() else None
        link.unlink(missing_ok=True)
        removed.append(link)
        if blob is None or not blob.is_relative_to(repo_dir / "blobs") or not blob.exists():
            continue
        others = _links_to(repo_dir, blob, skip)
        if others:
            names = ", ".join(
                sorted({o.relative_to(repo_dir / "snapshots").parts[0][:8] for o in others})
            )
            kept.append((blob, f"also the file of revision {names} of this repo"))
            continue
        extra_links = blob.stat().st_nlink - 1
        blob.unlink()
        removed.append(blob)
        if extra_links > 0:
            kept.append(
                (blob, f"{extra_links} hard link(s) by another tool keep its bytes on disk")
            )
    _prune(repo_dir)
    return Removal(tuple(removed), tuple(kept))


def _prune(repo_dir: Path) -> None:
    """Drop emptied snapshot folders and the refs naming them, so the cache stays consistent."""
    snapshots = repo_dir / "snapshots"
    if not snapshots.is_dir():
        return
    gone: set[str] = set()
    for snapshot in list(snapshots.iterdir()):
        for folder in sorted(
            (p for p in snapshot.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)
        ):
            if not any(folder.iterdir()):
                folder.rmdir()
        if snapshot.is_dir() and not any(snapshot.iterdir()):
            snapshot.rmdir()
            gone.add(snapshot.name)
    refs = repo_dir / "refs"
    if gone and refs.is_dir():
        for ref in refs.rglob("*"):
            if ref.is_file() and ref.read_text().strip() in gone:
                ref.unlink()
