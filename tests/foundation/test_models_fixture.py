"""The shared test models load in llama.cpp, generate, and carry the chat format FrogDesk relies on."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import gguf
import llama_cpp
import pytest
from llama_cpp.llama_chat_format import Jinja2ChatFormatter
from llama_cpp.llama_types import CreateCompletionResponse

from tests.support.quantize import QuantizeError, ftype_code, quantize
from tests.support.tiny_qwen35 import write_tiny_qwen35

SPECIAL_TOKENS = [
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
]

READ_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "Read",
        "description": "Read a text file. Returns numbered lines.",
        "parameters": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path to the file to read."}
            },
            "required": ["file_path"],
        },
    },
}


def _load(path: Path, **kwargs: Any) -> llama_cpp.Llama:
    return llama_cpp.Llama(str(path), n_ctx=512, n_threads=2, verbose=False, **kwargs)


@pytest.fixture(scope="module")
def qwen35(qwen35_gguf: Path) -> Iterator[llama_cpp.Llama]:
    llm = _load(qwen35_gguf)
    yield llm
    llm.close()


def _generate(llm: llama_cpp.Llama, prompt: str, max_tokens: int) -> tuple[str, int]:
    """Greedy completion: the text and the number of tokens generated."""
    out = cast(
        "CreateCompletionResponse",
        llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0, stream=False),
    )
    return out["choices"][0]["text"], out["usage"]["completion_tokens"]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.llama
def test_qwen35_is_hybrid_and_generates(qwen35: llama_cpp.Llama) -> None:
    assert qwen35.metadata["general.architecture"] == "qwen35"
    assert llama_cpp.llama_model_is_hybrid(qwen35.model)
    assert not llama_cpp.llama_model_is_recurrent(qwen35.model)
    text, n_generated = _generate(qwen35, "def main(", 12)
    assert n_generated > 0
    assert text != ""


@pytest.mark.llama
def test_qwen35_layers_follow_the_hybrid_pattern(qwen35: llama_cpp.Llama) -> None:
    md = qwen35.metadata
    assert md["qwen35.block_count"] == "4"
    assert md["qwen35.full_attention_interval"] == "4"
    # The recurrent state exists: a partial (recurrent-only) snapshot has a non-zero size.
    qwen35.reset()  # type: ignore[no-untyped-call]
    qwen35.eval(qwen35.tokenize(b"hello world", special=False))
    size = llama_cpp.llama_state_seq_get_size_ext(
        qwen35.ctx, 0, llama_cpp.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
    )
    assert size > 0


@pytest.mark.llama
def test_smollm2_is_a_plain_transformer_and_generates(smollm2_gguf: Path) -> None:
    assert smollm2_gguf.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    llm = _load(smollm2_gguf)
    try:
        assert not llama_cpp.llama_model_is_hybrid(llm.model)
        _, n_generated = _generate(llm, "The capital of France is", 8)
        assert n_generated > 0
    finally:
        llm.close()


@pytest.mark.llama
@pytest.mark.parametrize("text", SPECIAL_TOKENS)
def test_special_tokens_are_single_tokens(qwen35: llama_cpp.Llama, text: str) -> None:
    tokens = qwen35.tokenize(text.encode(), add_bos=False, special=True)
    assert len(tokens) == 1
    assert qwen35.detokenize(tokens, special=True).decode() == text


@pytest.mark.llama
def test_eos_is_im_end(qwen35: llama_cpp.Llama) -> None:
    assert qwen35.detokenize([qwen35.token_eos()], special=True) == b"<|im_end|>"
    assert qwen35.tokenize(b"abc", add_bos=True, special=False) == qwen35.tokenize(
        b"abc", add_bos=False, special=False
    ), "the tiny model, like Qwen, adds no BOS token"


@pytest.mark.llama
def test_plain_text_round_trips_through_the_tokenizer(qwen35: llama_cpp.Llama) -> None:
    text = "def f(x):\n    return x * 2  # ünïcode ✓\n"
    tokens = qwen35.tokenize(text.encode(), add_bos=False, special=False)
    assert len(tokens) < len(text.encode()), "merges shorten common text"
    assert qwen35.detokenize(tokens).decode() == text


def _render(template: str, messages: list[dict[str, Any]], **kwargs: Any) -> str:
    formatter = Jinja2ChatFormatter(
        template, eos_token="<|im_end|>", bos_token="<|endoftext|>", add_generation_prompt=True
    )
    return formatter(messages=messages, **kwargs).prompt  # type: ignore[arg-type]


@pytest.mark.llama
def test_embedded_template_renders_tools_reasoning_and_results(qwen35: llama_cpp.Llama) -> None:
    template = qwen35.metadata["tokenizer.chat_template"]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be brief. "},
        {"role": "user", "content": "Fix the bug"},
        {
            "role": "assistant",
            "content": " Looking. ",
            "reasoning_content": "\nRead it first.\n",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "Read", "arguments": {"file_path": "a.py"}},
                },
                {
                    "type": "function",
                    "function": {
                        "name": "Bash",
                        "arguments": {"command": "ls\n-la", "env": {"A": [1]}},
                    },
                },
            ],
        },
        {"role": "tool", "content": "a.py\n1. x = 1"},
        {"role": "tool", "content": "Exit code: 0"},
    ]
    prompt = _render(template, messages, tools=[READ_TOOL])
    head, _, rest = prompt.partition("<|im_end|>\n")
    assert head.startswith("<|im_start|>system\n# Tools\n")
    assert "<tools>\n" + '{"type": "function", "function": {"name": "Read"' in head
    assert "\n</tools>\n" in head
    assert "<tool_call>\n<function=" in head and "<parameter=" in head
    assert head.endswith("\n\nBe brief.")
    assert rest == (
        "<|im_start|>user\nFix the bug<|im_end|>\n"
        "<|im_start|>assistant\n<think>\nRead it first.\n</think>\n\nLooking.\n\n"
        "<tool_call>\n<function=Read>\n<parameter=file_path>\na.py\n</parameter>\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=Bash>\n<parameter=command>\nls\n-la\n</parameter>\n"
        '<parameter=env>\n{"A": [1]}\n</parameter>\n</function>\n</tool_call><|im_end|>\n'
        "<|im_start|>user\n<tool_response>\na.py\n1. x = 1\n</tool_response>\n"
        "<tool_response>\nExit code: 0\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n<think>\n"
    )


@pytest.mark.llama
def test_template_drops_earlier_reasoning_and_can_disable_thinking(qwen35: llama_cpp.Llama) -> None:
    template = qwen35.metadata["tokenizer.chat_template"]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "<think>\nold thoughts\n</think>\n\nhello ",
            "reasoning_content": "",
        },
        {"role": "user", "content": "again"},
    ]
    assert _render(template, messages) == (
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nhello<|im_end|>\n"
        "<|im_start|>user\nagain<|im_end|>\n<|im_start|>assistant\n<think>\n"
    )
    assert _render(template, messages, enable_thinking=False).endswith(
        "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    )
    # A system message without tools is a plain system turn.
    plain = _render(
        template, [{"role": "system", "content": "S"}, {"role": "user", "content": "u"}]
    )
    assert plain.startswith("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nu<|im_end|>\n")


def test_generator_is_deterministic_per_seed(tmp_path: Path) -> None:
    a = write_tiny_qwen35(tmp_path / "a.gguf", seed=7)
    b = write_tiny_qwen35(tmp_path / "b.gguf", seed=7)
    c = write_tiny_qwen35(tmp_path / "c.gguf", seed=8)
    assert _sha256(a) == _sha256(b)
    assert _sha256(a) != _sha256(c)
    assert a.stat().st_size < 8 * 1024 * 1024


def test_generator_rejects_unknown_weight_type(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="ftype"):
        write_tiny_qwen35(tmp_path / "x.gguf", ftype="q4")
    assert not (tmp_path / "x.gguf").exists()


def test_generator_command_line_writes_a_readable_gguf(tmp_path: Path) -> None:
    out = tmp_path / "cli" / "tiny.gguf"
    repo_root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-m", "tests.support.tiny_qwen35", str(out), "--ftype", "f32"],
        cwd=repo_root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    reader = gguf.GGUFReader(str(out))
    arch = reader.get_field("general.architecture")
    assert arch is not None and arch.contents() == "qwen35"
    types = {t.tensor_type for t in reader.tensors}
    assert gguf.GGMLQuantizationType.F16 not in types


@pytest.mark.llama
def test_quants_load_and_shrink(qwen35_quants: dict[str, Path]) -> None:
    assert set(qwen35_quants) == {"F16", "Q8_0", "Q4_0"}
    sizes = {name: path.stat().st_size for name, path in qwen35_quants.items()}
    assert sizes["Q4_0"] < sizes["Q8_0"] < sizes["F16"]
    for name, path in qwen35_quants.items():
        reader = gguf.GGUFReader(str(path))
        kinds = {t.tensor_type.name for t in reader.tensors if t.name.endswith("ffn_up.weight")}
        assert kinds == {name}
        llm = _load(path)
        try:
            assert llama_cpp.llama_model_is_hybrid(llm.model)
            assert _generate(llm, "x", 4)[1] > 0
        finally:
            llm.close()


def test_quantize_reports_bad_input(tmp_path: Path, qwen35_gguf: Path) -> None:
    with pytest.raises(FileNotFoundError):
        quantize(tmp_path / "missing.gguf", tmp_path / "out.gguf", "Q8_0")
    with pytest.raises(ValueError, match="unknown quantization type"):
        ftype_code("Q9_9")
    not_a_model = tmp_path / "junk.gguf"
    not_a_model.write_bytes(b"not a gguf file at all")
    with pytest.raises(QuantizeError):
        quantize(not_a_model, tmp_path / "out.gguf", "Q8_0")
