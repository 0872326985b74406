"""`frogdesk run --backend llama` on the real small models: the plumbing holds, whatever they say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.scripted import fingerprint, frogdesk, make_repo

BUDGET_EXITS = {"agent", "max_turns", "max_tokens_per_turn", "max_context_len"}


def run_llama(tmp_path: Path, model: Path) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    out = tmp_path / "out"
    done = frogdesk(
        "run", "Fix the failing test in test_calc.py.", "--repo", str(repo), "--backend", "llama",
        "--model", str(model), "--output", str(out), "--max-steps", "3", "--max-context", "2048",
        "--max-tokens-per-turn", "24", "--temperature", "0", "--seed", "7", "--json",
        timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    summary = json.loads(done.stdout)
    assert summary["exit_reason"] in BUDGET_EXITS, done.stderr
    assert 1 <= summary["n_steps"] <= 3
    traj = json.loads((out / "trajectory_seed-0.json").read_text(encoding="utf-8"))
    assert traj["trajectory_format"] == "leaf-function-calling"
    assert traj["n_steps"] == summary["n_steps"] == len(traj["frogdesk"]["steps"])
    assert (
        traj["frogdesk"]["model_file"].endswith(model.name)
        and traj["frogdesk"]["backend"] == "llama"
    )
    usage = traj["frogdesk"]["steps"][0]["usage"]
    assert usage["prompt_tokens"] > 0 and 0 < usage["completion_tokens"] <= 24
    assert (out / "generated_seed-0.patch").read_text(encoding="utf-8") == traj["output_patch"]
    assert fingerprint(repo) == before


@pytest.mark.llama
@pytest.mark.slow
def test_run_smollm2(tmp_path: Path, smollm2_gguf: Path, sandboxed_bash: str) -> None:
    run_llama(tmp_path, smollm2_gguf)


@pytest.mark.llama
@pytest.mark.slow
def test_run_tiny_qwen35(tmp_path: Path, qwen35_gguf: Path, sandboxed_bash: str) -> None:
    run_llama(tmp_path, qwen35_gguf)
