"""packaging/install-gpu: prints the exact rebuild command, refuses clearly without a toolchain."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "packaging" / "install-gpu"


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, check=False
    )


def test_cuda_dry_run_prints_exact_command(tmp_path: Path) -> None:
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    nvcc = fake_bin / "nvcc"
    nvcc.write_text("#!/bin/sh\nexit 0\n")
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ, PATH=f"{fake_bin}:{os.environ['PATH']}")
    result = run("--cuda", "--dry-run", "--python", sys.executable, env=env)
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip()
    assert line.startswith("CMAKE_ARGS=-DGGML_CUDA=on FORCE_CMAKE=1 ")
    assert f"{sys.executable} -m pip install --force-reinstall --no-cache-dir" in line
    assert "--no-binary llama-cpp-python" in line
    import importlib.metadata

    assert f"llama-cpp-python=={importlib.metadata.version('llama-cpp-python')}" in line


def test_missing_toolchain_is_a_clear_refusal(tmp_path: Path) -> None:
    env = dict(os.environ, PATH="/nonexistent", CUDA_HOME=str(tmp_path / "no-cuda"))
    result = run("--cuda", "--dry-run", "--python", sys.executable, env=env)
    assert result.returncode == 2
    assert "cannot build for cuda: nvcc was not found" in result.stderr
    assert result.stdout == ""


def test_metal_refused_off_apple_silicon() -> None:
    if sys.platform == "darwin":
        return
    result = run("--metal", "--dry-run", env=dict(os.environ))
    assert result.returncode == 2
    assert "Metal needs macOS on Apple Silicon" in result.stderr


def test_one_backend_is_required() -> None:
    result = run("--dry-run", env=dict(os.environ))
    assert result.returncode == 2
    assert "one of the arguments" in result.stderr
