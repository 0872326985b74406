"""`models list` shows each quant's cached check result beside size and fit, or "not measured"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.core.chooser import local_choices
from frogdesk.paths import AppPaths


def frogdesk(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "frogdesk", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=600,
        check=False,
    )


@pytest.mark.llama
def test_list_shows_drift_then_not_measured(qwen35_quants: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "tiny"
    folder.mkdir()
    for quant in ("F16", "Q8_0", "Q4_0"):
        target = folder / f"Tiny-{quant}.gguf"
        target.symlink_to(qwen35_quants[quant])
        assert frogdesk("models", "import", str(target)).returncode == 0

    before = json.loads(frogdesk("models", "list", "--json").stdout)
    assert {m["quant"]: m["quant_check"] for m in before["models"]} == {
        "F16": None,
        "Q8_0": None,
        "Q4_0": None,
    }

    check = frogdesk("models", "check", str(folder / "Tiny-Q8_0.gguf"), "--tokens", "600", "--json")
    assert check.returncode == 0, check.stderr
    q8_kl = next(r for r in json.loads(check.stdout)["results"] if r["quant"] == "Q8_0")["mean_kl"]

    after = json.loads(frogdesk("models", "list", "--json").stdout)
    by_quant = {m["quant"]: m["quant_check"] for m in after["models"]}
    assert by_quant["Q8_0"]["mean_kl"] == q8_kl
    assert by_quant["Q8_0"]["reference_quant"] == "F16"
    assert by_quant["F16"]["mean_kl"] == 0.0  # the reference is a row of its own check
    assert by_quant["Q4_0"] is None

    table = frogdesk("models", "list").stdout.splitlines()
    assert "DRIFT (quant check)" in table[0]
    q4_line = next(line for line in table if line.split()[1] == "Q4_0")
    q8_line = next(line for line in table if line.split()[1] == "Q8_0")
    assert q4_line.rstrip().endswith("not measured")
    assert "vs F16" in q8_line and "local measurement" in q8_line

    # the chooser (the TUI's picker and quant switch) reads the same result in the same words
    choices = local_choices(Settings(), AppPaths.default())
    words = {row.name.quant: choices.measured[row.label] for row in choices.rows}
    assert words["Q4_0"] == "not measured"
    assert "vs F16" in words["Q8_0"] and words["Q8_0"] in q8_line
