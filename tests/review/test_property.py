"""Property: random sessions, random decisions, random user edits elsewhere; apply is exact."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frogdesk.review.apply import apply_hunks
from frogdesk.review.diff import compute_diff
from frogdesk.worktree.checkout import create_worktree
from tests.support.review_helpers import git, repo_fingerprint

N_LINES = 30
SESSION_LINES = range(0, 14)  # the session edits only here ...
USER_LINES = range(22, N_LINES)  # ... and the user only here, so every user edit merges cleanly


@dataclass(frozen=True)
class FileScript:
    """What happens to one base file: the session's action and line edits, the user's edits."""

    action: str  # keep | edit | delete | rename
    session_lines: frozenset[int]
    user_lines: frozenset[int]


file_scripts = st.builds(
    FileScript,
    action=st.sampled_from(["keep", "edit", "edit", "delete", "rename"]),
    session_lines=st.frozensets(st.sampled_from(list(SESSION_LINES)), max_size=5),
    user_lines=st.frozensets(st.sampled_from(list(USER_LINES)), max_size=3),
)


def _base(i: int) -> list[bytes]:
    return [b"f%d line %d\n" % (i, j) for j in range(N_LINES)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scripts=st.lists(file_scripts, min_size=1, max_size=4),
    new_files=st.integers(min_value=0, max_value=2),
    choice=st.randoms(use_true_random=False),
)
def test_random_sessions_apply_exactly(
    scripts: list[FileScript], new_files: int, choice: object
) -> None:
    import random

    assert isinstance(choice, random.Random)
    with tempfile.TemporaryDirectory(prefix="frogdesk-prop-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        git(repo, "init", "-q")
        for i in range(len(scripts)):
            (repo / f"f{i}.txt").write_bytes(b"".join(_base(i)))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "base")
        wt = create_worktree(repo, Path(tmp) / "wts", "s")

        # The session works in its worktree.
        for i, script in enumerate(scripts):
            path = wt.path / f"f{i}.txt"
            lines = _base(i)
            if script.action == "delete":
                path.unlink()
                continue
            if script.action in ("edit", "rename"):
                for j in script.session_lines:
                    lines[j] = b"S%d-%d\n" % (i, j)
            path.write_bytes(b"".join(lines))
            if script.action == "rename":
                path.rename(wt.path / f"g{i}.txt")
        for k in range(new_files):
            (wt.path / f"new{k}.txt").write_bytes(b"new %d\n" % k)

        # The user keeps working in other regions of files the session does not delete.
        user_lines: dict[int, list[bytes]] = {}
        for i, script in enumerate(scripts):
            lines = _base(i)
            if script.action != "delete":
                for j in script.user_lines:
                    lines[j] = b"U%d-%d\n" % (i, j)
            user_lines[i] = lines
            (repo / f"f{i}.txt").write_bytes(b"".join(lines))

        before = repo_fingerprint(repo)
        diff = compute_diff(wt.path, wt.base_commit)
        assert repo_fingerprint(repo) == before  # reviewing writes nothing
        approved = {h for h in diff.hunk_ids() if choice.random() < 0.5}
        result = apply_hunks(repo, wt.path, diff, approved)
        assert result.applied, result.report()
        if not approved:
            assert repo_fingerprint(repo) == before

        for i, script in enumerate(scripts):
            change = diff.find_file(f"f{i}.txt")
            expected = list(user_lines[i])
            target = f"f{i}.txt"
            if change is None:
                assert script.action == "keep" or not script.session_lines
            elif script.action == "delete":
                (hunk,) = change.hunks
                if hunk.id in approved:
                    expected = []
                    target = ""
            else:
                for hunk in change.hunks:
                    if hunk.kind == "rename" and hunk.id in approved:
                        target = f"g{i}.txt"
                    if hunk.kind != "text" or hunk.id not in approved:
                        continue
                    first, last = hunk.old_range()
                    for j in script.session_lines:
                        if first - 1 <= j <= last - 1:
                            expected[j] = b"S%d-%d\n" % (i, j)
            for name in (f"f{i}.txt", f"g{i}.txt"):
                if name == target:
                    assert (repo / name).read_bytes() == b"".join(expected), name
                else:
                    assert not (repo / name).exists(), name
        for k in range(new_files):
            found = diff.find_file(f"new{k}.txt")
            assert found is not None
            landed = (repo / f"new{k}.txt").exists()
            assert landed == (found.hunks[0].id in approved)
