"""The wheel and sdist build, install into a fresh venv, and the installed command works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

import frogdesk

ROOT = Path(__file__).resolve().parents[2]


def build_dist(dist: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    build = build_dist(out)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    return out


@pytest.mark.slow
def test_wheel_installs_into_fresh_venv(tmp_path: Path, dist: Path) -> None:
    wheels = list(dist.glob("frogdesk-*.whl"))
    sdists = list(dist.glob("frogdesk-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "frogdesk/tui/themes/base.tcss" in names
    assert any(n.startswith("frogdesk/leaf/") for n in names)

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # llama-cpp-python comes from pip's wheel cache: built once, reused here.
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(wheels[0])],
        capture_output=True,
        text=True,
        check=False,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    command = env_dir / "bin" / "frogdesk"
    env = dict(os.environ)
    version = subprocess.run(
        [str(command), "--version"], capture_output=True, text=True, env=env, check=False
    )
    assert version.stdout.strip() == f"frogdesk {frogdesk.__version__}", version.stderr
    doctor = subprocess.run(
        [str(command), "doctor", "--json", "--hub-timeout", "1"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=tmp_path,
    )
    assert doctor.returncode == 0, doctor.stderr
    report = json.loads(doctor.stdout)
    assert report["llama"]["available"] is True
    assert report["packages"]["textual"] != "missing"

    # The sdist builds and installs too, themes included.
    from_sdist = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--force-reinstall",
            str(sdists[0]),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert from_sdist.returncode == 0, from_sdist.stdout[-3000:] + from_sdist.stderr[-3000:]
    themes = list(env_dir.glob("lib/python*/site-packages/frogdesk/tui/themes/*.tcss"))
    assert {t.name for t in themes} >= {"base.tcss", "frogdesk-dark.tcss", "frogdesk-light.tcss"}
    again = subprocess.run([str(command), "--version"], capture_output=True, text=True, check=False)
    assert again.stdout.strip() == f"frogdesk {frogdesk.__version__}", again.stderr


@pytest.mark.slow
def test_pipx_installs_the_wheel(tmp_path: Path, dist: Path) -> None:
    pipx = Path(sys.executable).parent / "pipx"
    if not pipx.exists():
        pytest.fail("pipx is in the 'test' extra")
    (wheel,) = dist.glob("frogdesk-*.whl")
    env = dict(os.environ, PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"))
    install = subprocess.run(
        [str(pipx), "install", str(wheel)], capture_output=True, text=True, env=env, check=False
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    version = subprocess.run(
        [str(tmp_path / "bin" / "frogdesk"), "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert version.stdout.strip() == f"frogdesk {frogdesk.__version__}", version.stderr
