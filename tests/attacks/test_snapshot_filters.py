"""A `.gitattributes` the model writes never runs a filter of the user's config outside the sandbox.

The user's repository defines `filter.demo.clean` (as `git lfs install` defines
`filter.lfs.*`); the model writes `* filter=demo`. The review's snapshot used to run
`git add -A` over the worktree, which read that attribute and ran the command on the host.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.attacks.harness import bash, frogdesk, run_attack
from tests.support.e2e import changed_paths, git, make_user_repo, repo_state


def _define_filter(repo: Path, marker: Path) -> None:
    git(repo, "config", "filter.demo.clean", f"sh -c 'touch {marker}; cat'")
    git(repo, "config", "filter.demo.smudge", "cat")


def test_plain_git_add_runs_the_filter(tmp_path: Path, outside: Path) -> None:
    """Positive control: the same attribute and config make plain `git add` run the command."""
    marker = outside / "filter-ran-control"
    root = tmp_path / "ctl"
    root.mkdir()
    repo = make_user_repo(root)
    _define_filter(repo, marker)
    (repo / ".gitattributes").write_text("* filter=demo\n", encoding="utf-8")
    (repo / "big.txt").write_text("changed\n", encoding="utf-8")
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "control-index")}
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True, capture_output=True)
    assert marker.exists()


def test_model_written_attributes_run_no_filter(level: str, tmp_path: Path, outside: Path) -> None:
    marker = outside / "filter-ran"
    repo = make_user_repo(tmp_path)
    _define_filter(repo, marker)
    before = repo_state(repo)
    command = (
        "echo '* filter=demo' > .gitattributes; mkdir -p sub; "
        "echo '*.txt filter=demo' > sub/.gitattributes; echo agent > sub/new.txt; "
        "echo 'changed by the agent' >> big.txt; echo PLANTED=$?"
    )
    run = run_attack(repo, [bash(command)], tmp_path, level)
    assert "PLANTED=0" in run.observations[0], run.observations
    listed = run.summary.get("files_changed", [])
    assert isinstance(listed, list), run.summary
    assert {".gitattributes", "sub/.gitattributes", "sub/new.txt", "big.txt"} <= set(listed)
    review = frogdesk("review", run.session_id)
    assert review.returncode == 0, review.stderr
    assert "changed by the agent" in review.stdout or "big.txt" in review.stdout
    assert not marker.exists()
    assert changed_paths(before, repo_state(repo)) == set()
