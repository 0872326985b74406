"""The standalone one-folder build: packaging/pyinstaller/build.sh builds and smoke-tests it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_pyinstaller_build_and_smoke(tmp_path: Path) -> None:
    pytest.importorskip("PyInstaller", reason="pyinstaller is in the 'test' extra")
    env = dict(os.environ, PYTHON=sys.executable)
    env.pop("FROGDESK_HOME", None)  # the script sets its own
    result = subprocess.run(
        [str(ROOT / "packaging" / "pyinstaller" / "build.sh"), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "standalone build ok" in result.stdout
    app_dir = tmp_path / "out" / "dist" / "frogdesk"
    internal = app_dir / "_internal"
    assert any(internal.rglob("libllama.so*")), "llama.cpp's shared library must be bundled"
    assert any(internal.rglob("frogdesk/tui/themes/*.tcss")), "the themes must be bundled"
