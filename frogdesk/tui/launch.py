"""Starting the app: straight to a session on a model already on disk, else the picker."""

from __future__ import annotations

from pathlib import Path

from frogdesk.config import Settings
from frogdesk.core.last_model import model_pinned, remembered
from frogdesk.core.model_ops import local_file, refuse_unusable
from frogdesk.core.repo_model import with_repository_model
from frogdesk.core.repo_setup import not_a_repository
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.engine.kinds import kind_of
from frogdesk.models.errors import ModelError
from frogdesk.paths import AppPaths
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.git_init import GitInitScreen
from frogdesk.tui.screens.setup import ModelSetupScreen


def local_model(settings: Settings) -> Path | None:
    """The GGUF the settings name, when it is on disk (no network)."""

    try:
        return local_file(settings.model, settings)
    except ModelError:
        return None


def build_app(
    repo: Path,
    settings: Settings,
    config_path: Path | None,
    *,
    script: Path | None = None,
    model_given: bool = False,
) -> FrogDeskApp:
    """The app for a repository: replaying a script, loading a local model, or picking one."""
    if script is not None or not kind_of(settings.engine.backend).local_model:
        workbench = CoreWorkbench(repo, settings, script=script)
        return asking_git_init(
            FrogDeskApp(workbench, settings, config_path=config_path, repo=repo), repo
        )
    settings = with_repository_model(settings, repo, config_path, flag=model_given)
    if settings.model.strip():
        refuse_unusable(settings.model, settings)  # a typo'd path or quant: one line, no app
    path = local_model(settings)
    if path is not None and not model_pinned(settings, config_path, flag=model_given):
        last = remembered(AppPaths.default())
        if last is not None and last.present and last.path != path:
            path = None  # nothing pinned: the picker loads the model used here last
    app = FrogDeskApp(
        None,
        settings,
        config_path=config_path,
        first_screen=lambda app: ModelSetupScreen(
            settings, repo, model_path=path, model_given=model_given
        ),
        repo=repo,
    )
    return asking_git_init(app, repo)


def asking_git_init(app: FrogDeskApp, repo: Path) -> FrogDeskApp:
    """On a folder that is no git repository, the app first offers `git init` (before any
    model is listed or loaded), then goes on as it would have."""
    if not_a_repository(repo) is None:
        return app
    first, workbench = app.first_screen, app.workbench

    def then(running: object) -> None:
        if first is not None:
            app.switch_screen(first(app))
        elif workbench is not None:
            app.open_session_screen(workbench)

    app.first_screen = lambda _app: GitInitScreen(repo, then)
    return app


def run_tui(
    repo: Path,
    settings: Settings,
    config_path: Path | None,
    *,
    script: Path | None = None,
    model_given: bool = False,
) -> int:
    """Run the app until the user quits; `model_given`: --model named the model."""
    app = build_app(repo, settings, config_path, script=script, model_given=model_given)
    app.run()
    return 0
