"""The first screen names the repository FrogDesk was opened on, as inert text."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from frogdesk.config import Settings
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.setup import ModelSetupScreen
from tests.support.demo import demo_listing

pytestmark = pytest.mark.anyio


async def test_the_picker_names_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "[bold]repo[/bold]"
    repo.mkdir(parents=True)
    settings = Settings.of(context_size=2048)

    def picker(app: FrogDeskApp) -> ModelSetupScreen:
        return ModelSetupScreen(settings, repo, listed=demo_listing())

    app = FrogDeskApp(None, settings, config_path=None, repo=repo, first_screen=picker)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        line = app.screen.query_one("#picker-repo", Static)
        assert line.display and str(line.render()) == f"Repository: {repo}"
    # The control: an app opened on no repository shows no such line.
    bare = FrogDeskApp(None, settings, config_path=None, first_screen=picker)
    async with bare.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert not bare.screen.query_one("#picker-repo", Static).display
