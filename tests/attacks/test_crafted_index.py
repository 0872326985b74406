"""A sandbox-written git index never makes FrogDesk read a file outside the worktree.

The attack (FrogDesk issue 28): the model writes the worktree's index in its admin folder
with extra entries named `../../../../<repo>/.env` or `/<home>/.ssh/id_ed25519` and zeroed
stat data. A snapshot that copied that index and ran `git add -A` outside the sandbox read
those files and stored them as blobs in the user's object store, which the sandbox reads:
the next step decompressed them. The snapshot must list no such name and store no such blob.
"""

from __future__ import annotations

import os
import subprocess
import uuid
import zlib
from pathlib import Path

from tests.attacks.harness import bash, resume, run_attack
from tests.attacks.payloads import PY
from tests.support.e2e import changed_paths, git, make_user_repo, repo_state

INDEX_WRITER = r"""
import hashlib, os, struct, subprocess, sys
admin = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], capture_output=True,
                       text=True, check=True).stdout.strip()
names = set()
for target in sys.argv[1:]:
    names.add(target)                                  # an absolute name
    names.add(os.path.relpath(target, os.getcwd()))    # ../../../.. from the worktree
names.add("control.txt")
body = b""
for name in sorted(n.encode() for n in names):
    entry = struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0)  # zeroed stat data
    entry += hashlib.sha1(b"blob 0\0").digest() + struct.pack(">H", len(name)) + name
    entry += b"\0" * (8 - (len(entry) % 8))
    body += entry
data = b"DIRC" + struct.pack(">II", 2, len(names)) + body
with open(os.path.join(admin, "index"), "wb") as out:
    out.write(data + hashlib.sha1(data).digest())
print("INDEX-WRITTEN", len(names), admin)
"""

OBJECT_READER = r"""
import os, sys, zlib
for folder, _, files in os.walk(sys.argv[1]):
    for name in files:
        try:
            with open(os.path.join(folder, name), "rb") as handle:
                print(zlib.decompress(handle.read()).decode("latin-1"))
        except Exception:
            pass
"""


def _all_objects(common: Path) -> tuple[set[str], bytes]:
    """Every object id of the store and all their contents, loose and packed."""
    ids = git(common.parent, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    content = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=common.parent,
        capture_output=True,
        check=True,
    ).stdout
    return set(ids.split()), content


def _old_snapshot_stores(worktree: Path, common: Path, scratch: Path) -> bytes:
    """Positive control: the old snapshot (copy the worktree's index, `git add -A -- .` with the
    user's git dir) on the crafted index; its new objects go to scratch, not the user's store."""
    admin = next(p for p in (common / "worktrees").iterdir() if (p / "index").is_file())
    index = scratch / "index"
    index.write_bytes((admin / "index").read_bytes())
    objects = scratch / "objects"
    objects.mkdir()
    env = {
        **os.environ,
        "GIT_DIR": str(common),
        "GIT_WORK_TREE": str(worktree),
        "GIT_INDEX_FILE": str(index),
        "GIT_OBJECT_DIRECTORY": str(objects),
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(common / "objects"),
    }
    subprocess.run(["git", "add", "-A", "--", "."], cwd=worktree, env=env, capture_output=True)
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=worktree, env=env, capture_output=True, check=True
    ).stdout
    stored = b""
    for folder, _, files in os.walk(objects):
        for name in files:
            stored += zlib.decompress((Path(folder) / name).read_bytes())
    return listed + b"\0" + stored


def test_crafted_index_never_reads_outside(level: str, tmp_path: Path, outside: Path) -> None:
    token = uuid.uuid4().hex
    ssh_secret = f"SECRET-SSH-{token}\n".encode()
    env_secret = f"SECRET-DOTENV-{token}\n".encode()
    control_text = f"CONTROL-BLOB-{token}"
    home = outside / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_bytes(ssh_secret)
    repo = make_user_repo(tmp_path)
    (repo / ".env").write_bytes(env_secret)
    with (repo / ".git" / "info" / "exclude").open("a", encoding="utf-8") as exclude:
        exclude.write(".env\n")
    common = repo / ".git"
    before = repo_state(repo)
    ids_before, content_before = _all_objects(common)
    assert ssh_secret not in content_before and env_secret not in content_before

    plant = (
        f"echo {control_text} > control.txt; "
        f"{PY} - {home / '.ssh' / 'id_ed25519'} {repo / '.env'} <<'EOF'\n{INDEX_WRITER}\nEOF"
    )
    read_back = f"{PY} - {common / 'objects'} <<'EOF'\n{OBJECT_READER}\nEOF"
    env = {"HOME": str(home)}
    run = run_attack(repo, [bash(plant), bash(read_back)], tmp_path, level, env=env, max_steps=1)
    assert "INDEX-WRITTEN 5" in run.observations[0], run.observations

    listed = run.summary.get("files_changed", [])
    assert isinstance(listed, list), run.summary
    changed = [str(name) for name in listed]
    assert "control.txt" in changed, run.summary
    assert not [n for n in changed if n.startswith("/") or ".." in n.split("/")], changed
    ids_after, content_after = _all_objects(common)
    assert ssh_secret not in content_after and env_secret not in content_after
    assert control_text.encode() in content_after  # the snapshot did store the worktree's file
    assert ids_before <= ids_after

    again = resume(run.session_id, tmp_path, env=env)
    seen = "\n".join(again.observations)
    assert control_text in seen, seen  # the reader works: it prints the objects it can read
    assert ssh_secret.decode().strip() not in seen and env_secret.decode().strip() not in seen
    _, content_final = _all_objects(common)
    assert ssh_secret not in content_final and env_secret not in content_final
    assert changed_paths(before, repo_state(repo)) == set()

    # Positive control: the old snapshot method, run on the index the attack left, stores both.
    scratch = tmp_path / "old-snapshot"
    scratch.mkdir()
    from frogdesk.paths import AppPaths

    worktree = AppPaths.default().worktrees_dir / run.session_id
    old = _old_snapshot_stores(worktree, common, scratch)
    assert ssh_secret in old and env_secret in old, old[:2000]
