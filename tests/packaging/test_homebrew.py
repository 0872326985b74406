"""The Homebrew formula carries a resource per locked dependency and a real test block."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORMULA = ROOT / "packaging" / "homebrew" / "frogdesk.rb"
LOCK = ROOT / "packaging" / "requirements.lock"


def locked() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[name] = version
    return pins


def test_every_locked_dependency_is_a_resource() -> None:
    text = FORMULA.read_text()
    resources = dict(
        re.findall(
            r'resource "([^"]+)" do\n    url "[^"]+/([^"/]+)"\n    sha256 "[0-9a-f]{64}"', text
        )
    )
    pins = locked()
    assert "llama-cpp-python" in pins and "textual" in pins
    assert set(resources) == set(pins)
    for name, filename in resources.items():
        normalized = filename.lower().replace("_", "-")
        assert f"{name}-{pins[name]}" in normalized, (name, filename)


def test_formula_tests_the_installed_command() -> None:
    text = FORMULA.read_text()
    block = text[text.index("test do") :]
    assert "frogdesk --version" in block
    assert "doctor --json" in block


def test_lock_matches_the_project_dependencies() -> None:
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    # Linux-only dependencies (the sandbox's) are not resources: Homebrew targets macOS first.
    portable = [d for d in deps if "sys_platform == 'linux'" not in d]
    names = {re.split(r"[<>=;\[ ]", d, maxsplit=1)[0].lower() for d in portable}
    assert names <= set(locked())


@pytest.mark.skipif(shutil.which("ruby") is None, reason="ruby is not installed here")
def test_formula_is_valid_ruby() -> None:
    result = subprocess.run(
        ["ruby", "-c", str(FORMULA)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
