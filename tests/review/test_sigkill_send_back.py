"""`kill -9` a real `frogdesk sessions send-back` before each of its file-changing operations.

After each kill the worktree holds no stray file (a temporary file left there would show up
in the review as a change of the model's), and the next send-back tells the model exactly
what was declined, even where the killed one had already reverted it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.paths import AppPaths
from frogdesk.review.decisions_store import load_decisions, save_decisions
from frogdesk.review.diff import compute_diff
from frogdesk.review.feedback import feedback_message, reset_to_reviewed
from frogdesk.sessions.store import SessionStore
from tests.support.killpoint import run_frogdesk
from tests.support.review_helpers import MakeSession
from tests.support.scripted import call, git, write_script

REPLIES = [
    "Fix add.\n</think>\n\n"
    + call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"),
    "A helper too.\n</think>\n\n"
    + call("Write", file_path="extra.py", content="def sub(a, b):\n    return a - b\n"),
    "Done.\n</think>\n\nFixed add() and added sub().",
    "Understood.\n</think>\n\nI leave both as they were.",
]
BASE_CALC = b"def add(a, b):\n    return a - b\n"


def _declined_session(root: Path) -> tuple[str, Path, str]:
    """A finished session whose two changes (calc.py edited, extra.py added) the user
    declined; its id, its worktree and the feedback an uninterrupted send-back gives."""
    repo = root / "repo"
    repo.mkdir()
    (repo / "calc.py").write_bytes(BASE_CALC)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    script = write_script(root / "script.jsonl", REPLIES)
    done = run_frogdesk(["run", "fix add", "--repo", str(repo), "--script", str(script), "--json"])
    assert done.returncode == 0, done.stderr
    sid = str(json.loads(done.stdout)["session_id"])
    store = SessionStore(AppPaths.default().sessions_dir)
    record = store.get(sid)
    worktree = Path(record.worktree)
    diff = compute_diff(worktree, record.base_commit)
    assert sorted(c.path for c in diff.files) == ["calc.py", "extra.py"]
    decisions = load_decisions(store.session_dir(sid))
    decisions.decide_all(diff, "rejected")
    save_decisions(store.session_dir(sid), decisions)
    return sid, worktree, feedback_message(diff, decisions)


def _reset(work: Path, template: Path) -> None:
    shutil.rmtree(work)
    shutil.copytree(template, work, symlinks=True)


@pytest.mark.slow
def test_send_back_killed_anywhere_leaves_no_stray_file_and_the_model_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work, template = tmp_path / "work", tmp_path / "template"
    work.mkdir()
    monkeypatch.setenv("FROGDESK_HOME", str(work / "home"))  # the whole state in one folder
    sid, worktree, expected = _declined_session(work)
    assert "extra.py" in expected and "calc.py" in expected and "declined these" in expected
    shutil.copytree(work, template, symlinks=True)
    store = SessionStore(AppPaths.default().sessions_dir)
    base = store.get(sid).base_commit
    send_back = ["sessions", "send-back", sid, "--quiet"]
    beside = sorted(p.name for p in worktree.parent.iterdir())  # its record, its private folder

    def check() -> None:
        stray = sorted(p.name for p in worktree.iterdir()) + sorted(
            c.path for c in compute_diff(worktree, base).files
        )
        assert set(stray) <= {".git", "calc.py", "extra.py"}, f"stray in the worktree: {stray}"
        told = [f.message.content for f in store.read_transcript(sid).followups]
        if not told:  # killed before the model was told: the next send-back must tell it
            capsys.readouterr()
            assert main(send_back) == 0, capsys.readouterr().err
            told = [f.message.content for f in store.read_transcript(sid).followups]
        assert told and told[0] == expected, f"the model was told {told}"
        assert compute_diff(worktree, base).files == ()
        assert (worktree / "calc.py").read_bytes() == BASE_CALC
        assert sorted(p.name for p in worktree.parent.iterdir()) == beside

    failures: list[str] = []
    n = 1
    while True:
        _reset(work, template)
        run = run_frogdesk(send_back, kill_at=n)
        if not run.killed:
            assert run.returncode == 0, run.stderr
            break
        try:
            check()
        except AssertionError as exc:
            failures.append(f"killed before {run.killed_before}: {exc}")
        n += 1
    assert not failures, "\n".join(failures)
    assert n > 20


def test_the_feedback_names_what_a_cut_short_send_back_already_reverted(
    user_repo: Path, make_session: MakeSession, tmp_path: Path
) -> None:
    """The decisions note what is declined before the worktree changes: reloaded after the
    revert (as the next send-back does), they still give the model the same message."""
    wt = make_session(user_repo)
    (wt.path / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    (wt.path / "new.txt").write_bytes(b"new\n")
    folder = tmp_path / "session"
    decisions = load_decisions(folder)
    diff = compute_diff(wt.path, wt.base_commit)
    decisions.decide_file(diff, "b.txt", "rejected")
    decisions.comment = "keep beta lowercase"
    save_decisions(folder, decisions)
    decisions = load_decisions(folder)
    expected = feedback_message(diff, decisions)
    assert "- b.txt: @@" in expected and "new.txt" not in expected

    beside = sorted(p.name for p in wt.path.parent.iterdir())
    assert reset_to_reviewed(wt.path, diff, decisions) == ["b.txt"]
    again = compute_diff(wt.path, wt.base_commit)
    assert [c.path for c in again.files] == ["new.txt"]
    assert feedback_message(again, load_decisions(folder)) == expected
    assert sorted(p.name for p in wt.path.parent.iterdir()) == beside  # no temp folder left
