"""Fixtures shared by the whole suite: an isolated FROGDESK_HOME and the real test models."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Every test gets its own FrogDesk config/data/cache root and no FROGDESK_* settings."""
    import os

    for name in list(os.environ):
        if name.startswith("FROGDESK_"):
            monkeypatch.delenv(name)
    home = tmp_path_factory.mktemp("frogdesk-home")
    monkeypatch.setenv("FROGDESK_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    yield home
