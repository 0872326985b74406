"""Flash attention left to FrogDesk: on for a quantized KV cache and where measured faster,
and what `models info` reports is what llama.cpp's context really uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.models.memory import FLASH_ATTN_HYBRID, default_flash_attn


def test_the_rule() -> None:
    assert default_flash_attn("q8_0", hybrid=False) is True
    assert default_flash_attn("q4_0", hybrid=True) is True
    assert default_flash_attn("f16", hybrid=False) is False
    assert default_flash_attn("f16", hybrid=True) is FLASH_ATTN_HYBRID


def context_flash_attn(path: Path, options: LlamaOptions) -> bool:
    """What llama.cpp's own log says the context was made with."""
    backend = LlamaBackend(path, options)
    try:
        lines = [line for line in backend.load_log if line.startswith("llama_context: flash_attn")]
    finally:
        backend.close()
    assert lines, "llama.cpp logged no flash_attn line"
    return lines[-1].split("=", 1)[1].strip() == "enabled"


@pytest.mark.llama
@pytest.mark.parametrize("model", ["qwen35", "smollm2"])
def test_models_info_says_what_the_context_uses(
    model: str,
    qwen35_gguf: Path,
    smollm2_gguf: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = qwen35_gguf if model == "qwen35" else smollm2_gguf
    assert cli.main(["models", "info", str(path), "--json", "--context", "2048"]) == 0
    reported = json.loads(capsys.readouterr().out)["load"]["flash_attn"]
    used = context_flash_attn(path, LlamaOptions(n_ctx=2048, n_threads=1))
    assert reported is used
    assert used is (FLASH_ATTN_HYBRID if model == "qwen35" else False)
    # control: the log line does tell the two apart
    assert context_flash_attn(path, LlamaOptions(n_ctx=2048, n_threads=1, flash_attn=not used)) is (
        not used
    )
