"""First run through Pilot: list quants from a stand-in Hub, download, load; offline fallback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from frogdesk.config import Settings
from frogdesk.paths import AppPaths
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.screens.setup import ModelSetupScreen
from tests.support.hub_server import REPO, RunningHub
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo

pytestmark = [pytest.mark.anyio, pytest.mark.llama, pytest.mark.slow]


def setup_app(settings: Settings, repo: Path, tmp_path: Path) -> FrogDeskApp:
    return FrogDeskApp(
        None,
        settings,
        config_path=tmp_path / "config.toml",
        first_screen=lambda app: ModelSetupScreen(settings, repo),
    )


async def test_pick_download_load_then_session(hub: RunningHub, tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    settings = Settings.of(
        model=f"{REPO}:Q4_K_M", hf_endpoint=hub.endpoint, context_size=2048, sandbox="none"
    )
    app = setup_app(settings, repo, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = app.screen
        assert isinstance(picker, ModelSetupScreen)
        await wait_for(pilot, lambda: picker.state == "picking", "the quant list", 60)
        table = picker.query_one(DataTable)
        labels = [row.label for row in picker.rows]
        assert any("Q4_K_M" in label for label in labels) and not any(
            "mmproj" in label for label in labels
        )
        assert "Q4_K_M" in picker.rows[table.cursor_row].label  # the default is preselected
        status = str(picker.query_one("#picker-status", Static).render())
        assert REPO in status and hub.endpoint in status
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionScreen), "the session screen", 120
        )
        session = app.screen
        assert isinstance(session, SessionScreen)
        info = session.status.info
        assert info.model and info.device
        downloaded = list(Path(os.environ["HF_HUB_CACHE"]).rglob("*Q4_K_M*.gguf"))
        assert len(downloaded) == 1 and downloaded[0].stat().st_size > 0
        assert downloaded[0].is_symlink() and downloaded[0].parent.parent.name == "snapshots"
        assert not list(AppPaths.default().models_dir.rglob("*.gguf"))


async def test_offline_without_a_model_offers_a_local_file(
    tmp_path: Path, smollm2_gguf: Path
) -> None:
    repo = make_repo(tmp_path)
    settings = Settings.of(context_size=2048)
    app = setup_app(settings, repo, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = app.screen
        assert isinstance(picker, ModelSetupScreen)
        await wait_for(pilot, lambda: picker.state == "failed", "the offline message", 60)
        status = str(picker.query_one("#picker-status", Static).render())
        assert "offline" in status.lower() and "local .gguf" in status
        field = picker.query_one("#picker-local", Input)
        assert field.has_focus
        await pilot.press(*str(tmp_path / "missing.gguf"), "enter")
        await wait_for(
            pilot,
            lambda: (
                "no such model file" in str(picker.query_one("#picker-status", Static).render())
            ),
            "the error",
        )
        field.value = str(smollm2_gguf)
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionScreen), "the session screen", 120
        )
