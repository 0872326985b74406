"""The Linux desktop entry opens FrogDesk in a terminal and installs with its icons."""

from __future__ import annotations

import configparser
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_desktop_entry_fields() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(ROOT / "packaging" / "linux" / "frogdesk.desktop")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Exec"] == "frogdesk"
    assert entry["Terminal"] == "true"
    assert entry["Icon"] == "frogdesk"


def test_icons_exist_at_usual_sizes() -> None:
    for size in (16, 24, 32, 48, 64, 128, 256, 512):
        png = ROOT / "assets" / "icons" / f"frogdesk-{size}.png"
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width = int.from_bytes(data[16:20], "big")
        assert width == size


def test_install_desktop_into_a_home(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "frogdesk").write_text("#!/bin/sh\n")
    (bin_dir / "frogdesk").chmod(0o755)
    env = dict(
        os.environ, XDG_DATA_HOME=str(tmp_path / "share"), PATH=f"{bin_dir}:{os.environ['PATH']}"
    )
    result = subprocess.run(
        [str(ROOT / "packaging" / "linux" / "install-desktop")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "share" / "applications" / "frogdesk.desktop").exists()
    assert (tmp_path / "share" / "icons" / "hicolor" / "48x48" / "apps" / "frogdesk.png").exists()
    assert (
        tmp_path / "share" / "icons" / "hicolor" / "scalable" / "apps" / "frogdesk.svg"
    ).exists()


def test_install_desktop_refuses_without_frogdesk(tmp_path: Path) -> None:
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "share"), PATH="/usr/bin:/bin")
    result = subprocess.run(
        [str(ROOT / "packaging" / "linux" / "install-desktop")],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "not on PATH" in result.stderr
    assert not (tmp_path / "share").exists()
