"""The app on a folder that is no git repository: it asks to initialise one before any model
is listed or loaded; yes makes the repository and goes on, no leaves with nothing changed.
A model path that cannot exist is refused before the app opens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from frogdesk.config import Settings
from frogdesk.core.repo_setup import INIT_QUESTION
from frogdesk.models.errors import ModelError
from frogdesk.tui import launch
from frogdesk.tui.screens import setup
from frogdesk.tui.screens.git_init import GitInitScreen
from frogdesk.tui.screens.session import SessionScreen
from tests.support.pilot import wait_for
from tests.support.scripted import git, write_script

pytestmark = pytest.mark.anyio


def _plain_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "app.py").write_text("x = 1\n", encoding="utf-8")
    return folder


async def test_yes_makes_the_repository_then_the_session_opens(tmp_path: Path) -> None:
    folder = _plain_folder(tmp_path)
    script = write_script(tmp_path / "s.jsonl", ["Done.\n</think>\n\nNothing to change."])
    app = launch.build_app(folder, Settings.of(sandbox="none"), tmp_path / "c.toml", script=script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, GitInitScreen), "the question")
        assert INIT_QUESTION in str(app.screen.query_one(".dialog-title").render())
        assert not (folder / ".git").exists()
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session")
    assert git(folder, "ls-files").split() == ["app.py"]
    assert git(folder, "status", "--porcelain") == ""


async def test_no_leaves_before_any_model_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _plain_folder(tmp_path)
    model = tmp_path / "m-Q4_K_M.gguf"
    model.write_bytes(b"GGUF" + bytes(64))  # looks loadable: the picker would load it at once
    loads: list[Any] = []
    monkeypatch.setattr(setup, "load_backend", lambda *a, **k: loads.append(a))
    app = launch.build_app(folder, Settings.of(model=str(model), sandbox="none"), None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, GitInitScreen), "the question")
        await pilot.pause(0.2)
        assert loads == [] and not any(
            isinstance(s, setup.ModelSetupScreen) for s in app.screen_stack
        )
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.is_running, "the app to leave", 10)
    assert app.return_code == 2 and loads == []
    assert not (folder / ".git").exists()


async def test_a_repository_opens_the_picker_without_asking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _plain_folder(tmp_path)
    git(folder, "init", "-q")
    model = tmp_path / "m-Q4_K_M.gguf"
    model.write_bytes(b"GGUF" + bytes(64))
    loads: list[Any] = []

    def load(*args: Any, **kwargs: Any) -> None:
        loads.append(args)
        raise RuntimeError("not a real model")

    monkeypatch.setattr(setup, "load_backend", load)
    app = launch.build_app(folder, Settings.of(model=str(model), sandbox="none"), None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, setup.ModelSetupScreen), "picker")
        await wait_for(pilot, lambda: len(loads) == 1, "the load")  # positive control


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("{tmp}/typo.gguf", "no such model file: {tmp}/typo.gguf"),
        ("{tmp}", "{tmp} is a folder, not a model file"),
        ("bartowski/FrogNano-4B-2609-GGUF:Q4_K_N", "did you mean Q4_K_M"),
    ],
)
def test_a_model_that_cannot_exist_is_refused_before_the_app_opens(
    tmp_path: Path, model: str, says: str
) -> None:
    repo = _plain_folder(tmp_path)
    with pytest.raises(ModelError) as info:
        launch.build_app(repo, Settings.of(model=model.format(tmp=tmp_path)), None)
    assert says.format(tmp=tmp_path) in str(info.value)
    assert "huggingface" not in str(info.value)
