"""A small real repository with a failing test, and raw model replies that fix it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def make_repo(root: Path) -> Path:
    """A committed repository whose unittest fails (add() subtracts), plus an uncommitted note."""
    repo = root / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (repo / "test_calc.py").write_text(
        "import unittest\n\nfrom calc import add\n\n\n"
        "class AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
        encoding="utf-8",
    )
    (repo / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    (repo / "NOTES.txt").write_text("work in progress\n", encoding="utf-8")
    return repo


def fingerprint(repo: Path) -> dict[str, str]:
    """Hashes of every working-tree file plus the index, HEAD and refs: what must never change."""
    out: dict[str, str] = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if path.is_file() and (
            not rel.startswith(".git/")
            or rel in (".git/index", ".git/HEAD")
            or rel.startswith(".git/refs/")
        ):
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    out["status"] = git(repo, "status", "--porcelain")
    return out


def call(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


TEST_COMMAND = "python3 -B -m unittest -q test_calc 2>&1 | tail -1; exit ${PIPESTATUS[0]}"


def fixing_replies(slow_step: bool = False, fix: str = "return a + b") -> list[str]:
    """Raw replies: read, run the tests (fail), edit, run the tests (pass), answer."""
    tests = TEST_COMMAND
    if slow_step:
        # the first run of this step hangs (the crash test kills it); a re-run goes through
        tests = (
            f'if [ ! -e "$HOME/slept" ]; then touch "$HOME/slept"; sleep 300; fi; {TEST_COMMAND}'
        )
    return [
        "I should look at the code.\n</think>\n\n" + call("Read", file_path="calc.py"),
        "Run the tests first.\n</think>\n\n" + call("Bash", command=tests, description="run tests"),
        "add subtracts.\n</think>\n\n"
        + call("Edit", file_path="calc.py", old_string="return a - b", new_string=fix),
        "Check again.\n</think>\n\n" + call("Bash", command=TEST_COMMAND),
        "The tests pass now.\n</think>\n\nFixed add() in calc.py: it subtracted instead of adding.",
    ]


def write_script(path: Path, replies: list[str]) -> Path:
    path.write_text("".join(json.dumps({"text": r}) + "\n" for r in replies), encoding="utf-8")
    return path


def frogdesk(
    *args: str, cwd: Path | None = None, stdin: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the real `frogdesk` command in a subprocess (FROGDESK_HOME comes from the test's env).

    A crash in native code (SIGSEGV, SIGABRT) prints every thread's Python stack on stderr,
    which a failing test shows."""
    return subprocess.run(
        [sys.executable, "-X", "faulthandler", "-m", "frogdesk", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
