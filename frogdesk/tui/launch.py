"""Starting the app: straight to a session on a model already on disk, else the picker."""

from __future__ import annotations

from pathlib import Path

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.engine.registry import kind_of
from frogdesk.models.errors import ModelError
from frogdesk.models.resolve import resolve_local
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.setup import ModelSetupScreen


def local_model(settings: Settings) -> Path | None:
    """The GGUF the settings name, when it is on disk (no network)."""

    try:
        return resolve_local(settings.model, settings)
    except ModelError:
        return None


def build_app(
    repo: Path, settings: Settings, config_path: Path | None, *, script: Path | None = None
) -> FrogDeskApp:
    """The app for a repository: replaying a script, loading a local model, or picking one."""
    if script is not None or not kind_of(settings.backend).local_model:
        workbench = CoreWorkbench(repo, settings, script=script)
        return FrogDeskApp(workbench, settings, config_path=config_path)
    path = local_model(settings)
    return FrogDeskApp(
        None,
        settings,
        config_path=config_path,
        first_screen=lambda app: ModelSetupScreen(settings, repo, model_path=path),
    )


def run_tui(
    repo: Path, settings: Settings, config_path: Path | None, *, script: Path | None = None
) -> int:
    """Run the app until the user quits."""
    app = build_app(repo, settings, config_path, script=script)
    app.run()
    return 0
