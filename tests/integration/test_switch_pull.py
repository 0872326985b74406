"""`sessions resume --model REPO:QUANT` pulls a Hub quant that is not on disk, then switches;
with the Hub unreachable it says so in one line and the session keeps its model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from tests.support.hub_server import PREFIX, REPO, RunningHub
from tests.support.scripted import frogdesk, make_repo

pytestmark = [pytest.mark.llama, pytest.mark.slow]


def test_resume_with_a_hub_quant_pulls_it_then_switches(
    hub: RunningHub,
    tmp_path: Path,
    qwen35_quants: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from huggingface_hub import try_to_load_from_cache

    for name, value in {"CONTEXT_SIZE": "2048", "THREADS": "2", "GPU_LAYERS": "0"}.items():
        monkeypatch.setenv(f"FROGDESK_{name}", value)
    first = str(qwen35_quants["F16"])
    done = frogdesk(
        "run", "Read calc.py.", "--repo", str(make_repo(tmp_path)), "--backend", "llama",
        "--model", first, "--max-context", "2048", "--max-tokens-per-turn", "4",
        "--max-steps", "4", "--seed", "7", "--json",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # cut reply: not a final answer
    sid = json.loads(done.stdout)["session_id"]
    store = SessionStore(AppPaths.default().sessions_dir)
    wanted = f"{REPO}:Q4_0"

    # Nobody answers at this endpoint: one line, nothing pulled, the session keeps its model.
    monkeypatch.setenv("FROGDESK_HF_ENDPOINT", "http://127.0.0.1:9")
    refused = frogdesk("sessions", "resume", sid, "--model", wanted)
    assert refused.returncode == 2, refused.stderr
    assert "refused the connection" in refused.stderr and "no saved listing" in refused.stderr
    assert "Retry" not in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert store.get(sid).model == first and not hub.state.requests

    monkeypatch.setenv("FROGDESK_HF_ENDPOINT", hub.endpoint)
    resumed = frogdesk("sessions", "resume", sid, "--model", wanted, "--json")
    assert resumed.returncode in (0, 1), resumed.stderr
    err = resumed.stderr
    name = f"{PREFIX}-Q4_0.gguf"
    assert err.index(f"pulled {name}") < err.index("switching re-reads") < err.index("switched to")
    assert json.loads(resumed.stdout)["n_steps"] == 2
    assert store.get(sid).model == wanted
    assert hub.state.served[name] == len(hub.state.repos[REPO].files[name])
    cache = Path(os.environ["HF_HUB_CACHE"])
    assert try_to_load_from_cache(REPO, name, cache_dir=cache) is not None
