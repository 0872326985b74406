"""Invariant 1: nothing reaches the user's repository but approved hunks, and every apply undoes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.e2e import (
    BIG_LINES,
    call,
    changed_paths,
    frogdesk,
    git,
    make_user_repo,
    observations,
    reply,
    repo_state,
    run_script,
    write_script,
)

# Everything a model might try on the repository from inside its sandbox.
GIT_MISCHIEF = (
    "rm old.txt; git add -A; git commit -qm 'agent commit'; echo commit=$?; "
    "git branch agent-branch; echo branch=$?; git tag agent-tag; echo tag=$?; "
    "git update-ref refs/heads/main HEAD; echo update=$?; "
    "git config user.name agent; echo config=$?; "
    "echo 'exit 1' > \"$(git rev-parse --git-common-dir)/hooks/pre-commit\"; echo hook=$?; "
    "git stash list | wc -l"
)


def session_replies() -> list[str]:
    """Write a file, two far-apart edits in one file, then delete/commit/branch via Bash."""
    return [
        reply("New file.", call("Write", file_path="new.txt", content="brand new\n")),
        reply(
            "Edit the top of big.txt.",
            call("Edit", file_path="big.txt", old_string="line 2\n", new_string="LINE TWO\n"),
        ),
        reply(
            "Edit the bottom.",
            call("Edit", file_path="big.txt", old_string="line 39\n", new_string="LINE 39!\n"),
        ),
        reply("Clean up and commit.", call("Bash", command=GIT_MISCHIEF)),
        reply("Done.", answer="Added new.txt, edited big.txt, removed old.txt."),
    ]


@pytest.mark.slow
def test_run_touches_nothing_then_only_approved_hunks_land_and_undo_restores(
    tmp_path: Path, sandbox_level: str
) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    done, summary, traj = run_script(repo, session_replies(), tmp_path)
    assert done.returncode == 0, done.stderr
    mischief = observations(traj)[3]
    assert "commit=0" in mischief  # committing inside the session's own worktree is fine
    for refused in ("branch=", "tag=", "update=", "config=", "hook="):
        assert f"{refused}0" not in mischief, mischief
    assert mischief.split("STDERR:")[0].rstrip().endswith("\n1")  # the user's one stash entry
    assert changed_paths(before, repo_state(repo)) == set()
    session = str(summary["session_id"])

    listed = frogdesk("review", session, "--json")
    assert listed.returncode == 0, listed.stderr
    files = {f["path"]: f for f in json.loads(listed.stdout)["files"]}
    assert {p: f["status"] for p, f in files.items()} == {
        "big.txt": "modified",
        "new.txt": "added",
        "old.txt": "deleted",
    }
    top, bottom = files["big.txt"]["hunks"]
    assert (top["added"], top["removed"], bottom["added"], bottom["removed"]) == (1, 1, 1, 1)
    assert changed_paths(before, repo_state(repo)) == set()  # reviewing writes nothing

    chosen = [top["id"], files["new.txt"]["hunks"][0]["id"]]
    applied = frogdesk("apply", session, "--hunks", ",".join(chosen))
    assert applied.returncode == 0, applied.stderr
    after = repo_state(repo)
    assert changed_paths(before, after) == {"big.txt", "new.txt"}
    expected_big = list(BIG_LINES)
    expected_big[1] = "LINE TWO\n"
    assert (repo / "big.txt").read_text(encoding="utf-8") == "".join(expected_big)
    assert (repo / "new.txt").read_bytes() == b"brand new\n"
    assert (repo / "old.txt").exists()
    assert git(repo, "diff", "--cached", "--name-only") == "staged.txt\n"

    undone = frogdesk("undo", session)
    assert undone.returncode == 0, undone.stderr
    assert repo_state(repo) == before
    again = frogdesk("undo", session)
    assert again.returncode == 2 and "nothing to undo" in again.stderr


@pytest.mark.slow
def test_apply_all_then_commit_then_undo_restores_every_byte(
    tmp_path: Path, sandbox_level: str
) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    done, summary, _ = run_script(repo, session_replies(), tmp_path)
    assert done.returncode == 0, done.stderr
    session = str(summary["session_id"])
    applied = frogdesk("apply", session, "--all")
    assert applied.returncode == 0, applied.stderr
    assert changed_paths(before, repo_state(repo)) == {"big.txt", "new.txt", "old.txt"}
    assert not (repo / "old.txt").exists()
    assert (repo / "app.py").read_text(encoding="utf-8").endswith("# unstaged\n")
    undone = frogdesk("undo")
    assert undone.returncode == 0, undone.stderr
    assert repo_state(repo) == before


@pytest.mark.slow
def test_undo_refuses_to_clobber_a_later_user_edit(tmp_path: Path, sandbox_level: str) -> None:
    repo = make_user_repo(tmp_path)
    done, summary, _ = run_script(repo, session_replies(), tmp_path)
    assert done.returncode == 0, done.stderr
    applied = frogdesk("apply", str(summary["session_id"]), "--files", "big.txt")
    assert applied.returncode == 0, applied.stderr
    (repo / "big.txt").write_text("the user rewrote it\n", encoding="utf-8")
    kept = repo_state(repo)
    undone = frogdesk("undo")
    assert undone.returncode == 1 and "big.txt" in undone.stderr
    assert "Traceback" not in undone.stderr
    assert repo_state(repo) == kept


@pytest.mark.slow
def test_bash_cannot_destroy_the_users_objects(tmp_path: Path, sandbox_level: str) -> None:
    repo = make_user_repo(tmp_path)
    head = git(repo, "rev-parse", "HEAD").strip()
    before = {p.relative_to(repo).as_posix() for p in (repo / ".git" / "objects").rglob("*")}
    vandal = (
        'objects="$(git rev-parse --git-common-dir)/objects"; rm -rf "$objects"/??; ls "$objects"'
    )
    replies = [reply("Tidy up.", call("Bash", command=vandal)), reply("Done.", answer="ok")]
    script = write_script(tmp_path / "script.jsonl", replies)
    frogdesk("run", "Tidy.", "--repo", str(repo), "--script", str(script), "--quiet")
    after = {p.relative_to(repo).as_posix() for p in (repo / ".git" / "objects").rglob("*")}
    assert before <= after
    assert git(repo, "cat-file", "-t", head) == "commit\n"
