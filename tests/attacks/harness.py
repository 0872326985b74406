"""Running an attacker's replies through `frogdesk run` / `sessions resume`, and what to look at after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.support.e2e import call, reply
from tests.support.scripted import write_script

__all__ = ["Outcome", "bash", "call", "frogdesk", "reply", "resume", "run_attack"]


@dataclass(frozen=True)
class Outcome:
    """What one CLI run did: its process, JSON summary and every observation the model saw."""

    done: subprocess.CompletedProcess[str]
    summary: dict[str, object]
    observations: list[str]

    @property
    def session_id(self) -> str:
        """The session the run made or continued."""
        return str(self.summary["session_id"])


def bash(command: str, **extra: str) -> str:
    """One reply that runs command with the Bash tool."""
    return reply("Let me try this.", call("Bash", command=command, **extra))


def frogdesk(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """The real `frogdesk` command in a subprocess, with extra environment variables."""
    return subprocess.run(
        [sys.executable, "-m", "frogdesk", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _outcome(done: subprocess.CompletedProcess[str], session_id: str | None = None) -> Outcome:
    """The run's outcome; observations come from the session's own transcript on disk, so they
    are there also when FrogDesk refused to finish the run."""
    from frogdesk.paths import AppPaths
    from frogdesk.sessions.store import SessionStore

    assert "Traceback" not in done.stderr, done.stderr
    summary: dict[str, object] = json.loads(done.stdout) if done.stdout.strip() else {}
    store = SessionStore(AppPaths.default().sessions_dir)
    if session_id is None:
        session_id = str(summary.get("session_id") or max(r.id for r in store.list()))
    summary.setdefault("session_id", session_id)
    transcript = store.read_transcript(session_id)
    observations = [o.observation for step in transcript.steps for o in step.observations]
    return Outcome(done, summary, observations)


def run_attack(
    repo: Path,
    replies: list[str],
    tmp: Path,
    level: str,
    *,
    env: Mapping[str, str] | None = None,
    max_steps: int | None = None,
) -> Outcome:
    """`frogdesk run --backend script` of the replies at a sandbox level."""
    script = write_script(tmp / "script.jsonl", [*replies, reply("Done.", answer="Done.")])
    out = tmp / "out-run"
    steps = ["--max-steps", str(max_steps)] if max_steps is not None else []
    done = frogdesk(
        "run", "Do the task.", "--repo", str(repo), "--backend", "script", "--script",
        str(script), "--sandbox", level, "--output", str(out), "--json", "--quiet", *steps,
        env=env,
    )  # fmt: skip
    return _outcome(done)


def resume(session_id: str, tmp: Path, *, env: Mapping[str, str] | None = None) -> Outcome:
    """`frogdesk sessions resume` of a session (its script continues where it stopped)."""
    out = tmp / "out-resume"
    done = frogdesk(
        "sessions", "resume", session_id, "--output", str(out), "--json", "--quiet",
        "--max-steps", "50", env=env,
    )  # fmt: skip
    return _outcome(done, session_id)
