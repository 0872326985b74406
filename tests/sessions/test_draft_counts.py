"""Drafted and accepted tokens per drafter: in each step's usage, summed in the session record
and in `run --json`, kept when the session is resumed; `speculative = false` drafts nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from tests.support.scripted import frogdesk, git

pytestmark = [pytest.mark.llama, pytest.mark.slow]

LINES = [f"    total_{i} = add(total_{i - 1}, values[{i}])  # step {i}" for i in range(1, 13)]
SOURCE = (
    "def sums(values):\n    total_0 = values[0]\n" + "\n".join(LINES) + "\n    return total_12\n"
)
TASK = (
    "Repeat the code of sums.py exactly, line by line:\n\n" + SOURCE + "\nNow repeat it:\n" + SOURCE
)


def copy_repo(root: Path) -> Path:
    """A repository whose task asks the model to copy text it has in its prompt."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    (repo / "sums.py").write_text(SOURCE, encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    return repo


def run(*args: str) -> dict[str, Any]:
    done = frogdesk(*args, "--json", timeout=600)
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def step_sums(session_id: str) -> dict[str, dict[str, int]]:
    """Drafted and accepted tokens per drafter over the stored steps' usage."""
    steps = SessionStore(AppPaths.default().sessions_dir).read_transcript(session_id).steps
    out: dict[str, dict[str, int]] = {}
    for step in steps:
        assert step.usage is not None
        assert sum(step.usage.drafted_by.values()) == step.usage.drafted_tokens
        assert sum(step.usage.accepted_by.values()) == step.usage.accepted_tokens
        for name, n in step.usage.drafted_by.items():
            counts = out.setdefault(name, {"drafted": 0, "accepted": 0})
            counts["drafted"] += n
            counts["accepted"] += step.usage.accepted_by.get(name, 0)
    return out


def llama_run(repo: Path, model: Path, steps: int) -> list[str]:
    return [
        "run", TASK, "--repo", str(repo), "--backend", "llama", "--model", str(model),
        "--max-steps", str(steps), "--max-context", "2048", "--max-tokens-per-turn", "64",
        "--temperature", "0.6", "--seed", "3", "--quiet",
    ]  # fmt: skip


def test_drafts_are_counted_per_drafter_and_kept_by_a_resumed_session(
    tmp_path: Path, smollm2_gguf: Path, sandboxed_bash: str
) -> None:
    repo = copy_repo(tmp_path)
    first = run(*llama_run(repo, smollm2_gguf, 1))
    session_id = first["session_id"]
    store = SessionStore(AppPaths.default().sessions_dir)
    counted = step_sums(session_id)
    assert first["drafts"] == store.get(session_id).drafts == counted
    assert counted.get("ngram", {}).get("drafted", 0) > 0, "the copy task drafts from the prompt"
    assert set(counted) <= {"ngram", "mtp"}
    assert all(0 <= c["accepted"] <= c["drafted"] for c in counted.values())

    if first["exit_reason"] == "agent":
        pytest.skip("the model answered in one step; nothing to resume")
    again = run("sessions", "resume", session_id, "--max-steps", "2", "--quiet")
    total = step_sums(session_id)
    assert again["drafts"] == store.get(session_id).drafts == total
    # the resumed run added its own steps' counts to the stored ones
    assert total["ngram"]["drafted"] >= counted["ngram"]["drafted"]
    assert len(store.read_transcript(session_id).steps) == 2


def test_speculative_false_in_the_config_drafts_nothing(
    tmp_path: Path, smollm2_gguf: Path, sandboxed_bash: str
) -> None:
    config = AppPaths.default().config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("speculative = false\n", encoding="utf-8")
    off = run(*llama_run(copy_repo(tmp_path), smollm2_gguf, 1))
    assert off["drafts"] == {} == step_sums(off["session_id"])
    # control: the same run with the setting on drafts (see the test above for its counts)
    config.write_text("speculative = true\n", encoding="utf-8")
    on = run(*llama_run(copy_repo(tmp_path / "on"), smollm2_gguf, 1))
    assert on["drafts"].get("ngram", {}).get("drafted", 0) > 0
