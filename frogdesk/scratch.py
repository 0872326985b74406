"""FrogDesk's own short-lived folders (a temporary git index, a merge's three files, a review's
empty work tree): one folder per process in the user's own `frogdesk-UID` folder of the
system temp, swept once their process is gone.

A process killed while it holds a temporary folder never removes it, and in the shared temp
folder nothing would ever sweep it (the SIGKILL tests alone left thousands). So the entry
point calls `use_scratch` once: every `scratch_folder` after it lies in
`$TMPDIR/frogdesk-UID/<pid>-<random>/`, and the folders there whose process has ended are
removed. The system temp is kept (not FrogDesk's cache) so that a full disk under FrogDesk's
home does not stop a diff; the sandbox hides `frogdesk-UID` as one of FrogDesk's own folders
(at landlock the rest of /tmp stays readable). A `frogdesk-UID` that is not a real folder of this user's alone (another
user made it first, or a link) is not used: folders go to the system temp as before. Code
run without an entry point (a library caller, a test) gets the system temp as `tempfile`
gives it. Only host-side folders go here: nothing the sandbox mounts.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from frogdesk.durable import pid_alive

_OWNER = re.compile(r"(\d+)-[0-9a-f]+")
"""A process folder's name: the pid that made it, a random tail (a reused pid differs in it)."""

_lock = threading.Lock()
_root: Path | None = None
_mine: Path | None = None


def scratch_root(temp: Path | None = None) -> Path:
    """Where every process's scratch folder of this user lies, in `temp` (default: the
    system temp)."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return (temp or Path(tempfile.gettempdir())) / f"frogdesk-{uid}"


def _own_folder(root: Path) -> bool:
    """Make `root` (0700) if missing; True when it is a real folder of this user's alone."""
    try:
        root.mkdir(mode=0o700, exist_ok=True)
        found = root.lstat()  # never through a link someone put in its place
    except OSError:
        return False
    mine = not hasattr(os, "getuid") or found.st_uid == os.getuid()
    return stat.S_ISDIR(found.st_mode) and mine and not found.st_mode & 0o077


def sweep_scratch(root: Path) -> list[Path]:
    """Remove the folders under `root` whose process has ended; never fails. Returns them."""
    removed: list[Path] = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    for entry in entries:
        found = _OWNER.fullmatch(entry.name)
        if found is None or pid_alive(int(found[1])):
            continue
        # rmtree does not follow links inside; a folder that will not go stays for next time
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


@contextmanager
def use_scratch(root: Path | None = None) -> Iterator[Path | None]:
    """Put this process's scratch folders under `root` (default: `scratch_root()`) while the
    block runs: sweep what ended processes left, and remove this process's own folder at
    the end. Yields the root, or None when it is not safe to use (see the module)."""
    global _root, _mine
    root = root or scratch_root()
    if not _own_folder(root):
        yield None
        return
    sweep_scratch(root)
    with _lock:
        before = _root, _mine
        _root, _mine = root, None
    try:
        yield root
    finally:
        with _lock:
            mine = _mine
            _root, _mine = before
        if mine is not None:
            shutil.rmtree(mine, ignore_errors=True)


def _process_folder() -> Path | None:
    """This process's folder under the root (made on first use), or None with no root."""
    global _mine
    with _lock:
        if _root is None:
            return None
        if _mine is None or not _mine.is_dir():
            if not _own_folder(_root):
                return None
            mine = _root / f"{os.getpid()}-{secrets.token_hex(4)}"
            mine.mkdir(mode=0o700)
            _mine = mine
        return _mine


@contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A fresh private folder, removed when the block ends (as `TemporaryDirectory`), in this
    process's scratch folder when `use_scratch` is in effect, else in the system temp.
    The process folder's name is random and it is made 0700 with O_EXCL semantics
    (`mkdir`), so nobody else can have it ready."""
    with tempfile.TemporaryDirectory(prefix=prefix, dir=_process_folder()) as tmp:
        yield Path(tmp)
