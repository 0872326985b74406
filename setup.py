"""Build hook: ship the top-level themes/*.tcss inside the wheel as frogdesk/tui/themes/."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithThemes(build_py):
    """build_py that also copies the theme files next to the TUI package."""

    def run(self) -> None:
        super().run()
        source = Path(__file__).resolve().parent / "themes"
        target = Path(self.build_lib) / "frogdesk" / "tui" / "themes"
        target.mkdir(parents=True, exist_ok=True)
        for tcss in sorted(source.glob("*.tcss")):
            shutil.copy2(tcss, target / tcss.name)


setup(cmdclass={"build_py": BuildWithThemes})
