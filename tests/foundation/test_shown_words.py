"""How a run ended is shown in words by every face (one table, leaf.exit_words); the JSON and
the records keep the identifiers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

from frogdesk.attempts.record import AttemptResult, AttemptsOutcome
from frogdesk.attempts.service import plan_check
from frogdesk.attempts.spec import AttemptsSpec
from frogdesk.commands.attempts import describe
from frogdesk.core.status import check_source_words, ending_words
from frogdesk.leaf.events import ExitReason
from frogdesk.leaf.exit_words import EXIT_WORDS, exit_words
from tests.support.scripted import call, frogdesk, make_repo, write_script


def test_every_exit_reason_has_words_without_identifiers() -> None:
    reasons = set(get_args(ExitReason))
    assert reasons <= set(EXIT_WORDS)
    for reason in set(EXIT_WORDS):
        words = exit_words(reason)
        assert "_" not in words and reason not in words.split(), (reason, words)
        assert ending_words(reason) == words  # the faces read the one table
    assert exit_words("agent") == "finished: final answer"
    assert exit_words("llm_query_error") == "stopped: model error"
    assert "_" not in exit_words("some_new_reason") and exit_words("") == "ended"


def test_run_says_how_it_ended_in_words_and_json_keeps_the_identifier(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    reading = "Look first.\n</think>\n\n" + call("Read", file_path="calc.py")
    script = write_script(tmp_path / "s.jsonl", [reading, reading, reading])
    args = ("run", "x", "--repo", str(repo), "--script", str(script), "--max-steps", "1")
    done = frogdesk(*args)
    assert done.returncode == 1
    assert "stopped: step budget used up after 1 step" in done.stderr, done.stderr
    assert "max_turns" not in done.stderr
    done = frogdesk(*args, "--json")
    assert json.loads(done.stdout)["exit_reason"] == "max_turns"


def test_a_detected_check_passed_on_is_still_called_detected(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    detected_command, detected = plan_check(AttemptsSpec("t", repo, 2))
    assert detected.startswith("detected")
    # the TUI proposes the detected command and passes it on as the check to run
    assert plan_check(AttemptsSpec("t", repo, 2, check=detected_command)) == (
        detected_command,
        detected,
    )
    assert plan_check(AttemptsSpec("t", repo, 2, check="make check")) == ("make check", "given")
    assert check_source_words("given") == "given by you"


def test_attempts_text_shows_words() -> None:
    attempt = AttemptResult(
        index=0, seed=1, session_id="s1", exit_reason="max_context_len", n_steps=3
    )
    outcome = AttemptsOutcome((attempt,), check_command="pytest -q", check_source="given")
    text = "\n".join(describe(outcome))
    assert "stopped: context full" in text and "max_context_len" not in text
    assert "(given by you)" in text
