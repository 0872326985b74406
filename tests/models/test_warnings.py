"""The seven warnings: which model gets which, and the license notice shown once per model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from frogdesk import config
from frogdesk.models.model_warnings import acknowledge, is_frognano, license_key, model_warnings
from frogdesk.models.spec import parse_filename
from frogdesk.models.warning import (
    LICENSE_AMBIGUOUS,
    LOW_BITS,
    NO_QUALITY_EVAL,
    UNVALIDATED_PLATFORM,
    UNVALIDATED_QUANT,
    VISION_REFUSED,
)
from frogdesk.paths import AppPaths
from tests.support.raw_gguf import gguf, kv_str, kv_u32, kv_u64


def _ids(name: str, frognano: bool = True, acknowledged: list[str] | None = None) -> list[str]:
    parsed = parse_filename(name)
    assert parsed is not None
    return [w.id for w in model_warnings(parsed, frognano, acknowledged or [], "o/FrogNano-GGUF")]


def test_frognano_quant_gets_every_caveat() -> None:
    assert _ids("microsoft_FrogNano-4B-2609-Q4_K_M.gguf") == [
        UNVALIDATED_QUANT,
        UNVALIDATED_PLATFORM,
        NO_QUALITY_EVAL,
        LICENSE_AMBIGUOUS,
    ]


def test_below_four_bits_warns_more() -> None:
    for name in ("m-IQ2_M.gguf", "m-Q3_K_L.gguf", "m.i1-IQ3_XXS.gguf", "m-Q2_K.gguf"):
        assert LOW_BITS in _ids(name), name
    for name in ("m-IQ4_XS.gguf", "m-Q4_0.gguf", "m-Q8_0.gguf"):
        assert LOW_BITS not in _ids(name), name
    assert _ids("other-model-IQ2_M.gguf", frognano=False) == [LOW_BITS]


def test_bf16_is_not_a_quant_but_still_unvalidated_on_desktop() -> None:
    ids = _ids("m-bf16.gguf")
    assert UNVALIDATED_QUANT not in ids and NO_QUALITY_EVAL not in ids
    assert UNVALIDATED_PLATFORM in ids


def test_vision_projector_is_refused_and_nothing_else_is_said() -> None:
    assert _ids("mmproj-FrogNano-4B-2609-f16.gguf") == [VISION_REFUSED]
    assert _ids("mmproj-other-f16.gguf", frognano=False) == [VISION_REFUSED]


def test_license_notice_once_per_model_remembered_in_settings() -> None:
    paths = AppPaths.default()
    settings = config.load(paths.config_file, environ={})
    assert LICENSE_AMBIGUOUS in _ids("m-Q4_K_M.gguf", acknowledged=settings.tui.acknowledged)
    updated = acknowledge(
        paths.config_file, settings.tui.acknowledged, license_key("o/FrogNano-GGUF")
    )
    reloaded = config.load(paths.config_file, environ={})
    assert reloaded.tui.acknowledged == updated
    assert LICENSE_AMBIGUOUS not in _ids("m-Q4_K_M.gguf", acknowledged=reloaded.tui.acknowledged)
    # another model still gets it
    parsed = parse_filename("m-Q4_K_M.gguf")
    assert parsed is not None
    other = model_warnings(parsed, True, reloaded.tui.acknowledged, "someone/FrogNano-other")
    assert LICENSE_AMBIGUOUS in [w.id for w in other]


def test_frognano_detection() -> None:
    assert is_frognano("bartowski/microsoft_FrogNano-4B-2609-GGUF")
    assert is_frognano("", "frog_nano-q4.gguf")
    assert not is_frognano("HuggingFaceTB/SmolLM2-135M", "x.gguf")


def _recorded_as(folder: Path, file_name: str, file_type: int) -> Path:
    """A small GGUF named `file_name` whose header records `file_type` (10 is Q2_K)."""
    path = folder / file_name
    path.write_bytes(
        gguf(
            [
                kv_str("general.architecture", "llama"),
                kv_u32("general.file_type", file_type),
                kv_u64("llama.block_count", 2),
                kv_u64("llama.embedding_length", 64),
                kv_u64("llama.attention.head_count", 4),
                kv_u64("llama.context_length", 512),
            ]
        )
    )
    return path


def test_the_warnings_follow_the_quant_the_file_records(tmp_path: Path) -> None:
    """A Q2_K file named ...-BF16.gguf is warned about as Q2_K, and the name is called out.
    The control: a file whose name and header agree gets no such line."""

    def warnings_of(path: Path) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "frogdesk", "models", "info", str(path), "--json"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return [w["id"] for w in json.loads(done.stdout)["warnings"]]

    misnamed = warnings_of(_recorded_as(tmp_path, "FrogNano-4B-2609-BF16.gguf", 10))
    assert misnamed[0] == "quant-misnamed"
    assert {"unvalidated-quant", "low-bits", "no-quality-eval"} <= set(misnamed)
    honest = tmp_path / "honest"
    honest.mkdir()
    named = warnings_of(_recorded_as(honest, "FrogNano-4B-2609-Q2_K.gguf", 10))
    assert "quant-misnamed" not in named and "low-bits" in named


def test_a_run_shows_the_warnings_before_the_model_loads(tmp_path: Path) -> None:
    """`frogdesk run --model PATH` said nothing of the model before. The file here is not
    loadable (its header only): the warnings come first, then the load's own error."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "i"],
        check=True,
    )
    model = _recorded_as(tmp_path, "FrogNano-4B-2609-BF16.gguf", 10)
    done = subprocess.run(
        [sys.executable, "-m", "frogdesk", "run", "hi", "--repo", str(repo), "--model", str(model)],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stderr.splitlines()
    warned = [line for line in lines if line.startswith("frogdesk: warning:")]
    assert warned and warned[0].endswith("[quant-misnamed]")
    assert any(line.endswith("[unvalidated-quant]") for line in warned)
    assert lines.index(warned[-1]) < lines.index(next(x for x in lines if "cannot load" in x))
