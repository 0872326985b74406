"""The core runs without Textual: importing every package but frogdesk.tui never loads it."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import frogdesk


def core_modules() -> list[str]:
    root = Path(frogdesk.__file__).parent
    names = []
    for info in pkgutil.walk_packages([str(root)], prefix="frogdesk."):
        if info.name.startswith("frogdesk.tui") or info.name == "frogdesk.__main__":
            continue
        names.append(info.name)
    return sorted(names)


def test_core_packages_do_not_import_textual() -> None:
    modules = core_modules()
    assert "frogdesk.config" in modules and "frogdesk.cli" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "assert not bad, bad\n"
        "print(len(sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_import_has_no_side_effects(tmp_path: Path) -> None:
    home = tmp_path / "home"
    code = "import frogdesk.cli, frogdesk.config, frogdesk.paths; frogdesk.cli.build_parser()"
    env = {"FROGDESK_HOME": str(home), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert not home.exists(), "importing FrogDesk must not create its directories"
