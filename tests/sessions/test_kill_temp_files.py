"""SIGKILL FrogDesk between writing a temp file and renaming it over a session file (its
record, the review's decisions, an apply's journal and record): a later command removes the
temp file once its writer is surely gone, and never while it may still be at work."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.support.killpoint import killed_at, let_time_pass, run_frogdesk, trace
from tests.support.scripted import call, make_repo, write_script

DURABLE_TEMP = r"\.[^/]+\.[0-9]+-[0-9a-f]{8}\.tmp"


def _temps(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if re.fullmatch(DURABLE_TEMP, p.name)]


def _script(tmp_path: Path) -> Path:
    edit = "Fix it.\n</think>\n\n" + call(
        "Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"
    )
    return write_script(tmp_path / "script.jsonl", [edit, "Done.\n</think>\n\nFixed."])


@pytest.mark.slow
def test_a_record_temp_file_a_killed_run_left_is_swept_once_its_writer_is_gone(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    home = tmp_path / "home"
    args = ["run", "fix", "--repo", str(repo), "--script", str(_script(tmp_path))]
    # a record update of the running session, after it was made
    op = killed_at(args, home, match=rf"os\.rename .*/sessions/[0-9][^/]*/{DURABLE_TEMP} ")
    [row] = json.loads(run_frogdesk(["sessions", "list", "--json"], home).stdout)
    folder = home / "data" / "sessions" / row["id"]
    [left] = _temps(folder)
    assert left.name.startswith(".session.json."), op

    assert run_frogdesk(["sessions", "list"], home).returncode == 0
    assert _temps(folder) == [left]  # its writer could still be at work: kept
    let_time_pass(home, 120)
    assert run_frogdesk(["sessions", "list"], home).returncode == 0
    assert _temps(folder) == []
    resumed = run_frogdesk(["sessions", "resume", row["id"], "--json"], home)
    assert json.loads(resumed.stdout)["files_changed"] == ["calc.py"], resumed.stderr


@pytest.mark.slow
def test_temp_files_a_killed_apply_left_are_swept_by_the_next_command(tmp_path: Path) -> None:
    work, template = tmp_path / "work", tmp_path / "template"
    work.mkdir()
    repo, home = make_repo(work), work / "home"
    done = run_frogdesk(["run", "fix", "--repo", str(repo), "--script", str(_script(work))], home)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(run_frogdesk(["sessions", "list", "--json"], home).stdout)
    folder = home / "data" / "sessions" / row["id"]
    shutil.copytree(work, template, symlinks=True)
    apply = ["apply", row["id"], "--all", "--commit", "fix add"]
    ops = trace(apply, home, cwd=repo)
    # Each point by the file it renames over: a number would shift with the review's blob
    # cache, written only once the files have settled (two seconds) and so not every run.
    renamed = re.compile(rf"os\.rename \S*/(?P<temp>{DURABLE_TEMP}) \S*/(?P<name>[^/ ]+)$")
    names = [m["name"] for m in map(renamed.search, ops) if m]
    assert {"decisions.json", "transaction.json", "record.json"} <= set(names), names
    for k, name in enumerate(names):
        shutil.rmtree(work)
        shutil.copytree(template, work, symlinks=True)  # same paths: git's records still hold
        point = (
            rf"os\.rename \S*/\.{re.escape(name)}\.[0-9]+-[0-9a-f]{{8}}\.tmp \S*/{re.escape(name)}$"
        )
        op = killed_at(apply, home, cwd=repo, match=point, nth=names[:k].count(name) + 1)
        assert _temps(folder), op
        let_time_pass(home, 120)
        run_frogdesk(["review", row["id"]], home, cwd=repo)
        assert _temps(folder) == [], op
