"""`frogdesk run --attempts N` end to end on the script backend: JSON shape, ranking, choosing."""

from __future__ import annotations

import json
from pathlib import Path

from tests.attempts.scripts import CHECK, three_scripts
from tests.support.scripted import fingerprint, frogdesk, make_repo


def _scripts_args(scripts: list[Path]) -> list[str]:
    return [arg for path in scripts for arg in ("--script", str(path))]


def test_only_the_passing_attempt_is_chosen(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    scripts = three_scripts(tmp_path)
    result = frogdesk(
        "run",
        "fix add",
        "--repo",
        str(repo),
        "--attempts",
        "3",
        "--check",
        CHECK,
        "--json",
        *_scripts_args(scripts),
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"attempts", "chosen"}
    assert len(data["attempts"]) == 3
    for entry in data["attempts"]:
        assert set(entry) == {"session_id", "exit_reason", "files_changed", "check"}
        assert set(entry["check"]) == {"command", "exit_code", "summary", "seconds"}
        assert entry["check"]["command"] == CHECK
        assert entry["exit_reason"] == "agent"
    best, *rest = data["attempts"]
    assert best["check"]["exit_code"] == 0 and best["files_changed"] == ["calc.py"]
    assert best["check"]["summary"] == "OK"
    assert all(entry["check"]["exit_code"] != 0 for entry in rest)
    assert data["chosen"] == best["session_id"]
    ids = [e["session_id"] for e in data["attempts"]]
    assert len(set(ids)) == 3
    # each attempt is a session of its own, with its own worktree holding its own change
    listed = json.loads(frogdesk("sessions", "list", "--json").stdout)
    worktrees = {s["id"]: Path(s["worktree"]) for s in listed}
    texts = [(worktrees[i] / "calc.py").read_text() for i in ids]
    assert "a + b" in texts[0] and "a * b" in texts[1] and "a - b" in texts[2]
    assert fingerprint(repo) == before


def test_no_passing_attempt_means_no_choice_and_exit_1(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    scripts = three_scripts(tmp_path)
    result = frogdesk(
        "run",
        "fix add",
        "--repo",
        str(repo),
        "--attempts",
        "2",
        "--check",
        CHECK,
        "--json",
        *_scripts_args([scripts[0], scripts[2]]),
    )
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["chosen"] is None
    assert [e["check"]["exit_code"] != 0 for e in data["attempts"]] == [True, True]


def test_without_a_check_the_attempts_are_compared_not_ranked(
    tmp_path: Path, sandboxed_bash: str
) -> None:
    repo = tmp_path / "plain"
    make_repo(tmp_path)  # test_calc.py would be detected; this repo has no tests at all
    repo = tmp_path / "repo"
    (repo / "test_calc.py").unlink()
    from tests.support.scripted import git

    git(repo, "commit", "-qam", "no tests")
    scripts = three_scripts(tmp_path)
    text = frogdesk(
        "run", "fix add", "--repo", str(repo), "--attempts", "3", *_scripts_args(scripts)
    )
    assert text.returncode == 0, text.stderr
    assert "not ranked" in text.stdout
    assert "#1" not in text.stdout and "attempt 1" in text.stdout
    data = json.loads(
        frogdesk(
            "run",
            "fix add",
            "--repo",
            str(repo),
            "--attempts",
            "3",
            "--json",
            *_scripts_args(scripts),
        ).stdout
    )
    assert data["chosen"] is None
    assert all(
        e["check"] == dict.fromkeys(("command", "exit_code", "summary", "seconds"))
        for e in data["attempts"]
    )
    # start order kept: wrong, right, idle
    assert [e["files_changed"] for e in data["attempts"]] == [["calc.py"], ["calc.py"], []]


def test_a_detected_check_is_named(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    scripts = three_scripts(tmp_path)
    result = frogdesk(
        "run", "fix add", "--repo", str(repo), "--attempts", "3", *_scripts_args(scripts)
    )
    assert "check: python3 -m pytest" in result.stdout
    assert "detected: test_calc.py found" in result.stdout


def test_bad_attempt_options_are_one_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    scripts = three_scripts(tmp_path)
    for args, fragment in (
        (["--attempts", "0"], "between 1 and"),
        (["--attempts", "3", *_scripts_args(scripts[:2])], "once per attempt"),
        (["--attempts", "2", "--check-timeout", "0", *_scripts_args(scripts[:1])], "positive"),
    ):
        result = frogdesk("run", "t", "--repo", str(repo), *args)
        assert result.returncode == 2, result.stderr
        assert fragment in result.stderr and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
