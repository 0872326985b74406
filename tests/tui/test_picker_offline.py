"""The first-run picker with an unreachable Hub: one line on the screen, the saved listing, nothing else."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from frogdesk.config import Settings
from frogdesk.models.hub import list_repo
from frogdesk.paths import AppPaths
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.setup import ModelSetupScreen
from tests.support.hub_server import REPO, RunningHub
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo

pytestmark = [pytest.mark.anyio]
UNRESOLVABLE = "http://frogdesk-hub.invalid"
NOISE = (
    "Retry",
    "Errno",
    "Traceback",
    "thrown while requesting",
    "llama_model_loader",
    "load_tensors",
)


def _app(settings: Settings, repo: Path, tmp_path: Path) -> FrogDeskApp:
    return FrogDeskApp(
        None,
        settings,
        config_path=tmp_path / "config.toml",
        first_screen=lambda app: ModelSetupScreen(settings, repo),
    )


def _status(picker: ModelSetupScreen) -> str:
    return str(picker.query_one("#picker-status", Static).render())


async def test_unresolvable_hub_says_so_and_offers_a_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    settings = Settings.of(model=f"{REPO}:Q4_K_M", hf_endpoint=UNRESOLVABLE, context_size=2048)
    app = _app(settings, make_repo(tmp_path), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = app.screen
        assert isinstance(picker, ModelSetupScreen)
        await wait_for(pilot, lambda: picker.state == "failed", "the offline message", 30)
        status = _status(picker)
        assert "frogdesk-hub.invalid does not resolve" in status and "local .gguf" in status
        assert not any(word in status for word in NOISE)
        assert picker.query_one("#picker-local", Input).has_focus


async def test_unresolvable_hub_shows_the_saved_listing_and_its_age(
    hub: RunningHub, tmp_path: Path
) -> None:
    cache = AppPaths.default().cache_dir
    list_repo(REPO, endpoint=hub.endpoint, cache_dir=cache)
    hub.stop()  # the same endpoint, nobody answering now
    settings = Settings.of(model=f"{REPO}:Q4_K_M", hf_endpoint=hub.endpoint, context_size=2048)
    app = _app(settings, make_repo(tmp_path), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = app.screen
        assert isinstance(picker, ModelSetupScreen)
        await wait_for(pilot, lambda: picker.state == "picking", "the saved listing", 30)
        status = _status(picker)
        assert "saved listing from" in status and "ago" in status and "refused" in status
        assert picker.query_one(DataTable).row_count == len(picker.rows) > 0


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


@pytest.mark.slow
@pytest.mark.llama
def test_in_a_terminal_nothing_else_writes_over_the_picker(
    tmp_path: Path, smollm2_gguf: Path
) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    repo = make_repo(tmp_path)
    name = f"frogdesk-{uuid.uuid4().hex[:8]}"
    env = {
        "FROGDESK_HOME": os.environ["FROGDESK_HOME"],
        "FROGDESK_CONTEXT_SIZE": "2048",
        "FROGDESK_HF_ENDPOINT": UNRESOLVABLE,
        "FROGDESK_MODEL": f"{REPO}:Q4_K_M",
        "TERM": "xterm-256color",
    }
    exports = " ".join(f"{k}={v!r}" for k, v in env.items())
    command = (
        f"env -u HF_HUB_OFFLINE {exports} {sys.executable} -m frogdesk --repo {repo}; sleep 60"
    )
    _tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", command)
    _tmux("set-option", "-t", name, "window-size", "manual")
    _tmux("resize-window", "-t", name, "-x", "120", "-y", "40")

    def wait(what: str, condition: object) -> str:
        deadline = time.monotonic() + 120
        while True:
            screen = _tmux("capture-pane", "-p", "-t", name)
            if callable(condition) and condition(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{screen}")
            time.sleep(0.2)

    try:
        screen = wait("the offline line", lambda s: "does not resolve" in s)
        assert not any(word in screen for word in NOISE), screen
        _tmux("send-keys", "-t", name, "-l", str(smollm2_gguf))
        _tmux("send-keys", "-t", name, "Enter")
        screen = wait("the session screen", lambda s: "ctx" in s and "step 0/" in s)
        time.sleep(1.0)  # anything a library prints late would land now
        screen = _tmux("capture-pane", "-p", "-t", name)
        assert not any(word in screen for word in NOISE), screen
        log = AppPaths.default().log_file.read_text()
        assert "llama_model_loader" in log  # what llama.cpp said went to the file
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)
