"""Files the user's repository ignores are not the session's changes (issue 32).

`__pycache__/*.pyc` a test run wrote in the worktree showed as changed files and could be
applied. The review's snapshot now leaves out what git ignores in the USER's repository
(its `.gitignore` files, committed or not, `.git/info/exclude`, the global excludes), names
it in one line, and never takes a rule from a `.gitignore` the sandbox wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from frogdesk.review.diff import compute_diff, patch_text
from frogdesk.review.show import ignored_note
from frogdesk.review.snapshot_ignore import rebased_patterns
from frogdesk.worktree.git import GitPaths
from tests.support.review_helpers import MakeSession, git, repo_fingerprint

PYC = b"\x00\x0d\x0d\x0apyc bytes"


def _write(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)


SOURCES = [
    ".gitignore edited after the start",
    "info/exclude",
    "core.excludesFile",
    "XDG git/ignore",
]


@pytest.mark.parametrize("source", SOURCES)
def test_what_the_users_repository_ignores_is_not_a_change(
    user_repo: Path,
    make_session: MakeSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    source: str,
) -> None:
    rule = b"__pycache__/\n*.log\n"
    wt = make_session(user_repo)
    if source == ".gitignore edited after the start":
        (user_repo / ".gitignore").write_bytes(rule)  # the worktree never gets this one
    elif source == "info/exclude":
        (user_repo / ".git" / "info").mkdir(exist_ok=True)
        (user_repo / ".git" / "info" / "exclude").write_bytes(rule)
    elif source == "core.excludesFile":
        excludes = tmp_path / "my-excludes"
        excludes.write_bytes(rule)
        config = tmp_path / "gitconfig"
        config.write_text(f"[core]\n\texcludesFile = {excludes}\n", encoding="utf-8")
        monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    else:
        (tmp_path / "xdg" / "git").mkdir(parents=True)
        (tmp_path / "xdg" / "git" / "ignore").write_bytes(rule)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    _write(
        wt.path,
        {
            "__pycache__/m.cpython-311.pyc": PYC,
            "src/__pycache__/m.cpython-311.pyc": PYC,
            "run.log": b"log\n",
            "src/new.py": b"x = 1\n",
        },
    )
    diff = compute_diff(wt.path, wt.base_commit)
    expected = ["src/new.py"]
    assert [c.path for c in diff.files] == expected
    assert diff.ignored == ("__pycache__/", "run.log", "src/__pycache__/")
    _, names = patch_text(wt.path, wt.base_commit)  # the step's file count and `run` agree
    assert names == expected
    assert ignored_note(diff.ignored) == (
        "3 ignored paths changed, not offered: __pycache__/, run.log, src/__pycache__/"
    )


def test_the_worktrees_own_gitignore_is_no_rule(user_repo: Path, make_session: MakeSession) -> None:
    (user_repo / ".gitignore").write_bytes(b"__pycache__/\n")
    git(user_repo, "add", ".gitignore")
    git(user_repo, "commit", "-q", "-m", "ignore caches")
    wt = make_session(user_repo)
    # The sandbox writes ignore files that would hide two new files and show the cache.
    _write(
        wt.path,
        {
            ".gitignore": b"__pycache__/\nhidden.py\n!__pycache__/\n",
            "src/.gitignore": b"*\n",
            "hidden.py": b"import os\n",
            "src/also_hidden.py": b"import sys\n",
            "__pycache__/m.pyc": PYC,
        },
    )
    # Positive control: git's standard rules in the worktree (the old snapshot's listing)
    # obey those files: both new files hidden, the cache shown.
    env = {**os.environ, **GitPaths(wt.path, wt.git_dir, wt.common_dir).env()}
    listing = ["git", "ls-files", "--others", "--exclude-standard"]
    old = subprocess.run(listing, cwd=wt.path, env=env, capture_output=True, text=True, check=True)
    old = old.stdout.split()
    assert "hidden.py" not in old and "src/also_hidden.py" not in old
    assert "__pycache__/m.pyc" in old
    diff = compute_diff(wt.path, wt.base_commit)
    listed = sorted(c.path for c in diff.files)
    assert listed == [".gitignore", "hidden.py", "src/.gitignore", "src/also_hidden.py"]
    assert diff.ignored == ("__pycache__/",)


NESTED = {
    ".gitignore": b"*.tmp\n/top_only\nbuild/\n!keep.tmp\n",
    "a/.gitignore": b"# a comment\n\n*.gen\n/anchored\ndeep/x\n**/any/y\n!wanted.gen\nd/\n",
    "a/b/.gitignore": b"!*.tmp\nz*\n",
    "we[ir]d*/.gitignore": b"q\n",
}
PATHS = [
    "f.tmp", "keep.tmp", "top_only", "a/top_only", "build/o", "a/build/o", "a/f.gen",
    "a/wanted.gen", "a/b/f.gen", "a/anchored", "a/b/anchored", "a/deep/x", "a/b/deep/x",
    "a/any/y", "a/b/any/y", "a/d/f", "a/b/d/f", "a/b/f.tmp", "a/b/zed", "a/zed",
    "we[ir]d*/q", "we[ir]d*/r/q", "weird/q", "x.txt",
]  # fmt: skip


def test_nested_rules_rebased_match_what_git_ignores(
    user_repo: Path, make_session: MakeSession
) -> None:
    _write(user_repo, NESTED)
    git(user_repo, "add", "-A")
    git(user_repo, "commit", "-q", "-m", "nested ignore files")
    wt = make_session(user_repo)
    files = {p: b"data\n" for p in PATHS}
    _write(wt.path, files)
    _write(user_repo, files)
    # git's own answer with its per-folder files, in the user's repository itself
    listing = ["ls-files", "-z", "--others", "--ignored", "--directory", "--exclude-standard"]
    truth = sorted(n for n in git(user_repo, *listing).split("\0") if n)
    diff = compute_diff(wt.path, wt.base_commit)
    assert list(diff.ignored) == truth
    assert len(truth) > 10  # the rules of every kind ignored something

    def ignored(path: str) -> bool:
        return any(path == i or (i.endswith("/") and path.startswith(i)) for i in truth)

    assert {c.path for c in diff.files} == {p for p in PATHS if not ignored(p)}


def test_rebased_patterns() -> None:
    assert rebased_patterns(b"", b"a\n#c\n\n/b\n") == [b"a", b"/b"]
    assert rebased_patterns(b"s/t", b"x\n/y\nm/n\n!z/\n*.o\n") == [
        b"/s/t/**/x", b"/s/t/y", b"/s/t/m/n", b"!/s/t/**/z/", b"/s/t/**/*.o",
    ]  # fmt: skip
    assert rebased_patterns(b"a*[b]", b"q\n") == [b"/a\\*\\[b\\]/**/q"]


def test_the_cli_names_ignored_files_and_never_applies_them(tmp_path: Path) -> None:
    from frogdesk.config import Settings
    from frogdesk.paths import AppPaths
    from frogdesk.sessions.record import SessionSpec
    from frogdesk.sessions.service import SessionService
    from tests.support.scripted import call, frogdesk, make_repo, write_script

    repo = make_repo(tmp_path)  # its committed .gitignore says __pycache__/
    replies = [
        "Write.\n</think>\n\n"
        + call("Write", file_path="__pycache__/calc.cpython-311.pyc", content="cache"),
        "Fix.\n</think>\n\n"
        + call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"),
        "Done.\n</think>\n\nFixed.",
    ]
    service = SessionService(AppPaths.default(), Settings.of(backend="script"))
    script = write_script(tmp_path / "s.jsonl", replies)
    active = service.start(SessionSpec("fix", repo, backend="script", script=str(script)))
    service.run(active)
    session = active.record.id
    assert (Path(active.record.worktree) / "__pycache__" / "calc.cpython-311.pyc").is_file()
    shown = frogdesk("review", session, cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert "1 file(s) changed" in shown.stdout
    assert "1 ignored path changed, not offered: __pycache__/" in shown.stdout
    as_json = json.loads(frogdesk("review", session, "--json", cwd=repo).stdout)
    assert as_json["ignored"] == ["__pycache__/"]
    assert [f["path"] for f in as_json["files"]] == ["calc.py"]
    before = repo_fingerprint(repo)
    done = frogdesk("apply", session, "--all", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert not (repo / "__pycache__").exists()
    after = repo_fingerprint(repo)
    assert {k for k in after if after.get(k) != before.get(k)} <= {"calc.py", ".git/index"}
