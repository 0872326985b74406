"""A real `frogdesk run` on SmolLM2 saves its engine state; `sessions resume` loads it; a
SIGKILL while saving leaves the old state or none, never one that loads wrong."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from frogdesk.engine.llama.conversation.saved_state import read_state
from tests.support.killpoint import killed_at, run_frogdesk
from tests.support.scripted import make_repo

pytestmark = [pytest.mark.llama, pytest.mark.slow]

STATE_TEMP = r"\.engine\.state\.[0-9]+-[0-9a-f]{8}\.tmp"


def _session(home: Path) -> tuple[str, Path]:
    [row] = json.loads(run_frogdesk(["sessions", "list", "--json"], home).stdout)
    return row["id"], home / "data" / "sessions" / row["id"]


def test_a_resume_loads_the_saved_state_and_a_kill_while_saving_keeps_the_old(
    tmp_path: Path, smollm2_gguf: Path
) -> None:
    repo, home = make_repo(tmp_path), tmp_path / "home"
    limits = ["--max-steps", "1", "--max-tokens-per-turn", "8"]
    first = run_frogdesk(["run", "fix calc.py", "--repo", str(repo), "--model", str(smollm2_gguf),
                          *limits], home)  # fmt: skip
    assert not first.killed, first.stderr[-2000:]
    session, folder = _session(home)
    state = folder / "engine.state"
    old = state.read_bytes()
    assert read_state(state, 1 << 30).tokens

    resume = ["sessions", "resume", session, "--max-steps", "2", "--max-tokens-per-turn", "8"]
    for point in (rf"open \S*/{STATE_TEMP}$", rf"os\.rename \S*/{STATE_TEMP} \S*/engine\.state"):
        op = killed_at(resume, home, match=point)
        assert state.read_bytes() == old, op  # the old state, byte for byte
        assert read_state(state, 1 << 30).tokens

    again = run_frogdesk([*resume[:3], "--max-steps", "3", "--max-tokens-per-turn", "8"], home)
    assert not again.killed, again.stderr[-2000:]
    # said through the session's operator, as what it is: news, not a warning
    said = r"frogdesk: info: resumed from saved state in [0-9.]+ s"
    assert re.search(said, again.stderr), again.stderr[-2000:]
    assert state.read_bytes() != old  # the newer state replaced it


def test_a_kill_before_the_first_save_leaves_no_state(tmp_path: Path, smollm2_gguf: Path) -> None:
    repo, home = make_repo(tmp_path), tmp_path / "home"
    args = ["run", "fix calc.py", "--repo", str(repo), "--model", str(smollm2_gguf),
            "--max-steps", "1", "--max-tokens-per-turn", "8"]  # fmt: skip
    killed_at(args, home, match=rf"os\.rename \S*/{STATE_TEMP} ")
    _, folder = _session(home)
    assert not (folder / "engine.state").exists()
    resumed = run_frogdesk(["sessions", "resume", folder.name, "--max-steps", "2",
                            "--max-tokens-per-turn", "8"], home)  # fmt: skip
    said = "frogdesk: info: no saved state: reading the transcript again"
    assert said in resumed.stderr, resumed.stderr[-2000:]
    assert (folder / "engine.state").exists()
