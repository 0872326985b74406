"""Fixtures of the attempts tests: the sandbox level headless Bash needs."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def sandboxed_bash() -> str:
    """The sandbox level headless runs get; checks cannot run unattended at `none`."""
    from frogdesk.sandbox.levels import detect

    level, reason = detect("auto")
    if level == "none":
        pytest.skip(f"no sandbox on this machine, headless Bash would need approval: {reason}")
    return level
