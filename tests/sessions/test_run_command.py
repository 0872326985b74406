"""`frogdesk run` end to end with the script backend on a real repository with a failing test."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.scripted import (
    fingerprint,
    fixing_replies,
    frogdesk,
    git,
    make_repo,
    write_script,
)

LEAF_KEYS = {
    "trajectory_format",
    "trajectory_id",
    "instance_id",
    "seed",
    "messages",
    "tools",
    "steps",
    "n_steps",
    "exit_reason",
    "error",
    "final_message",
    "context_tokens",
    "elapsed_sec",
    "output_patch",
    "partial",
}


@pytest.mark.slow
def test_run_fixes_the_repo_in_a_worktree(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    script = write_script(tmp_path / "script.jsonl", fixing_replies())
    out = tmp_path / "out"
    done = frogdesk(
        "run",
        "Fix the failing test.",
        "--repo",
        str(repo),
        "--script",
        str(script),
        "--output",
        str(out),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["exit_reason"] == "agent" and summary["n_steps"] == 5
    assert summary["files_changed"] == ["calc.py"]
    assert Path(summary["output_dir"]) == out.resolve()
    assert "step 3" in done.stderr and "finished: final answer after 5 steps" in done.stderr

    traj = json.loads((out / "trajectory_seed-0.json").read_text(encoding="utf-8"))
    assert set(traj) >= LEAF_KEYS
    assert traj["trajectory_format"] == "leaf-function-calling"
    assert traj["exit_reason"] == "agent" and traj["partial"] is False and traj["error"] is None
    assert traj["final_message"] == "Fixed add() in calc.py: it subtracted instead of adding."
    assert [t["function"]["name"] for t in traj["tools"]] == [
        "Read",
        "Write",
        "Edit",
        "Glob",
        "Bash",
    ]
    assert [m["role"] for m in traj["messages"]] == ["system", "user"] + [
        "assistant",
        "tool",
    ] * 4 + ["assistant"]
    obs = [s["observations"][0]["observation"] for s in traj["steps"][:4]]
    assert obs[0] == "calc.py\n1. def add(a, b):\n2.     return a - b"
    assert obs[1].startswith("Exit code: 1\nSTDOUT:\n") and "FAILED" in obs[1]
    assert obs[2] == "Edited calc.py (1 replacement)."
    assert obs[3] == "Exit code: 0\nSTDOUT:\nOK\n\nSTDERR:\n"
    ours = traj["frogdesk"]
    assert ours["session_id"] == summary["session_id"] and ours["backend"] == "script"
    assert ours["model_file"] == str(script) and len(ours["steps"]) == 5
    assert all(s["usage"]["prompt_tokens"] > 0 for s in ours["steps"])

    patch = (out / "generated_seed-0.patch").read_text(encoding="utf-8")
    assert patch == traj["output_patch"]
    assert "-    return a - b\n+    return a + b\n" in patch
    assert "NOTES.txt" not in patch  # the user's uncommitted file is in the snapshot, not a change
    # the user's repository is untouched, and the patch applies to it
    assert fingerprint(repo) == before
    check = subprocess.run(
        ["git", "apply", "--check", str(out / "generated_seed-0.patch")],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr
    assert fingerprint(repo) == before


@pytest.mark.slow
def test_apply_writes_the_change(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    # a fix of another size: the review diff's stat cache can miss a same-size edit made
    # within the second its index was written (reported; not what this test is about)
    script = write_script(tmp_path / "script.jsonl", fixing_replies(fix="return a + b  # fixed"))
    done = frogdesk(
        "run", "Fix it.", "--repo", str(repo), "--script", str(script), "--apply", "--quiet"
    )
    assert done.returncode == 0, done.stderr
    assert "applied 1 file at " in done.stderr
    assert (repo / "calc.py").read_text(
        encoding="utf-8"
    ) == "def add(a, b):\n    return a + b  # fixed\n"
    assert (repo / "NOTES.txt").read_text(encoding="utf-8") == "work in progress\n"
    assert git(repo, "status", "--porcelain").split() == ["M", "calc.py", "??", "NOTES.txt"]


def test_non_git_folder_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    script = write_script(tmp_path / "s.jsonl", ["done\n</think>\n\nok"])
    done = frogdesk("run", "x", "--repo", str(tmp_path / "plain"), "--script", str(script))
    assert done.returncode == 2
    assert "is not inside a git repository" in done.stderr and "Traceback" not in done.stderr


def test_missing_script_is_a_clear_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    done = frogdesk("run", "x", "--repo", str(repo), "--script", str(tmp_path / "nope.jsonl"))
    assert (
        done.returncode == 2 and "does not exist" in done.stderr and "Traceback" not in done.stderr
    )
    listed = json.loads(frogdesk("sessions", "list", "--json").stdout)
    assert listed == []  # a session whose backend never started leaves no row


def test_budget_exit_is_reported(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    script = write_script(tmp_path / "s.jsonl", fixing_replies())
    out = tmp_path / "out"
    done = frogdesk(
        "run",
        "x",
        "--repo",
        str(repo),
        "--script",
        str(script),
        "--max-steps",
        "2",
        "--output",
        str(out),
        "--json",
    )
    assert done.returncode == 1
    assert json.loads(done.stdout)["exit_reason"] == "max_turns"
    traj = json.loads((out / "trajectory_seed-0.json").read_text(encoding="utf-8"))
    assert traj["partial"] is True and traj["n_steps"] == 2 and traj["output_patch"] == ""
