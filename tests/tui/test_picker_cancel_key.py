"""The model picker offers "Cancel download" only while there is something to cancel."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from frogdesk.config import Settings
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.setup import ModelSetupScreen
from tests.support.hub_server import REPO, RunningHub
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo

pytestmark = pytest.mark.anyio


def footer_actions(screen: ModelSetupScreen) -> list[str]:
    footer = screen.query_one(Footer)
    return [k.action for k in footer.query(FooterKey) if k.display and k.region.width]


async def test_cancel_download_shows_only_while_a_download_runs(
    hub: RunningHub, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path)
    settings = Settings.of(model=f"{REPO}:Q4_K_M", hf_endpoint=hub.endpoint)
    app = FrogDeskApp(
        None,
        settings,
        config_path=tmp_path / "config.toml",
        first_screen=lambda app: ModelSetupScreen(settings, repo),
    )
    async with app.run_test(size=(80, 24)) as pilot:
        picker = app.screen
        assert isinstance(picker, ModelSetupScreen)
        await wait_for(pilot, lambda: picker.state == "picking", "the quant list", 60)
        await wait_for(pilot, lambda: "help" in footer_actions(picker), "the footer")
        # nothing is downloading (the footer follows the state a refresh later)
        await wait_for(pilot, lambda: "cancel" not in footer_actions(picker), "no cancel key")
        picker.state = "downloading"  # what Enter on a row sets before the download starts
        await wait_for(pilot, lambda: "cancel" in footer_actions(picker), "the cancel key")
        picker.state = "picking"
        await wait_for(pilot, lambda: "cancel" not in footer_actions(picker), "it to go")
