"""The repository watcher during a run: the user's edits are recorded and flagged in the review."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogdesk.leaf.events import LoopEvent, ToolStarted
from frogdesk.review.show import USER_CHANGED_NOTE
from frogdesk.review.user_changes import load_user_changes, record_user_changes
from frogdesk.sandbox.levels import detect
from frogdesk.sessions.record import SessionSpec
from tests.support.scripted import call, frogdesk, make_repo
from tests.support.sessionkit import recording_service, script_file


@pytest.fixture
def sandboxed() -> None:
    level, reason = detect("auto")
    if level == "none":
        pytest.skip(f"headless Bash needs a sandbox here: {reason}")


def _replies(final: str) -> list[str]:
    return [
        "Fix it.\n</think>\n\n"
        + call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"),
        "Wait for the build.\n</think>\n\n" + call("Bash", command="sleep 1; echo built"),
        f"Done.\n</think>\n\n{final}",
    ]


class EditWhileBashRuns:
    """Edits the user's files when a Bash call starts, so the edit lands mid-run."""

    def __init__(self, edits: dict[Path, str]) -> None:
        self.edits = edits
        self.done = False

    def __call__(self, event: LoopEvent) -> None:
        if isinstance(event, ToolStarted) and event.call.name == "Bash" and not self.done:
            for path, text in self.edits.items():
                path.write_text(text, encoding="utf-8")
            self.done = True


@pytest.mark.slow
def test_edits_during_a_run_are_flagged_by_review_and_apply(
    tmp_path: Path, sandboxed: None
) -> None:
    repo = make_repo(tmp_path)
    service, _ = recording_service()
    script = script_file(tmp_path / "s.jsonl", _replies("Fixed.") + _replies("Again."))
    active = service.start(SessionSpec("fix", repo, backend="script", script=str(script)))
    # the user rewrites the line the session fixes, while its Bash step sleeps
    editor = EditWhileBashRuns({repo / "calc.py": "def add(a, b):\n    return b + a\n"})
    outcome = service.run(active, on_event=editor)
    active.close()
    assert editor.done and outcome.result.exit_reason == "agent"
    sid = outcome.record.id
    folder = service.store.session_dir(sid)
    assert load_user_changes(folder) == {"calc.py"}

    review = frogdesk("review", sid, "--json")
    assert review.returncode == 0, review.stderr
    files = {f["path"]: f for f in json.loads(review.stdout)["files"]}
    assert files["calc.py"]["user_changed"] is True
    text = frogdesk("review", sid)
    assert f"! {USER_CHANGED_NOTE}" in text.stdout

    applied = frogdesk("apply", sid, "--all")
    assert applied.returncode == 1
    assert "calc.py lines 1-2: you changed the same lines" in applied.stderr
    assert USER_CHANGED_NOTE in applied.stderr
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return b + a\n"

    # a second run (sent back) adds what the user changes then; the first run's stay
    editor = EditWhileBashRuns({repo / "NOTES.txt": "done soon\n"})
    _, again = service.send_back(sid, "Mind my edit.")
    outcome = service.run(again, on_event=editor)
    again.close()
    assert editor.done and outcome.result.exit_reason == "agent"
    assert load_user_changes(folder) == {"calc.py", "NOTES.txt"}


def test_a_session_nobody_touches_flags_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    service, _ = recording_service()
    script = script_file(
        tmp_path / "s.jsonl",
        ["Edit.\n</think>\n\n"
         + call("Write", file_path="new.py", content="x = 1\n"), "Done.\n</think>\n\nok"],
    )  # fmt: skip
    active = service.start(SessionSpec("add", repo, backend="script", script=str(script)))
    outcome = service.run(active)
    active.close()
    folder = service.store.session_dir(outcome.record.id)
    assert load_user_changes(folder) == set()
    review = json.loads(frogdesk("review", outcome.record.id, "--json").stdout)
    assert [(f["path"], f["user_changed"]) for f in review["files"]] == [("new.py", False)]


def test_the_record_merges_and_survives_garbage(tmp_path: Path) -> None:
    assert record_user_changes(tmp_path, ["a.py"]) == {"a.py"}
    assert record_user_changes(tmp_path, ["b/c.py", "a.py"]) == {"a.py", "b/c.py"}
    assert load_user_changes(tmp_path) == {"a.py", "b/c.py"}
    (tmp_path / "user_changes.json").write_text("{broken")
    assert load_user_changes(tmp_path) == set()
    assert record_user_changes(tmp_path, ["d.py"]) == {"d.py"}
    assert load_user_changes(tmp_path / "missing") == set()
