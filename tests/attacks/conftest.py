"""Fixtures of the attack suite: every sandbox level this machine has, and places outside it."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

LEVELS = ("bwrap", "landlock")


def _available(level: str) -> str | None:
    """None when the level works here, else why not."""
    from frogdesk.sandbox.errors import SandboxError
    from frogdesk.sandbox.levels import detect

    try:
        detect(level)
    except SandboxError as exc:
        return str(exc)
    return None


@pytest.fixture(params=LEVELS)
def level(request: pytest.FixtureRequest) -> str:
    """Each confining level in turn; skipped (with the reason) where this machine lacks it."""
    why = _available(str(request.param))
    if why is not None:
        pytest.skip(why)
    return str(request.param)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder no sandboxed command may write (outside /tmp, which the sandbox replaces)."""
    base = Path(tempfile.mkdtemp(prefix="frogdesk-attack-", dir="/var/tmp"))
    yield base
    shutil.rmtree(base, ignore_errors=True)
