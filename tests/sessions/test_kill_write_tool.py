"""SIGKILL `frogdesk run` while the model's Edit replaces a file of the session worktree, then
resume, review and apply the session: the edit's temp file never shows among the changes
and never reaches the user's repository; the next write sweeps it away."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.killpoint import killed_at, let_time_pass, run_frogdesk, trace
from tests.support.scripted import call, git, make_repo, write_script

EDIT_TEMP = re.compile(r"\.calc\.py\.[0-9]+-[0-9a-f]{8}\.tmp")


def _script(tmp_path: Path) -> Path:
    """Edit calc.py, edit it again (a later write in the same session), answer."""
    edit = "Fix it.\n</think>\n\n" + call(
        "Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"
    )
    note = "Note it.\n</think>\n\n" + call(
        "Edit", file_path="calc.py", old_string="def add", new_string="# fixed\ndef add"
    )
    return write_script(tmp_path / "script.jsonl", [edit, note, "Done.\n</think>\n\nFixed."])


def _files(repo: Path) -> set[str]:
    return {p.relative_to(repo).as_posix() for p in repo.rglob("*") if ".git" not in p.parts}


@pytest.mark.slow
def test_an_edit_killed_midway_never_reaches_review_or_the_repository(tmp_path: Path) -> None:
    script = _script(tmp_path)
    ops = trace(["run", "fix", "--repo", str(make_repo(tmp_path)), "--script", str(script)],
                tmp_path / "trace-home")  # fmt: skip
    points = [op for op in ops if EDIT_TEMP.search(op)][:3]
    assert len(points) == 3  # the first edit's temp file: made, given its mode, renamed
    for n, expected in enumerate(points, start=1):
        (tmp_path / f"case-{n}").mkdir()
        home, repo = tmp_path / f"home-{n}", make_repo(tmp_path / f"case-{n}")
        before = _files(repo)
        args = ["run", "fix", "--repo", str(repo), "--script", str(script)]
        op = killed_at(args, home, match=EDIT_TEMP.pattern, nth=n)
        assert op.split(": ", 1)[1].split(" ", 1)[0] == expected.split(" ", 1)[0], (op, expected)
        [row] = json.loads(run_frogdesk(["sessions", "list", "--json"], home).stdout)
        let_time_pass(home, 120)  # the user comes back later: the temp file's writer is long gone

        resumed = run_frogdesk(["sessions", "resume", row["id"]], home)
        assert resumed.returncode == 0, (op, resumed.stderr)
        reviewed = json.loads(run_frogdesk(["review", row["id"], "--json"], home).stdout)
        assert [f["path"] for f in reviewed["files"]] == ["calc.py"], op
        applied = run_frogdesk(["apply", row["id"], "--all"], home, cwd=repo)
        assert applied.returncode == 0, (op, applied.stderr)
        assert _files(repo) == before, op
        assert git(repo, "status", "--porcelain").splitlines() == [" M calc.py", "?? NOTES.txt"]
        assert (repo / "calc.py").read_text(encoding="utf-8").startswith("# fixed\ndef add")
        # the later edit swept the temp file of the killed one, its writer long gone
        assert [p for p in (home / "data").rglob("*") if p.name.endswith(".tmp")] == [], op
