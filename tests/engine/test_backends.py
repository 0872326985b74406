"""The backend factory: each kind from the settings, and clear errors for what is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.engine.backends import BackendError, make_backend, plan_llama
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.errors import ModelLoadError
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.openai.backend import OpenAIBackend
from frogdesk.engine.script_backend import ScriptBackend
from frogdesk.system import physical_cores


def test_script_backend(tmp_path: Path) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"text": "hi"}) + "\n", encoding="utf-8")
    backend = make_backend(Settings.of(backend="script"), script=script)
    assert isinstance(backend, ScriptBackend)
    assert backend.info.model == str(script)


def test_script_backend_errors(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="needs a JSONL file"):
        make_backend(Settings.of(backend="script"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{oops\n', encoding="utf-8")
    with pytest.raises(BackendError, match="line 2: not valid JSON"):
        make_backend(Settings.of(backend="script"), script=bad)


def test_openai_backend_from_settings_or_argument() -> None:
    settings = Settings.of(
        backend="openai", openai_endpoint="http://gpu:8000/v1", openai_model="fn"
    )
    backend = make_backend(settings)
    assert isinstance(backend, OpenAIBackend)
    assert backend.endpoint == "http://gpu:8000/v1" and backend.info.model == "fn"
    other = make_backend(settings, endpoint="http://other:1/v1")
    assert isinstance(other, OpenAIBackend) and other.endpoint == "http://other:1/v1"


def test_openai_backend_errors() -> None:
    with pytest.raises(BackendError, match="needs an endpoint"):
        make_backend(Settings.of(backend="openai"))
    with pytest.raises(BackendError, match="not an http"):
        make_backend(Settings.of(backend="openai", openai_endpoint="gpu:8000"))


def test_unknown_backend() -> None:
    with pytest.raises(BackendError, match="unknown backend 'magic'"):
        make_backend(Settings.of(backend="magic"))


def test_llama_needs_a_model_path() -> None:
    with pytest.raises(BackendError, match="needs a model file"):
        make_backend(Settings.of(backend="llama"))


def test_plan_keeps_explicit_settings(tmp_path: Path) -> None:
    settings = Settings.of(context_size=1024, threads=3, gpu_layers=0)
    launch = plan_llama(settings, tmp_path / "absent.gguf")
    assert (launch.n_ctx, launch.n_threads, launch.n_gpu_layers) == (1024, 3, 0)


def test_plan_sizes_the_context_from_memory(smollm2_gguf: Path) -> None:
    launch = plan_llama(Settings.of(max_context_tokens=2048), smollm2_gguf)
    assert 0 < launch.n_ctx <= 2048
    assert launch.threads == physical_cores() >= 1
    assert launch.n_gpu_layers >= 0


@pytest.mark.llama
def test_llama_backend_is_built(smollm2_gguf: Path) -> None:
    settings = Settings.of(context_size=512, threads=1, gpu_layers=0, seed=7)
    backend = make_backend(settings, model_path=smollm2_gguf)
    try:
        assert backend.info.kind == "llama"
    finally:
        backend.close()


@pytest.mark.llama
def test_broken_model_file_reports_the_load_error(tmp_path: Path) -> None:
    from frogdesk.engine.llama.errors import ModelLoadError

    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"\x00" * 1024)
    with pytest.raises(ModelLoadError):
        make_backend(Settings(), model_path=junk)


def test_quantized_kv_cache_with_flash_attention_off_is_refused_up_front(
    smollm2_gguf: Path,
) -> None:
    settings = Settings.of(kv_cache_type="q8_0", flash_attn="off", context_size=512, gpu_layers=0)
    with pytest.raises(BackendError, match="kv_cache_type q8_0 needs flash attention"):
        make_backend(settings, model_path=smollm2_gguf)


@pytest.mark.llama
def test_auto_flash_attention_makes_a_quantized_kv_cache_load(smollm2_gguf: Path) -> None:
    settings = Settings.of(kv_cache_type="q8_0", context_size=512, threads=1, gpu_layers=0)
    backend = make_backend(settings, model_path=smollm2_gguf)
    try:
        assert backend.info.kind == "llama"
        assert isinstance(backend, LlamaBackend)
        assert backend.options.flash_attn_for(backend.model.is_hybrid) is True
    finally:
        backend.close()
    # control: what llama.cpp does with a quantized V cache and flash attention forced off
    forced = LlamaOptions(n_ctx=512, n_threads=1, kv_cache_type="q8_0", flash_attn=False)
    with pytest.raises(ModelLoadError, match="quantized V cache requires flash_attn"):
        LlamaBackend(smollm2_gguf, forced).close()
