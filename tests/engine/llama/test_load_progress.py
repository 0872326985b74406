"""Loading a model reports llama.cpp's own progress, in the engine, the CLI and the first-run picker."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.engine.backends import make_backend
from tests.support.scripted import frogdesk, make_repo

pytestmark = pytest.mark.llama


def test_the_load_reports_fractions_up_to_one(smollm2_gguf: Path) -> None:
    seen: list[float] = []
    backend = make_backend(
        Settings.of(context_size=512), model_path=smollm2_gguf, progress=seen.append
    )
    backend.close()
    assert len(seen) > 2 and seen[-1] == 1.0
    assert seen == sorted(seen) and all(0.0 <= f <= 1.0 for f in seen)


@pytest.mark.slow
def test_frogdesk_run_shows_the_load_on_stderr(tmp_path: Path, smollm2_gguf: Path) -> None:
    repo = make_repo(tmp_path)
    args = (
        "run", "Say hello.", "--repo", str(repo), "--backend", "llama", "--model", str(smollm2_gguf),
        "--max-steps", "1", "--max-context", "2048", "--max-tokens-per-turn", "8",
        "--sandbox", "none", "--output", str(tmp_path / "out"),
    )  # fmt: skip
    done = frogdesk(*args, timeout=300)
    assert "Traceback" not in done.stderr
    assert "loaded the model in" in done.stderr
    assert "\r" not in done.stderr  # a pipe gets lines, not redraws
    quiet = frogdesk(*args, "--quiet", timeout=300)
    assert "loading the model" not in quiet.stderr


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_picker_shows_the_load(tmp_path: Path, smollm2_gguf: Path) -> None:
    from textual.widgets import ProgressBar

    from frogdesk.tui.app import FrogDeskApp
    from frogdesk.tui.screens.session import SessionScreen
    from frogdesk.tui.screens.setup import ModelSetupScreen
    from tests.support.pilot import wait_for

    settings = Settings.of(context_size=1024, sandbox="none")
    picker = ModelSetupScreen(settings, make_repo(tmp_path), model_path=smollm2_gguf)
    app = FrogDeskApp(None, settings, config_path=None, first_screen=lambda app: picker)
    async with app.run_test(size=(120, 40)) as pilot:
        bar = picker.query_one(ProgressBar)
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionScreen), "the session screen", 120
        )
        assert picker.loaded == 1.0
        assert bar.total == 100  # a real bar, not the indeterminate one
