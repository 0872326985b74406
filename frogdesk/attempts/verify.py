"""The verifier: find the repository's check command and run it in an attempt's sandbox."""

from __future__ import annotations

import configparser
import json
import re
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from frogdesk.attempts.spec import DEFAULT_CHECK_TIMEOUT
from frogdesk.inert import inert_line
from frogdesk.sandbox.shells.protocol import Shell

PYTEST = "python3 -m pytest -q -p no:cacheprovider"
"""The detected Python check; no cache folder, so the check adds nothing to the diff."""

QUIET_ENV = "export PYTHONDONTWRITEBYTECODE=1; "
"""Prefix of every check: Python leaves no bytecode files in the worktree under review."""


@dataclass(frozen=True)
class DetectedCheck:
    """A check command found in a repository, and the file that gave it away."""

    command: str
    reason: str


@dataclass(frozen=True)
class CheckResult:
    """One run of the check in one attempt's worktree."""

    command: str
    exit_code: int
    summary: str
    """The last non-empty line of the output, made inert for display."""
    seconds: float
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        """True when the check exited 0 within its time."""
        return self.exit_code == 0 and not self.timed_out

    def to_json(self) -> dict[str, object]:
        """The `check` object of `frogdesk run --attempts N --json`."""
        return {
            "command": self.command,
            "exit_code": self.exit_code,
            "summary": self.summary,
            "seconds": round(self.seconds, 3),
        }


def _pytest_reason(repo: Path) -> str:
    pyproject = repo / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            data = {}
        tool = data.get("tool")
        if isinstance(tool, dict) and "pytest" in tool:
            return "pyproject.toml has [tool.pytest]"
    for name in ("pytest.ini", "conftest.py"):
        if (repo / name).is_file():
            return f"{name} found"
    for name, section in (("setup.cfg", "tool:pytest"), ("tox.ini", "pytest")):
        parser = configparser.ConfigParser()
        try:
            parser.read(repo / name, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_section(section):
            return f"{name} has [{section}]"
    for pattern in ("test_*.py", "tests/test_*.py", "tests/**/test_*.py"):
        found = next(iter(repo.glob(pattern)), None)
        if found is not None:
            return f"{found.relative_to(repo).as_posix()} found"
    return ""


def _npm_reason(repo: Path) -> str:
    try:
        data = json.loads((repo / "package.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return ""
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if isinstance(scripts, dict) and isinstance(scripts.get("test"), str):
        return "package.json has a test script"
    return ""


def _make_reason(repo: Path) -> str:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        try:
            text = (repo / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if re.search(r"^test\s*:", text, re.MULTILINE):
            return f"{name} has a test target"
    return ""


def detect_check(repo: Path) -> DetectedCheck | None:
    """The check command the repository suggests, or None when nothing was recognised.

    Looked for in this order: pytest, `npm test`, `cargo test`, `go test ./...`, `make test`.
    """
    reason = _pytest_reason(repo)
    if reason:
        return DetectedCheck(PYTEST, reason)
    reason = _npm_reason(repo)
    if reason:
        return DetectedCheck("npm test", reason)
    if (repo / "Cargo.toml").is_file():
        return DetectedCheck("cargo test", "Cargo.toml found")
    if (repo / "go.mod").is_file():
        return DetectedCheck("go test ./...", "go.mod found")
    reason = _make_reason(repo)
    if reason:
        return DetectedCheck("make test", reason)
    return None


def summary_line(stdout: str, stderr: str) -> str:
    """The last non-empty output line (stdout first, else stderr), inert and at most 200 chars."""
    for stream in (stdout, stderr):
        lines = [line.strip() for line in stream.splitlines() if line.strip()]
        if lines:
            return inert_line(lines[-1])[:200]
    return ""


def run_check(
    shell: Shell, worktree: Path, command: str, timeout: float = DEFAULT_CHECK_TIMEOUT
) -> CheckResult:
    """Run `command` in `worktree` through the attempt's own sandboxed shell, with a timeout."""
    started = time.monotonic()
    result = shell.run(QUIET_ENV + command, worktree, timeout)
    seconds = time.monotonic() - started
    if result.timed_out:
        return CheckResult(command, -1, f"timed out after {timeout:g}s", seconds, timed_out=True)
    return CheckResult(
        command, result.exit_code, summary_line(result.stdout, result.stderr), seconds
    )
