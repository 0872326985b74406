"""The quant switch offers the session's repo on the Hub: a quant not on disk is pulled, then
switched to; with the Hub unreachable the switch still offers the disk and a path, in one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.engine.backends import make_backend
from frogdesk.models.local import import_model
from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.quant import QuantSwitchScreen
from frogdesk.tui.screens.session import SessionScreen
from tests.support.hub_server import PREFIX, REPO, RunningHub
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo

pytestmark = [pytest.mark.anyio, pytest.mark.llama, pytest.mark.slow]


def _settings(endpoint: str) -> Settings:
    return Settings.of(
        model=f"{REPO}:Q4_K_M",
        hf_endpoint=endpoint,
        context_size=2048,
        max_steps=1,
        max_tokens_per_turn=4,
    )


async def test_the_switch_pulls_a_hub_quant_and_switches_the_session(
    hub: RunningHub, tmp_path: Path, smollm2_gguf: Path
) -> None:
    from huggingface_hub import try_to_load_from_cache

    paths = AppPaths.default()
    import_model(smollm2_gguf, paths.models_dir)
    settings = _settings(hub.endpoint)
    store = SessionStore(paths.sessions_dir)
    backend = make_backend(settings, model_path=smollm2_gguf)
    workbench = CoreWorkbench(make_repo(tmp_path), settings, backend=backend)
    app = FrogDeskApp(workbench, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press(*"say hi", "enter")
        await wait_for(
            pilot, lambda: screen.last_exit is not None and not screen.running, "the run", 120
        )
        assert screen.session is not None
        session_id = screen.session.record.id
        assert store.get(session_id).model == f"{REPO}:Q4_K_M"

        await pilot.press("ctrl+o")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, QuantSwitchScreen) and bool(app.screen.remote),
            "the Hub's quants",
            60,
        )
        picker = app.screen
        assert isinstance(picker, QuantSwitchScreen)
        labels = [row.label for row in picker.remote]
        wanted = f"{REPO}/{PREFIX}-Q4_0.gguf"
        assert wanted in labels and not any("mmproj" in label for label in labels)
        hub_line = str(picker.query_one("#quant-hub", Static).render())
        assert "Enter downloads one" in hub_line and hub.endpoint in hub_line
        table = picker.query_one(DataTable)
        assert table.row_count == len(picker.rows) + len(picker.remote)
        assert not hub.state.served  # listed, nothing downloaded yet

        table.move_cursor(row=len(picker.rows) + labels.index(wanted))
        await pilot.press("enter")
        await wait_for(pilot, lambda: picker.announced is not None, "the pull and the cost", 120)
        pulled = picker.announced
        assert pulled is not None
        name = f"{PREFIX}-Q4_0.gguf"
        data = hub.state.repos[REPO].files[name]
        assert hub.state.served.get(name) == len(data)
        cache = Path(os.environ["HF_HUB_CACHE"])
        assert try_to_load_from_cache(REPO, name, cache_dir=cache) == str(pulled)
        assert "switching re-reads" in str(picker.query_one("#quant-cost", Static).render())

        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                screen.status.info.state == "ready" and "SmolLM2" not in screen.status.info.model
            ),
            "the switch",
            120,
        )
        assert store.get(session_id).model == str(pulled)
        assert PREFIX in screen.status.info.model
    assert workbench.backend is not None and workbench.backend is not backend
    workbench.backend.close()


async def test_with_the_hub_unreachable_the_switch_offers_the_disk_and_a_path(
    hub: RunningHub, tmp_path: Path, smollm2_gguf: Path, qwen35_quants: dict[str, Path]
) -> None:
    paths = AppPaths.default()
    on_disk = import_model(smollm2_gguf, paths.models_dir)
    settings = _settings(hub.endpoint)
    hub.stop()  # the same endpoint, the connection refused now
    backend = make_backend(settings, model_path=smollm2_gguf)
    workbench = CoreWorkbench(make_repo(tmp_path), settings, backend=backend)
    app = FrogDeskApp(workbench, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, QuantSwitchScreen), "the switch")
        picker = app.screen
        assert isinstance(picker, QuantSwitchScreen)
        hub_line = picker.query_one("#quant-hub", Static)
        await wait_for(pilot, lambda: "unreachable" in str(hub_line.render()), "the Hub line", 30)
        line = str(hub_line.render()).strip()
        assert "\n" not in line and "Retry" not in line and "Traceback" not in line
        assert [m.path for m in picker.models] == [on_disk] and picker.remote == []
        assert picker.query_one(DataTable).row_count == 1

        field = picker.query_one("#quant-path", Input)
        field.value = str(qwen35_quants["Q4_0"])
        field.focus()
        await pilot.press("enter")
        cost = picker.query_one("#quant-cost", Static)
        await wait_for(pilot, lambda: "switching re-reads" in str(cost.render()), "the cost", 60)
        assert picker.announced == qwen35_quants["Q4_0"]
    backend.close()


async def test_a_pull_in_the_switch_is_cancelled_by_escape_and_resumes(
    hub: RunningHub, tmp_path: Path, smollm2_gguf: Path
) -> None:
    name = f"{PREFIX}-Q4_0.gguf"
    size = len(hub.state.repos[REPO].files[name])
    hub.state.bytes_per_second = size / 20  # slow enough to be stopped part way
    hub.state.step = 4096
    settings = _settings(hub.endpoint)
    backend = make_backend(settings, model_path=smollm2_gguf)
    workbench = CoreWorkbench(make_repo(tmp_path), settings, backend=backend)
    app = FrogDeskApp(workbench, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, QuantSwitchScreen) and bool(app.screen.remote),
            "the Hub's quants",
            60,
        )
        picker = app.screen
        assert isinstance(picker, QuantSwitchScreen)
        labels = [row.label for row in picker.remote]
        table = picker.query_one(DataTable)
        table.move_cursor(row=len(picker.rows) + labels.index(f"{REPO}/{name}"))
        table.focus()
        await pilot.press("enter")
        cost = picker.query_one("#quant-cost", Static)
        await wait_for(pilot, lambda: "Escape cancels" in str(cost.render()), "the progress", 30)
        await wait_for(pilot, lambda: hub.state.served.get(name, 0) > 0, "some bytes", 30)
        await pilot.press("escape")
        await wait_for(pilot, lambda: "cancelled" in str(cost.render()), "the cancel line", 30)
        assert app.screen is picker and not picker.pulling and picker.announced is None
        partial = list(Path(os.environ["HF_HUB_CACHE"]).rglob("*.incomplete"))
        assert len(partial) == 1 and 0 < partial[0].stat().st_size < size

        hub.state.bytes_per_second = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: picker.announced is not None, "the resumed pull", 120)
        resumed = [r for (path, r) in hub.state.served_by_range if path == name and r]
        assert resumed and resumed[0].startswith("bytes=") and not resumed[0].startswith("bytes=0-")
        assert (
            picker.announced is not None
            and picker.announced.read_bytes() == (hub.state.repos[REPO].files[name])
        )
    backend.close()


async def _notes_after_loading(model: Path, tmp_path: Path) -> list[str]:
    """The notifications shown once the first-run picker has loaded `model`."""
    from frogdesk.tui.screens.setup import ModelSetupScreen

    settings = Settings.of(context_size=512)
    (tmp_path / model.stem).mkdir()
    repo = make_repo(tmp_path / model.stem)
    app = FrogDeskApp(
        None,
        settings,
        config_path=tmp_path / "config.toml",
        first_screen=lambda app: ModelSetupScreen(settings, repo, model_path=model),
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the load", 120)
        await pilot.pause()
        notes = [str(n.message) for n in app._notifications]
        workbench = app.workbench
        assert isinstance(workbench, CoreWorkbench) and workbench.backend is not None
        workbench.backend.close()
    return notes


async def test_a_library_warning_while_loading_is_a_notification(
    tmp_path: Path, qwen35_gguf: Path
) -> None:
    import gguf

    from frogdesk.logfile import route_library_logs
    from tests.support.tiny_qwen35 import write_tiny_qwen35

    route_library_logs(AppPaths.default().log_file)
    with pytest.MonkeyPatch.context() as patch:  # a GGUF naming no pre-tokenizer
        patch.setattr(gguf.GGUFWriter, "add_tokenizer_pre", lambda self, value: None)
        bare = write_tiny_qwen35(tmp_path / "tiny-qwen35-nopre-F16.gguf")
    control = await _notes_after_loading(qwen35_gguf, tmp_path)
    assert not any("pre-tokenizer" in n for n in control), control
    notes = await _notes_after_loading(bare, tmp_path)
    assert [n for n in notes if "pre-tokenizer" in n] == [
        "the model file names no pre-tokenizer this llama.cpp knows: it splits text a default "
        "way and the model may write worse (a newer GGUF of it may fix this)"
    ]
