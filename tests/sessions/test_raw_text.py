"""The transcript keeps each step's reply exactly as generated, beside the parsed step."""

from __future__ import annotations

import json
from pathlib import Path

from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from tests.support.scripted import call, frogdesk, make_repo, write_script

REPLIES = [
    "  Look first.  \n</think>\n\n" + call("Read", file_path="calc.py") + "\n",
    "Thinking\n\nwith blank lines.\n</think>\n\n  Some content.  \n"
    + call("Read", file_path="test_calc.py"),
    "Done.\n</think>\n\nadd() subtracts; nothing changed.",
]


def test_each_step_keeps_its_raw_reply_across_a_resume(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    script = write_script(tmp_path / "s.jsonl", REPLIES)
    first = frogdesk("run", "Look.", "--repo", str(repo), "--script", str(script), "--json",
                     "--max-steps", "2")  # fmt: skip
    assert json.loads(first.stdout)["exit_reason"] == "max_turns", first.stderr
    store = SessionStore(AppPaths.default().sessions_dir)
    [record] = store.list()
    transcript = store.read_transcript(record.id)
    assert transcript.raw_texts == {0: REPLIES[0], 1: REPLIES[1]}
    # the parsed message is what the template trims; the raw text is what the model wrote
    assert transcript.steps[0].assistant.reasoning != REPLIES[0].split("</think>")[0]

    resumed = frogdesk("sessions", "resume", record.id, "--json", "--max-steps", "5")
    assert json.loads(resumed.stdout)["exit_reason"] == "agent", resumed.stderr
    assert store.read_transcript(record.id).raw_texts == dict(enumerate(REPLIES))
    lines = (store.session_dir(record.id) / "transcript.jsonl").read_text(encoding="utf-8")
    steps = [json.loads(x) for x in lines.splitlines() if '"kind":"step"' in x]
    assert [s["raw_text"] for s in steps] == REPLIES
