"""Send back to the model: declined hunks leave the worktree, the model reads the exact feedback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from frogdesk.review.decisions_store import load_decisions, save_decisions
from frogdesk.review.diff import compute_diff
from frogdesk.review.feedback import feedback_message
from frogdesk.sessions.errors import SessionBusyError, SessionClosedError, SessionNotFoundError
from frogdesk.sessions.record import SessionSpec
from frogdesk.sessions.service import SessionService
from tests.support.scripted import call, fingerprint, frogdesk, make_repo
from tests.support.sessionkit import recording_service, script_file

REPLIES = [
    "Fix add.\n</think>\n\n"
    + call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"),
    "Add a helper too.\n</think>\n\n"
    + call("Write", file_path="extra.py", content="def sub(a, b):\n    return a - b\n"),
    "Done.\n</think>\n\nFixed add() and added sub().",
    "Understood.\n</think>\n\nI keep only the fix to add().",
]


def _review(service: SessionService, session_id: str) -> tuple[str, str]:
    """Approve the calc.py hunk, reject the extra.py one; their ids."""
    record = service.store.get(session_id)
    diff = compute_diff(Path(record.worktree), record.base_commit)
    keep = diff.find_file("calc.py")
    drop = diff.find_file("extra.py")
    assert keep is not None and drop is not None
    folder = service.store.session_dir(session_id)
    decisions = load_decisions(folder)
    decisions.decide([h.id for h in keep.hunks], "approved")
    decisions.decide([h.id for h in drop.hunks], "rejected")
    save_decisions(folder, decisions)
    return keep.hunks[0].id, drop.hunks[0].id


def test_send_back_reverts_declined_hunks_and_the_model_reads_the_feedback(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    service, prompts = recording_service()
    script = script_file(tmp_path / "s.jsonl", REPLIES)
    active = service.start(SessionSpec("fix add", repo, backend="script", script=str(script)))
    first = service.run(active)
    active.close()
    assert first.result.exit_reason == "agent" and first.result.n_steps == 3
    sid = first.record.id
    kept_id, dropped_id = _review(service, sid)
    record = service.store.get(sid)
    decisions = load_decisions(service.store.session_dir(sid))
    decisions.comment = "No helpers, please."
    expected = feedback_message(compute_diff(Path(record.worktree), record.base_commit), decisions)

    sent, again = service.send_back(sid, "No helpers, please.")
    assert sent.message == expected
    assert "extra.py" in sent.message and "My comment: No helpers, please." in sent.message
    assert sent.reverted == ["extra.py"]
    worktree = Path(record.worktree)
    assert not (worktree / "extra.py").exists()
    assert "return a + b" in (worktree / "calc.py").read_text()
    n_prompts = len(prompts.seen)
    outcome = service.run(again)
    again.close()

    # the model's next turn ends with the exact feedback, right after its final answer
    seen = prompts.seen[n_prompts]
    assert seen[-1].role == "user" and seen[-1].content == expected
    assert seen[-2].role == "assistant" and "added sub()" in seen[-2].content
    assert outcome.result.exit_reason == "agent" and outcome.result.n_steps == 4
    assert outcome.files_changed == ["calc.py"]
    diff = compute_diff(worktree, record.base_commit)
    assert [c.path for c in diff.files] == ["calc.py"] and diff.hunk_ids() == [kept_id]
    left = load_decisions(service.store.session_dir(sid))
    assert left.decision(kept_id) == "approved" and left.decision(dropped_id) == "pending"
    assert left.comment == ""
    # the transcript on disk holds the feedback where the model read it
    conversation = service.store.read_transcript(sid).conversation()
    assert [m.content for m in conversation if m.role == "user"][-1] == expected
    assert conversation[-1].content == "I keep only the fix to add()."
    assert fingerprint(repo) == before  # the user's repository never changed


def test_send_back_refuses_unknown_running_and_discarded_sessions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    service, _ = recording_service()
    with pytest.raises(SessionNotFoundError):
        service.send_back("nope")
    script = script_file(tmp_path / "s.jsonl", REPLIES)
    active = service.start(SessionSpec("fix add", repo, backend="script", script=str(script)))
    active.close()
    record = service.store.get(active.record.id)
    record.status, record.pid = "running", os.getpid()
    service.store.update(record)
    with pytest.raises(SessionBusyError, match="running"):
        service.send_back(record.id)
    record.status, record.pid = "finished", 0
    service.store.update(record)
    service.discard(record.id)
    with pytest.raises(SessionClosedError, match="discarded"):
        service.send_back(record.id)
    assert service.store.read_transcript(record.id).followups == []


@pytest.mark.slow
def test_sessions_send_back_command(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    script = script_file(tmp_path / "s.jsonl", REPLIES)
    done = frogdesk("run", "fix add", "--repo", str(repo), "--script", str(script), "--json")
    assert done.returncode == 0, done.stderr
    sid = json.loads(done.stdout)["session_id"]
    service, _ = recording_service()
    _review(service, sid)
    back = frogdesk("sessions", "send-back", sid[:12], "--comment", "Only the fix.", "--json")
    assert back.returncode == 0, back.stderr
    summary = json.loads(back.stdout)
    assert summary["exit_reason"] == "agent" and summary["n_steps"] == 4
    assert summary["files_changed"] == ["calc.py"]
    assert "reverted in the worktree: extra.py" in back.stderr
    assert "My comment: Only the fix." in back.stderr
    lines = (service.store.session_dir(sid) / "transcript.jsonl").read_text().splitlines()
    followups = [json.loads(x) for x in lines if '"followup"' in x]
    assert len(followups) == 1 and followups[0]["before_step"] == 3
    assert followups[0]["message"]["content"].endswith("My comment: Only the fix.")
    # a finished, answered session cannot simply be resumed again, but can be sent back again
    again = frogdesk("sessions", "resume", sid)
    assert again.returncode == 2 and "final answer" in again.stderr
    missing = frogdesk("sessions", "send-back", "no-such-session")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
