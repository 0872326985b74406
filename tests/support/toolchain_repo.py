"""A developer's repository with its own `.venv`: pytest installed, the package installed editable.

Built once per test run (a venv and two pip installs take tens of seconds) under /var/tmp,
outside the /tmp the bwrap level replaces. pip installs from whatever index or wheel cache
this machine has; where it cannot (offline, no cache) the same files are put in place by
hand: pytest's packages copied from the interpreter running the tests, its console script
and the editable install's `.pth` written as pip writes them.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from tests.support.gitutil import git

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
PACKAGE_FILE = "src/calcpkg/__init__.py"
SECRET = "SECRET-DOTENV-VALUE-7c1e"
"""In the repository's untracked `.env`: the sandbox must never read it."""
PYTEST_PACKAGES = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py.py")
PIP_TIMEOUT = 300
PYTEST_SCRIPT = (
    "#!{python}\n# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom pytest import console_main\n"
    "if __name__ == '__main__':\n"
    "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
    "    sys.exit(console_main())\n"
)


def _write_project(repo: Path) -> None:
    (repo / "src" / "calcpkg").mkdir(parents=True)
    (repo / PACKAGE_FILE).write_text(BUGGY, encoding="utf-8")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(
        "from calcpkg import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        encoding="utf-8",
    )
    (repo / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "calcpkg"\nversion = "0.1"\n\n'
        '[tool.setuptools.packages.find]\nwhere = ["src"]\n',
        encoding="utf-8",
    )
    # `.venv` (not `.venv/`): a pattern that also ignores a link, so the landlock level can
    # show the folder in the worktree.
    (repo / ".gitignore").write_text(
        ".venv\n.env\n*.egg-info/\n__pycache__/\n.pytest_cache/\nbuild/\n", encoding="utf-8"
    )


def _pip(venv: Path, *args: str) -> bool:
    try:
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args],
            capture_output=True,
            timeout=PIP_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _site(venv: Path) -> Path:
    return next((venv / "lib").glob("python*/site-packages"))


def _install_pytest_by_hand(venv: Path) -> None:
    """What `pip install pytest` leaves: the packages in site-packages and bin/pytest."""
    ours = Path(sysconfig.get_paths()["purelib"])
    site = _site(venv)
    for name in PYTEST_PACKAGES:
        source = ours / name
        if source.is_dir():
            shutil.copytree(source, site / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.is_file():
            shutil.copy2(source, site / name)
    script = venv / "bin" / "pytest"
    script.write_text(PYTEST_SCRIPT.format(python=venv / "bin" / "python"), encoding="utf-8")
    script.chmod(0o755)


def _install_editable_by_hand(repo: Path, venv: Path) -> None:
    """What setuptools writes for a src layout installed with `pip install -e .`."""
    (_site(venv) / "__editable__.calcpkg-0.1.pth").write_text(f"{repo / 'src'}\n", encoding="utf-8")


def make_venv_repo(root: Path) -> Path:
    """A committed src-layout project whose test fails, with `.venv` (pytest, the package
    installed editable) and an untracked `.env` holding SECRET."""
    repo = root / "proj"
    repo.mkdir()
    _write_project(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    venv = repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    if not _pip(venv, "pytest", "wheel"):
        _install_pytest_by_hand(venv)
    if not _pip(venv, "--no-deps", "--no-build-isolation", "-e", str(repo)):
        _install_editable_by_hand(repo, venv)
    shutil.rmtree(repo / "build", ignore_errors=True)
    (repo / ".env").write_text(f"TOKEN={SECRET}\n", encoding="utf-8")
    return repo


@functools.cache
def venv_repo() -> Path:
    """The repository, built once for the whole test run (removed at exit)."""
    base = Path(tempfile.mkdtemp(prefix="frogdesk-toolchain-", dir="/var/tmp"))
    atexit.register(shutil.rmtree, base, True)
    return make_venv_repo(base)


def tree_hashes(root: Path) -> dict[str, str]:
    """Every file and link under root (the venv included, .git's objects not), byte for byte."""
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        rel_folder = Path(folder).relative_to(root)
        if rel_folder.name == ".git":
            # what a session's start writes in the user's git dir: its objects, its
            # worktree's admin folder (pinned by the worktree tests, not these)
            dirs[:] = [d for d in dirs if d not in ("objects", "worktrees", "logs")]
        for name in [*files, *(d for d in dirs if (Path(folder) / d).is_symlink())]:
            path = Path(folder) / name
            rel = str(rel_folder / name)
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        out[str(rel_folder) + "/"] = "dir"
    return out
