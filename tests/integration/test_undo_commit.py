"""`apply --commit` then `undo`: HEAD, branch, index and files exactly as before, or a refusal."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from frogdesk.paths import AppPaths
from frogdesk.review.apply import apply_hunks
from frogdesk.review.diff import compute_diff
from frogdesk.review.undo import latest_record, undo_apply
from frogdesk.sessions.store import SessionStore
from frogdesk.worktree.checkout import create_worktree
from tests.support.scripted import call, frogdesk, git, write_script


def make_repo(root: Path) -> Path:
    """A repository on `main` with a staged and an unstaged change of the user's own."""
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (repo / "notes.txt").write_text("one\n", encoding="utf-8")
    (repo / "staged.txt").write_text("s1\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    (repo / "staged.txt").write_text("s2\n", encoding="utf-8")
    git(repo, "add", "staged.txt")
    (repo / "notes.txt").write_text("one\ntwo (not staged)\n", encoding="utf-8")
    return repo


def state(repo: Path) -> dict[str, str]:
    """HEAD, the branch, the index entries, the status and every working-tree file's bytes."""
    out = {
        "HEAD": (repo / ".git" / "HEAD").read_text(encoding="utf-8"),
        "head": git(repo, "rev-parse", "HEAD"),
        "main": git(repo, "rev-parse", "refs/heads/main"),
        "index": git(repo, "ls-files", "-s"),
        "status": git(repo, "status", "--porcelain", "--untracked-files=all"),
    }
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if path.is_file() and not rel.startswith(".git/"):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest() + oct(path.stat().st_mode)
    return out


def run_session(tmp_path: Path, repo: Path) -> str:
    """A finished headless session that edits calc.py and adds pkg/new.py; its id."""
    script = write_script(
        tmp_path / "s.jsonl",
        [
            "Fix.\n</think>\n\n"
            + call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b"),
            "Add.\n</think>\n\n" + call("Write", file_path="pkg/new.py", content="X = 1"),
            "Done.\n</think>\n\nFixed add and added pkg/new.py.",
        ],
    )
    done = frogdesk("run", "Fix add.", "--repo", str(repo), "--script", str(script), "--json")
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["session_id"])


def test_undo_takes_back_the_commit_of_an_apply(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    session = run_session(tmp_path, repo)
    before = state(repo)

    applied = frogdesk("apply", session, "--all", "--commit", "Fix add")
    assert applied.returncode == 0, applied.stderr
    commit = git(repo, "rev-parse", "HEAD").strip()
    assert commit != before["head"].strip()
    assert git(repo, "show", "--name-only", "--format=", commit).split() == [
        "calc.py",
        "pkg/new.py",
    ]
    assert git(repo, "diff", "--cached", "--name-only").split() == ["staged.txt"]

    undone = frogdesk("undo", session)
    assert undone.returncode == 0, undone.stderr
    assert f"removed commit {commit[:12]}: main is back at {before['head'][:12]}" in undone.stdout
    assert state(repo) == before
    assert not (repo / "pkg").exists()
    # the commit is only unreferenced, not destroyed: the reflog still names it
    assert commit in git(repo, "reflog", "--format=%H", "refs/heads/main")


def test_undo_leaves_a_commit_the_user_built_on(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    session = run_session(tmp_path, repo)
    frogdesk("apply", session, "--all", "--commit", "Fix add")
    commit = git(repo, "rev-parse", "HEAD").strip()
    (repo / "later.txt").write_text("mine\n", encoding="utf-8")
    git(repo, "add", "later.txt")
    git(repo, "commit", "-qm", "on top")
    mine = git(repo, "rev-parse", "HEAD").strip()

    undone = frogdesk("undo", session)
    assert undone.returncode == 0, undone.stderr
    assert f"commit {commit[:12]} stays: HEAD moved on to {mine[:12]}" in undone.stdout
    assert git(repo, "rev-parse", "HEAD").strip() == mine
    assert git(repo, "rev-parse", "HEAD~1").strip() == commit
    # the files are restored: the user sees the reverse change and decides
    assert "a - b" in (repo / "calc.py").read_text(encoding="utf-8")
    assert not (repo / "pkg" / "new.py").exists()


def test_undo_leaves_the_commit_when_its_index_entries_changed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    worktree = create_worktree(repo, tmp_path / "worktrees", "s1")
    (worktree.path / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    diff = compute_diff(worktree.path, worktree.base_commit)
    session_dir = tmp_path / "sessions" / "s1"
    result = apply_hunks(
        repo, worktree.path, diff, diff.hunk_ids(), session_dir=session_dir, session_id="s1",
        commit_message="Fix add",
    )  # fmt: skip
    assert result.commit
    git(repo, "rm", "-q", "--cached", "calc.py")  # the user unstages the file (file kept)
    found = latest_record(tmp_path / "sessions", "s1")
    assert found is not None
    undone = undo_apply(*found)
    assert undone.ok and undone.history is not None and not undone.history.done
    assert "index of its files changed" in undone.report()
    assert git(repo, "rev-parse", "HEAD").strip() == result.commit
    assert "a - b" in (repo / "calc.py").read_text(encoding="utf-8")


def test_the_apply_record_keeps_the_index_entries_it_replaced(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    session = run_session(tmp_path, repo)
    frogdesk("apply", session, "--all", "--commit", "Fix add")
    store = SessionStore(AppPaths.default().sessions_dir)
    found = latest_record(store.root, session)
    assert found is not None
    entries = found[1].index_before
    assert entries is not None and entries["pkg/new.py"] == []
    [calc] = entries["calc.py"]
    mode, sha, stage = calc.split()
    assert (mode, stage) == ("100644", "0") and sha == git(
        repo, "rev-parse", "HEAD~1:calc.py"
    ).strip()


def _apply_a_new_file(tmp_path: Path, name: str) -> tuple[Path, dict[str, str], str]:
    """The sandbox adds one file called `name`; it alone is applied with --commit, then undone.
    The repository, its state before, and the names the commit touched."""
    root = tmp_path / name.replace("*", "star").replace(":", "colon")
    root.mkdir()
    repo = make_repo(root)
    before = state(repo)
    worktree = create_worktree(repo, root / "worktrees", "s1")
    (worktree.path / name).write_text("from the model\n", encoding="utf-8")
    diff = compute_diff(worktree.path, worktree.base_commit)
    session_dir = root / "sessions" / "s1"
    result = apply_hunks(
        repo, worktree.path, diff, diff.hunk_ids(), session_dir=session_dir, session_id="s1",
        commit_message="Add a file",
    )  # fmt: skip
    assert result.commit
    touched = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    found = latest_record(root / "sessions", "s1")
    assert found is not None
    assert undo_apply(*found).ok
    return repo, before, " ".join(touched)


def test_a_file_name_is_never_a_pathspec_when_committing(tmp_path: Path) -> None:
    """A file named `*` committed only itself: the user's unfinished and staged edits stay
    out of the commit, and undo gives back the index exactly (`*` as a pathspec matched
    every file: notes.txt was committed and staged.txt's staged version lost)."""
    for name in ("new.txt", "*", ":(glob)**"):
        repo, before, touched = _apply_a_new_file(tmp_path, name)
        assert touched == name, name  # new.txt is the control: the same path, a plain name
        assert state(repo) == before, name
