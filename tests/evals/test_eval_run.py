"""`frogdesk eval` end to end with the script backend: verdicts, restored tests, the JSON."""

from __future__ import annotations

from pathlib import Path

from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from tests.evals.helpers import (
    FAKE_TEST,
    FIX,
    NOTHING,
    TEST_CALC,
    bash,
    by_task,
    eval_json,
    frogdesk_eval,
    scripts,
    task_folder,
    write,
)

CHEAT = [write("test_calc.py", FAKE_TEST), "Done.\n</think>\n\nThe tests pass now."]
"""A model that makes the test pass by rewriting it, leaving the bug."""


def test_a_scripted_fix_is_solved_and_no_change_is_not(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    task_folder(suite, "fixed")
    task_folder(suite, "untouched")
    replies = scripts(tmp_path / "scripts", {"fixed": FIX, "untouched": NOTHING})
    data = eval_json(str(suite), "--script", str(replies))
    tasks = by_task(data)
    assert tasks["fixed"]["solved"] is True
    assert tasks["untouched"]["solved"] is False
    assert (data["solved"], data["total"]) == (1, 2)
    attempt = tasks["fixed"]["attempts"][0]
    for key in (
        "solved", "steps", "exit_reason", "prefill_tokens", "decoded_tokens", "wall_seconds",
        "tokens_per_second", "recoveries", "patch", "tool_calls", "check_exit",
    ):  # fmt: skip
        assert key in attempt, key
    assert attempt["exit_reason"] == "agent" and attempt["steps"] == 2
    assert "+    return a + b" in attempt["patch"] and "test_calc" not in attempt["patch"]
    assert tasks["untouched"]["attempts"][0]["patch"] == ""
    for key in ("avg_at_k", "pass_at_k", "model_sha256", "backend", "settings", "frogdesk_version"):
        assert key in data, key
    assert data["backend"] == "script" and data["pass_at_k"] == 0.5


def test_editing_the_test_does_not_pass_and_would_without_the_restore(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    task_folder(suite, "guarded")
    # positive control: the same task with nothing put back; the same rewrite passes its check
    task_folder(suite, "unguarded", restore=[])
    replies = scripts(tmp_path / "scripts", {"guarded": CHEAT, "unguarded": CHEAT})
    tasks = by_task(eval_json(str(suite), "--script", str(replies)))
    assert tasks["unguarded"]["solved"] is True
    assert tasks["guarded"]["solved"] is False
    assert tasks["guarded"]["attempts"][0]["check_exit"] != 0
    assert "test_calc.py" in tasks["guarded"]["attempts"][0]["patch"]  # the edit is recorded


def test_a_test_replaced_by_a_link_is_put_back_too(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    task_folder(suite, "linked")
    task_folder(suite, "linked-control", restore=[])  # positive control: nothing put back
    link = [
        write("elsewhere/test_calc.py", FAKE_TEST),
        bash("rm -f test_calc.py && ln -s elsewhere/test_calc.py test_calc.py"),
        "Done.\n</think>\n\nDone.",
    ]
    replies = scripts(tmp_path / "s", {"linked": link, "linked-control": link})
    tasks = by_task(eval_json(str(suite), "--script", str(replies)))
    assert tasks["linked-control"]["solved"] is True
    assert tasks["linked"]["solved"] is False


def test_hidden_files_are_unseen_and_checked(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    task_folder(
        suite,
        "hidden",
        files={"calc.py": "def add(a, b):\n    return a - b\n"},
        restore=[],
        hidden={"test_calc.py": TEST_CALC},
    )
    look = [bash("ls test_calc.py"), *FIX]
    data = eval_json(str(suite), "--script", str(scripts(tmp_path / "s", {"hidden": look})))
    assert by_task(data)["hidden"]["solved"] is True
    attempt = by_task(data)["hidden"]["attempts"][0]
    assert "test_calc.py" not in attempt["patch"]
    # the unseen test was not in the model's worktree: its `ls` found nothing there
    store = SessionStore(AppPaths.default().sessions_dir)
    steps = store.read_transcript(attempt["session_id"]).steps
    assert "No such file" in steps[0].observations[0].observation


def test_a_task_passing_untouched_is_broken_not_solved(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    task_folder(
        suite,
        "broken",
        files={"calc.py": "def add(a, b):\n    return a + b\n", "test_calc.py": TEST_CALC},
    )
    data = eval_json(str(suite), "--script", str(scripts(tmp_path / "s", {"broken": NOTHING})))
    task = by_task(data)["broken"]
    assert task["status"] == "broken" and task["solved"] is False
    assert data["total"] == 0 and data["broken"] == ["broken"]


def test_two_attempts_give_avg_and_pass_at_k(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    task_folder(suite, "half")
    folder = tmp_path / "s"
    scripts(folder, {"half.1": FIX, "half.2": NOTHING})
    data = eval_json(str(suite), "--script", str(folder), "--attempts", "2", "--no-precheck")
    task = by_task(data)["half"]
    assert [a["solved"] for a in task["attempts"]] == [True, False]
    assert task["solved"] is True
    assert data["pass_at_k"] == 1.0 and data["avg_at_k"] == 0.5


def test_bad_inputs_say_what_is_wrong(tmp_path: Path) -> None:
    missing = frogdesk_eval(str(tmp_path / "nowhere"), "--script", str(tmp_path))
    assert missing.returncode == 2 and "no suite" in missing.stderr
    assert "Traceback" not in missing.stderr
    suite = tmp_path / "suite"
    task_folder(suite, "good")
    task_folder(suite, "no-check", check=None)
    (suite / "no-repo").mkdir()
    (suite / "no-repo" / "task.toml").write_text('check = "true"\ntext = "x"\n', encoding="utf-8")
    (suite / "bad-toml").mkdir()
    (suite / "bad-toml" / "task.toml").write_text("check = [unclosed\n", encoding="utf-8")
    task_folder(suite, "hangs", check="sleep 600", extra="")
    (suite / "hangs" / "task.toml").write_text(
        'check = "sleep 600"\ntimeout = 2\n', encoding="utf-8"
    )
    replies = scripts(tmp_path / "s", {"good": FIX, "hangs": NOTHING})
    done = frogdesk_eval(str(suite), "--script", str(replies), "--json", "--no-precheck")
    assert "Traceback" not in done.stderr
    import json

    data = json.loads(done.stdout)
    tasks = by_task(data)
    assert tasks["good"]["solved"] is True
    assert "no check command" in tasks["no-check"]["note"]
    assert "no repo/ folder" in tasks["no-repo"]["note"]
    assert "task.toml cannot be read" in tasks["bad-toml"]["note"]
    for name in ("no-check", "no-repo", "bad-toml"):
        assert f"frogdesk eval: {name}: " in done.stderr
    hung = tasks["hangs"]["attempts"][0]
    assert hung["check_timed_out"] is True and "timed out after 2s" in hung["check_summary"]
