"""A file name that is not UTF-8 travels through a whole session: shown, recorded, resumed."""

from __future__ import annotations

import json
import os
from pathlib import Path

from frogdesk.paths import AppPaths
from tests.support.scripted import call, frogdesk, git, write_script


def test_a_name_that_is_not_utf8_is_recorded_and_the_session_resumes(tmp_path: Path) -> None:
    """Glob shows the name (a lone surrogate in Python); the transcript, the record and the
    trajectory keep it as an escape. Before, writing the step raised UnicodeEncodeError, the
    run ended with a traceback and every resume failed the same way. The control: the plain
    name beside it is listed too."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "plain.py").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    (repo / os.fsdecode(b"bad\xff.py")).write_text("y = 2\n", encoding="utf-8")
    script = write_script(
        tmp_path / "s.jsonl",
        [
            "Look.\n</think>\n\n" + call("Glob", pattern="*.py"),
            "Done.\n</think>\n\nListed.",
            "Again.\n</think>\n\nStill listed.",
        ],
    )
    done = frogdesk("run", "list", "--repo", str(repo), "--script", str(script), "--json")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    [session] = json.loads(frogdesk("sessions", "list", "--json").stdout)
    transcript = AppPaths.default().sessions_dir / session["id"] / "transcript.jsonl"
    text = transcript.read_text(encoding="ascii")  # escapes only: any name round-trips
    assert "bad\\udcff.py" in text and "plain.py" in text
    again = frogdesk("sessions", "resume", session["id"], "-m", "more", "--json")
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
