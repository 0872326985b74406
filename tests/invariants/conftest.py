"""Fixtures of the invariant tests: the sandbox level headless Bash runs at."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def sandbox_level() -> str:
    """The level `frogdesk run` picks here; headless Bash cannot run unattended at `none`."""
    from frogdesk.sandbox.levels import detect

    level, reason = detect("auto")
    if level == "none":
        pytest.skip(f"no sandbox on this machine, headless Bash would need approval: {reason}")
    return level
