"""Switching a session's quant mid-way: the cost comes first, the transcript stays, the run goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogdesk import config
from frogdesk.models.errors import ModelError
from frogdesk.paths import AppPaths
from frogdesk.sessions.errors import SessionClosedError, SwitchRefusedError
from frogdesk.sessions.record import SessionSpec
from frogdesk.sessions.service import SessionService
from tests.support.scripted import frogdesk, make_repo
from tests.support.sessionkit import script_file

REPO = "someone/FrogNano-tiny-GGUF"
# small, fixed budgets: every reply is cut, so each run ends after one step and can go on
BUDGET = {
    "max_steps": 4,
    "max_tokens_per_turn": 4,
    "context_size": 2048,
    "max_context_tokens": 2048,
    "threads": 2,
    "gpu_layers": 0,
    "seed": 7,
}


def _install(quants: dict[str, Path]) -> AppPaths:
    paths = AppPaths.default()
    folder = paths.models_dir / REPO
    folder.mkdir(parents=True)
    for quant in ("F16", "Q8_0"):
        (folder / f"FrogNano-tiny-{quant}.gguf").symlink_to(quants[quant])
    return paths


def _service(paths: AppPaths) -> SessionService:
    return SessionService(paths, config.load(paths.config_file, environ={}, overrides=BUDGET))


@pytest.mark.llama
@pytest.mark.slow
def test_switch_quant_keeps_the_transcript_and_the_session_goes_on(
    tmp_path: Path, qwen35_quants: dict[str, Path]
) -> None:
    paths = _install(qwen35_quants)
    repo = make_repo(tmp_path)
    service = _service(paths)
    active = service.start(SessionSpec("Read calc.py.", repo, model=f"{REPO}:F16"))
    try:
        assert active.backend.info.quant == "F16"
        first = service.run(active)
    finally:
        active.close()
    assert first.result.exit_reason == "max_tokens_per_turn" and first.result.n_steps == 1
    sid = first.record.id
    before = service.store.read_transcript(sid)

    switch = service.switch_model(sid, f"{REPO}:Q8_0")
    assert switch.plan.path.name == "FrogNano-tiny-Q8_0.gguf"
    assert switch.plan.cost.tokens > 0 and switch.plan.cost.est_seconds >= 0
    assert "switching re-reads" in switch.announcement()
    assert service.store.get(sid).model == f"{REPO}:F16"  # nothing changes before perform
    active = switch.perform()
    try:
        assert active.backend.info.quant == "Q8_0"
        assert service.store.get(sid).model == f"{REPO}:Q8_0"
        assert active.transcript.conversation() == before.conversation()
        assert switch.evaluated > 0
        second = service.run(active)
    finally:
        active.close()
    assert second.result.n_steps == 2
    assert second.result.exit_reason in ("max_tokens_per_turn", "agent", "max_turns")
    after = service.store.read_transcript(sid)
    assert after.steps[0] == before.steps[0]  # the first model's step is kept as it was
    usage = after.steps[1].usage
    # the new model's first reply reused exactly the conversation it re-read
    assert usage is not None and usage.reused_tokens == switch.evaluated
    assert second.trajectory["frogdesk"]["quant"] == "Q8_0"


@pytest.mark.llama
@pytest.mark.slow
def test_sessions_resume_with_model_announces_the_cost_first(
    tmp_path: Path, qwen35_quants: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _install(qwen35_quants)
    repo = make_repo(tmp_path)
    env_budget = ["--max-tokens-per-turn", "4", "--max-steps", "4", "--seed", "7"]
    monkeypatch.setenv("FROGDESK_CONTEXT_SIZE", "2048")
    monkeypatch.setenv("FROGDESK_THREADS", "2")
    monkeypatch.setenv("FROGDESK_GPU_LAYERS", "0")
    done = frogdesk(
        "run", "Read calc.py.", "--repo", str(repo), "--backend", "llama",
        "--model", f"{REPO}:F16", "--max-context", "2048", *env_budget, "--json",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # cut reply: not a final answer
    sid = json.loads(done.stdout)["session_id"]
    resumed = frogdesk("sessions", "resume", sid, "--model", f"{REPO}:Q8_0", "--json")
    assert resumed.returncode in (0, 1), resumed.stderr
    err = resumed.stderr
    cost = err.index("switching re-reads")
    assert cost < err.index("switched to FrogNano-tiny-Q8_0.gguf") < err.index("step 2")
    assert json.loads(resumed.stdout)["n_steps"] == 2
    assert _service(paths).store.get(sid).model == f"{REPO}:Q8_0"


def test_switch_refusals(tmp_path: Path) -> None:
    paths = AppPaths.default()
    service = _service(paths)
    repo = make_repo(tmp_path)
    script = script_file(tmp_path / "s.jsonl", ["ok\n</think>\n\ndone"])
    active = service.start(SessionSpec("x", repo, backend="script", script=str(script)))
    active.close()
    with pytest.raises(SwitchRefusedError, match="script backend"):
        service.switch_model(active.record.id, f"{REPO}:Q8_0")
    record = service.store.get(active.record.id)
    record.backend = "llama"
    service.store.update(record)
    with pytest.raises(ModelError, match="models pull"):
        service.switch_model(record.id, f"{REPO}:Q8_0")
    service.discard(record.id)
    with pytest.raises(SessionClosedError):
        service.switch_model(record.id, f"{REPO}:Q8_0")
    cli = frogdesk("sessions", "resume", record.id, "--model", f"{REPO}:Q8_0")
    assert cli.returncode == 2 and "Traceback" not in cli.stderr


@pytest.mark.llama
@pytest.mark.slow
def test_an_open_session_switches_with_its_backend_options(
    tmp_path: Path, qwen35_quants: dict[str, Path]
) -> None:
    from frogdesk.engine.llama.backend import LlamaBackend

    paths = _install(qwen35_quants)
    service = _service(paths)
    active = service.start(SessionSpec("Read calc.py.", make_repo(tmp_path), model=f"{REPO}:F16"))
    try:
        service.run(active)
        old = active.backend
        assert isinstance(old, LlamaBackend)
        assert active.transcript.steps == service.store.read_transcript(active.record.id).steps
        switch = service.switch_model(active, f"{REPO}:Q8_0")
        # an open session counts its tokens with the model it has
        assert switch.plan.cost.tokens == old.count_tokens(
            active.transcript.conversation(), active.tools
        )
        same = switch.perform()
        assert same is active and active.backend is not old
        assert isinstance(active.backend, LlamaBackend)
        assert active.backend.options.n_ctx == old.options.n_ctx
        assert active.backend.info.quant == "Q8_0" and switch.evaluated > 0
        second = service.run(active)
        assert second.result.n_steps == 2
        assert service.store.get(active.record.id).model == f"{REPO}:Q8_0"
    finally:
        active.close()
