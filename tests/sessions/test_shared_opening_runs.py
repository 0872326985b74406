"""Real `frogdesk run`s on SmolLM2 share the opening: the first saves it, the next loads it
instead of reading Leaf's system prompt and tools again; a SIGKILL while saving it leaves
no opening file or a whole one, and the next run still starts (and saves it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.engine.llama.conversation.saved_state import read_state
from tests.support.killpoint import killed_at, let_time_pass, run_frogdesk
from tests.support.scripted import make_repo

pytestmark = [pytest.mark.llama, pytest.mark.slow]

OPENING_TEMP = r"\.[0-9a-f]{32}\.opening\.[0-9]+-[0-9a-f]{8}\.tmp"
LOADED = "the shared opening"


def _run(repo: Path, home: Path, model: Path, task: str) -> str:
    done = run_frogdesk(["run", task, "--repo", str(repo), "--model", str(model),
                         "--max-steps", "1", "--max-tokens-per-turn", "4"], home)  # fmt: skip
    assert not done.killed and done.returncode in (0, 1), done.stderr[-2000:]
    return (home / "state" / "log" / "frogdesk.log").read_text()


def _openings(home: Path) -> list[Path]:
    return sorted((home / "cache" / "openings").glob("*.opening"))


def test_the_second_run_loads_the_opening_the_first_saved(
    tmp_path: Path, smollm2_gguf: Path
) -> None:
    repo, home = make_repo(tmp_path), tmp_path / "home"
    log = _run(repo, home, smollm2_gguf, "fix calc.py")
    assert "saved for the next sessions" in log
    [opening] = _openings(home)
    assert read_state(opening, 1 << 30).tokens
    log = _run(repo, home, smollm2_gguf, "add a docstring to calc.py")
    assert "loaded from saved state" in log, log[-2000:]
    assert _openings(home) == [opening]  # kept once


def test_a_kill_while_saving_the_opening_leaves_none_and_the_next_run_saves_it(
    tmp_path: Path, smollm2_gguf: Path
) -> None:
    repo, home = make_repo(tmp_path), tmp_path / "home"
    args = ["run", "fix calc.py", "--repo", str(repo), "--model", str(smollm2_gguf),
            "--max-steps", "1", "--max-tokens-per-turn", "4"]  # fmt: skip
    for point in (rf"open \S*/{OPENING_TEMP}$", rf"os\.rename \S*/{OPENING_TEMP} "):
        killed_at(args, home, match=point)
        assert _openings(home) == []  # no half-written opening under the real name
    # control: the same run not killed saves one that loads, and sweeps the killed temps
    let_time_pass(home / "cache" / "openings", 3600)
    log = _run(repo, home, smollm2_gguf, "fix calc.py")
    assert "saved for the next sessions" in log
    [opening] = _openings(home)
    assert read_state(opening, 1 << 30).tokens
    assert [p.name for p in (home / "cache" / "openings").iterdir()] == [opening.name]
