"""The review's snapshot of a worktree as a tree object, made without git reading any worktree file.

The sandbox can write the worktree and its admin folder: the admin folder's `index` (whose
entries may name `../../home/.ssh/id_ed25519` or `/etc/shadow`), `.gitattributes` files
(`* filter=x` runs a command git finds in the user's config), links. So git only lists
names here: the base commit's entries (a temporary index read from it) and the worktree's
untracked, not ignored files (git's own directory walk, whose names come from readdir and
so stay inside). FrogDesk then opens each name beneath the worktree without following any
link, hashes what it read (symlinks as their target, as git stores them), writes the blobs
itself and lets git build the tree from an index FrogDesk wrote. Line endings are
normalized as `git add` would, by the base commit's attributes (see snapshot_eol).
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from frogdesk import beneath
from frogdesk.errors import EscapeError
from frogdesk.review.gitcmd import GitError, git_out, read_blobs, run_git
from frogdesk.review.snapshot_cache import BlobCache
from frogdesk.review.snapshot_eol import eol_actions, to_git
from frogdesk.review.snapshot_ignore import exclude_options
from frogdesk.review.snapshot_objects import BlobWriter
from frogdesk.scratch import scratch_folder
from frogdesk.worktree.checkout import PRIVATE_SUFFIX
from frogdesk.worktree.git import GitPaths
from frogdesk.worktree.record import recorded_paths

GITLINK = "160000"
SYMLINK = "120000"
CACHE_FOLDER = "review-cache"
_RETRIES = 5
"""Reads of one file that changed while it was read, before the snapshot gives up."""


def review_paths(worktree: Path) -> GitPaths:
    """The paths the review's git runs with: the worktree's files, and the user's git dir as
    GIT_DIR, so no file in the worktree's admin folder is read (config.worktree and index
    there are writable from inside the sandbox). TamperedWorktree if the worktree's git
    metadata no longer matches its record.
    """
    recorded = recorded_paths(worktree)
    if recorded is not None:
        common = recorded.common_dir
    else:  # a repository of the user's own
        out = git_out(worktree, ["rev-parse", "--path-format=absolute", "--git-common-dir"])
        common = Path(out.decode().strip())
    return GitPaths(work_tree=worktree.absolute(), git_dir=common, common_dir=common)


@dataclass(frozen=True)
class _Settings:
    """What the user's repository config says about how files become blobs."""

    algorithm: str
    filemode: bool
    symlinks: bool


def _settings(paths: GitPaths) -> _Settings:
    """The object format and core.fileMode / core.symlinks, read from the user's config."""
    pattern = r"^(core\.(filemode|symlinks)|extensions\.objectformat)$"
    done = run_git(paths, ["config", "-z", "--get-regexp", pattern], ok_codes=(0, 1))
    values: dict[str, str] = {}
    for item in done.stdout.split(b"\0"):
        key, _, value = item.decode("utf-8", "replace").partition("\n")
        if key:
            values[key.lower()] = value.strip().lower()
    false = ("false", "no", "off", "0")
    return _Settings(
        algorithm=values.get("extensions.objectformat") or "sha1",
        filemode=values.get("core.filemode", "true") not in false,
        symlinks=values.get("core.symlinks", "true") not in false,
    )


def _cache_folder(worktree: Path) -> Path | None:
    """The worktree's private review cache, for FrogDesk worktrees only (see snapshot_cache)."""
    recorded = recorded_paths(worktree)
    if recorded is None:
        return None
    private = recorded.work_tree.with_name(recorded.work_tree.name + PRIVATE_SUFFIX)
    if os.path.lexists(private) and (private.is_symlink() or not private.is_dir()):
        return None
    return private / CACHE_FOLDER


def _listed(
    paths: GitPaths, env: dict[str, str], excludes: list[str]
) -> tuple[dict[bytes, tuple[str, str]], list[bytes]]:
    """The temporary index's entries, name -> (mode, id), and the worktree's untracked names.

    One `ls-files -t`: `H` lines are the index read from the base, `?` lines come from git's
    walk of the worktree's folders (not ignored by the user's rules, `excludes`). A nested
    repository shows as `dir/`: left out (`git add -A` would make a gitlink, which the
    review skips anyway).
    """
    out = git_out(
        paths,
        ["ls-files", "-z", "-t", "-s", "--cached", "--others", *excludes],
        env=env,
    )
    base: dict[bytes, tuple[str, str]] = {}
    others: list[bytes] = []
    for item in out.split(b"\0"):
        tag, _, rest = item.partition(b" ")
        if tag == b"?":
            if rest and not rest.endswith(b"/"):
                others.append(rest)
        elif tag == b"H":
            meta, _, name = rest.partition(b"\t")
            mode, oid, _stage = meta.decode().split(" ")
            base[name] = (mode, oid)
        elif item:
            raise GitError(f"git ls-files: unexpected line {item[:80]!r}")
    return base, others


@dataclass(frozen=True)
class _Found:
    """One worktree entry as FrogDesk read it: a git mode and its bytes (or a cached id)."""

    mode: str
    info: os.stat_result
    data: bytes | None = None
    oid: str | None = None


class _Reader:
    """Opens names beneath the worktree root, never through a link, one folder descriptor each."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.folders: dict[bytes, int | None] = {}

    def close(self) -> None:
        """Close every folder descriptor."""
        for fd in self.folders.values():
            if fd is not None:
                os.close(fd)
        self.folders.clear()

    def folder(self, parent: bytes) -> int | None:
        """A descriptor of the folder, or None where it is gone or reached through a link."""
        if parent not in self.folders:
            try:
                fd: int | None = beneath.open_beneath(
                    self.root, os.fsdecode(parent), beneath.DIR_FLAGS, follow_links=False
                )
            except EscapeError:
                fd = None  # beyond a link: git does not look there either
            except (FileNotFoundError, NotADirectoryError):
                fd = None
            self.folders[parent] = fd
        return self.folders[parent]

    def read(self, name: bytes, rule: str, cache: BlobCache) -> _Found | None:
        """The entry at name as a regular file or link; None when it is absent or neither."""
        parent, _, last = name.rpartition(b"/")
        folder = self.folder(parent)
        if folder is None:
            return None
        key = os.fsdecode(name)
        for _ in range(_RETRIES):
            try:
                info = os.stat(last, dir_fd=folder, follow_symlinks=False)
            except (FileNotFoundError, NotADirectoryError):
                return None
            if stat.S_ISLNK(info.st_mode):
                known = cache.get(key, info)
                if known is not None and known[0] == SYMLINK:
                    return _Found(SYMLINK, info, oid=known[1])
                try:
                    target = os.readlink(last, dir_fd=folder)
                except OSError as exc:
                    if exc.errno in (errno.EINVAL, errno.ENOENT):
                        continue  # replaced while looked at
                    raise
                return _Found(SYMLINK, info, data=target)
            if not stat.S_ISREG(info.st_mode):
                return None  # folders, FIFOs, sockets, devices: not files git stores
            known = cache.get(key, info)
            if known is not None and known[0] == want_mode(rule, info):
                return _Found(known[0], info, oid=known[1])
            data = self._content(folder, last, info)
            if data is not None:
                return _Found(want_mode(rule, info), info, data=data)
        raise GitError(f"{key} kept changing while FrogDesk read it for the review")

    def _content(self, folder: int, last: bytes, info: os.stat_result) -> bytes | None:
        """The file's bytes if it is still the same regular file from start to end of the read."""
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY
        try:
            fd = beneath.open_beneath(folder, os.fsdecode(last), flags, follow_links=False)
        except (EscapeError, FileNotFoundError):
            return None
        try:
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode) or (before.st_dev, before.st_ino) != (
                info.st_dev,
                info.st_ino,
            ):
                return None
            chunks: list[bytes] = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            after = os.fstat(fd)
        finally:
            os.close(fd)
        if (after.st_size, after.st_mtime_ns, after.st_ctime_ns) != (
            info.st_size,
            info.st_mtime_ns,
            info.st_ctime_ns,
        ):
            return None
        return b"".join(chunks)


def want_mode(rule: str, info: os.stat_result) -> str:
    """A regular file's git mode: by its executable bit (rule "filemode"), else the rule's mode."""
    if rule == "filemode":
        return "100755" if info.st_mode & stat.S_IXUSR else "100644"
    return rule


def _regular_rule(settings: _Settings, base: tuple[str, str] | None) -> str:
    """What decides a regular file's git mode, as `git add` would with these settings."""
    if settings.filemode:
        if base is not None and base[0] == SYMLINK and not settings.symlinks:
            return SYMLINK  # a link checked out as a plain file stays a link
        return "filemode"
    if base is not None and base[0] in ("100644", "100755", SYMLINK):
        return base[0]
    return "100644"


def snapshot_tree(worktree: Path, base_commit: str) -> str:
    """Write the worktree's current files (untracked, not ignored, included) as a tree object.

    Neither the worktree's index nor the user's is read or changed; git reads no file of the
    worktree but its folders' names. What counts as ignored comes from the user's
    repository (see snapshot_ignore), never from a `.gitignore` in the worktree.
    """
    return snapshot_with_ignored(worktree, base_commit, ignored=False)[0]


def snapshot_with_ignored(
    worktree: Path, base_commit: str, *, ignored: bool = True
) -> tuple[str, list[str]]:
    """`snapshot_tree`, and the untracked paths it left out as ignored (with `ignored`):
    each a file, or a folder wholly ignored as `dir/`."""
    paths = review_paths(worktree)
    settings = _settings(paths)
    cache = BlobCache.load(
        _cache_folder(worktree), f"{base_commit} {settings.algorithm}", time.time_ns()
    )
    with exclude_options(worktree, paths) as excludes:
        try:
            return _snapshot(paths, base_commit, settings, cache, excludes, ignored)
        except GitError:
            if not cache.entries:
                raise
            cache.clear()  # a cached blob the store lost (gc): read everything again
            return _snapshot(paths, base_commit, settings, cache, excludes, ignored)


def _snapshot(
    paths: GitPaths,
    base_commit: str,
    settings: _Settings,
    cache: BlobCache,
    excludes: list[str],
    want_ignored: bool,
) -> tuple[str, list[str]]:
    with scratch_folder("frogdesk-review-") as tmp:
        base_env = {"GIT_INDEX_FILE": str(Path(tmp) / "base-index")}
        git_out(paths, ["read-tree", base_commit], env=base_env)
        base, others = _listed(paths, base_env, excludes)
        left_out = _ignored(paths, base_env, excludes) if want_ignored else []
        names = sorted(set(base).union(others))
        empty = Path(tmp) / "empty"
        empty.mkdir()
        trusted = GitPaths(work_tree=empty, git_dir=paths.common_dir, common_dir=paths.common_dir)
        lines = _index_lines(paths, trusted, base_env, names, base, settings, cache)
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git_out(paths, ["update-index", "-z", "--index-info"], stdin=b"".join(lines), env=env)
        tree = git_out(paths, ["write-tree"], env=env).decode().strip()
    cache.save()
    return tree, left_out


def _ignored(paths: GitPaths, env: dict[str, str], excludes: list[str]) -> list[str]:
    """The untracked names the rules ignore; a folder ignored whole is one `dir/` entry."""
    args = ["ls-files", "-z", "--others", "--ignored", "--directory", *excludes]
    out = git_out(paths, args, env=env)
    return sorted(n.decode("utf-8", "surrogateescape") for n in out.split(b"\0") if n)


def _index_lines(
    paths: GitPaths,
    trusted: GitPaths,
    base_env: dict[str, str],
    names: Iterable[bytes],
    base: dict[bytes, tuple[str, str]],
    settings: _Settings,
    cache: BlobCache,
) -> list[bytes]:
    """`update-index --index-info` lines for every entry the snapshot holds."""
    found: dict[bytes, _Found] = {}
    gitlinks: list[bytes] = []
    root = beneath.open_root(paths.work_tree)
    reader = _Reader(root)
    try:
        for name in names:
            known = base.get(name)
            if known is not None and known[0] == GITLINK:
                gitlinks.append(name)  # a submodule stays as the base has it
                continue
            if any(name.startswith(link + b"/") for link in gitlinks):
                continue
            entry = reader.read(name, _regular_rule(settings, known), cache)
            if entry is not None:
                found[name] = entry
    finally:
        reader.close()
        os.close(root)
    to_hash = [n for n, e in found.items() if e.oid is None and e.mode != SYMLINK]
    actions = eol_actions(trusted, base_env, to_hash)
    committed = read_blobs(
        paths, [base[n][1] for n, a in actions.items() if a == "auto" and n in base]
    )
    writer = BlobWriter(paths, settings.algorithm)
    lines: list[bytes] = [
        b"%s %s\t%s\0" % (GITLINK.encode(), base[n][1].encode(), n) for n in gitlinks
    ]
    for name, entry in found.items():
        oid = entry.oid
        if oid is None:
            assert entry.data is not None
            data = entry.data
            action = actions.get(name, "none")
            if action != "none":
                had_cr = name in base and b"\r" in committed.get(base[name][1], b"")
                data = to_git(data, action, had_cr)
            oid = writer.add(data)
            cache.put(os.fsdecode(name), entry.info, entry.mode, oid)
        lines.append(b"%s %s\t%s\0" % (entry.mode.encode(), oid.encode(), name))
    writer.flush()
    return lines
