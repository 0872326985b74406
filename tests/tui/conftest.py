"""TUI test settings: async tests run on asyncio through anyio's pytest plugin."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Textual runs on asyncio."""
    return "asyncio"


# The stand-in Hub of the models tests, for the first-run tests.
from tests.models.conftest import hub, model_quants, split_q8  # noqa: E402, F401
