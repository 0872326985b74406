"""`models check` command body: JSON and table output, user errors, the cache under FROGDESK_HOME."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from frogdesk.commands.common import add_global_options
from frogdesk.commands.errors import UserError
from frogdesk.commands.quantcheck import add_check_arguments, run_check
from frogdesk.errors import FrogDeskError


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="frogdesk models check")
    add_global_options(parser)
    add_check_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.mark.llama
@pytest.mark.slow
def test_json_then_cached_table(
    qwen35_quants: dict[str, Path], isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    q8, q4 = str(qwen35_quants["Q8_0"]), str(qwen35_quants["Q4_0"])
    assert run_check(_args(q4, q8, "--tokens", "300", "--cases", "0", "--json")) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["reference"] == str(qwen35_quants["F16"]), (
        "the F16 sibling is the default reference"
    )
    assert [r["quant"] for r in data["results"]] == ["F16", "Q4_0", "Q8_0"]
    assert data["results"][0]["mean_kl"] == 0.0
    assert data["results"][1]["mean_kl"] > data["results"][2]["mean_kl"]
    assert all(r["tokens"] == 300 and r["tool_call_fidelity"] is None for r in data["results"])
    assert list((isolated_home / "data" / "quant_check" / "results").glob("*.json"))

    assert run_check(_args(q8, "--reference", q4, "--tokens", "300", "--cases", "0")) == 0
    table = capsys.readouterr().out
    assert "Reference: " in table and "(Q4_0)" in table
    assert "not the original BF16 weights; not benchmark scores" in table
    assert "Q8_0" in table and "(cached)" not in table

    assert run_check(_args(q4, q8, "--tokens", "300", "--cases", "0")) == 0
    assert capsys.readouterr().out.count("(cached)") == 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["missing.gguf"], "not a local .gguf file"),
        (["README.md"], "not a local .gguf file"),
        (["x.gguf", "--tokens", "0"], "--tokens must be at least 1"),
        (["x.gguf", "--cases", "-1"], "--cases must not be negative"),
    ],
)
def test_user_errors(argv: list[str], message: str) -> None:
    with pytest.raises(UserError, match=message):
        run_check(_args(*argv))


def test_a_file_that_is_not_a_model_is_a_user_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad-Q4_0.gguf"
    bad.write_bytes(b"GGUF but not really")
    with pytest.raises(FrogDeskError, match="could not load"):
        run_check(_args(str(bad), "--reference", str(bad), "--tokens", "10"))
