"""`frogdesk run --attempts 2` on real llama.cpp (SmolLM2): one model, shared batches, JSON."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.scripted import fingerprint, frogdesk, make_repo


def test_two_llama_attempts_end_to_end(
    tmp_path: Path, smollm2_gguf: Path, sandboxed_bash: str
) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    result = frogdesk(
        "run", "fix add in calc.py", "--repo", str(repo), "--model", str(smollm2_gguf),
        "--attempts", "2", "--check", "true", "--max-steps", "1", "--max-tokens-per-turn", "8",
        "--temperature", "0.6", "--seed", "11", "--json", timeout=900,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    assert "2 attempts share one model" in result.stderr
    assert "decoded in shared batches" in result.stderr
    data = json.loads(result.stdout)
    assert len(data["attempts"]) == 2
    assert len({a["session_id"] for a in data["attempts"]}) == 2
    assert all(a["check"]["exit_code"] == 0 for a in data["attempts"])
    assert fingerprint(repo) == before
