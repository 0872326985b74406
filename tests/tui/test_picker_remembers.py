"""The picker and the quant switch: the last model loaded on this machine is remembered and
loaded by the next start (unless the settings pin one), every model on disk is listed with
the Hub unreachable, and stored eval results are shown beside the measured drift."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from frogdesk.config import Settings
from frogdesk.core.last_model import remember, remembered, state_file
from frogdesk.evals.results import RAN, AttemptRecord, RunResult, TaskResult
from frogdesk.evals.store import EvalStore
from frogdesk.models.local import import_model
from frogdesk.models.switch_plan import SwitchPlan
from frogdesk.paths import AppPaths
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.quant import QuantSwitchScreen
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.screens.setup import ModelSetupScreen
from tests.support.hub_server import REPO, RunningHub
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo

pytestmark = [pytest.mark.anyio]
UNRESOLVABLE = "http://frogdesk-hub.invalid"


def _app(settings: Settings, repo: Path, tmp_path: Path) -> FrogDeskApp:
    return FrogDeskApp(
        None,
        settings,
        config_path=tmp_path / "config.toml",
        first_screen=lambda app: ModelSetupScreen(settings, repo),
    )


def _status(picker: ModelSetupScreen) -> str:
    return str(picker.query_one("#picker-status", Static).render())


def _cells(table: DataTable[object]) -> list[str]:
    return [str(c) for r in range(table.row_count) for c in table.get_row_at(r)]


def _store_eval(model: str, solved: list[bool], attempts: int = 1) -> None:
    """A finished eval run of `model` (a file name) in the real store."""
    run = RunResult(
        run_id="20261201T000000-abcd", suite="starter", layout="frogdesk", model=model,
        model_sha256="0" * 64, quant="", backend="llama", attempts=attempts, settings={},
        frogdesk_version="0", started="2026-12-01T00:00:00Z", finished="2026-12-01T01:00:00Z",
    )  # fmt: skip
    store = EvalStore(AppPaths.default().data_dir / "evals")
    for i, ok in enumerate(solved):
        records = [AttemptRecord(index=a, solved=ok and a == 0) for a in range(attempts)]
        result = TaskResult(f"task-{i}", RAN, "", records)
        run.tasks.append(result)
        store.save_task(run, result)
    store.save_run(run)


@pytest.mark.llama
async def test_the_model_loaded_is_remembered_and_loaded_next_time(
    tmp_path: Path, smollm2_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    own = tmp_path / "elsewhere" / smollm2_gguf.name
    own.parent.mkdir()
    shutil.copyfile(smollm2_gguf, own)
    settings = Settings.of(hf_endpoint=UNRESOLVABLE, context_size=2048)
    repo = make_repo(tmp_path)
    app = _app(settings, repo, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = app.screen
        assert isinstance(picker, ModelSetupScreen)
        await wait_for(pilot, lambda: picker.state == "failed", "the offline message", 30)
        assert any("Offline with no model" in line for line in picker.statuses)  # the control
        picker.query_one("#picker-local", Input).value = str(own)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session", 120)
    last = remembered(AppPaths.default())
    assert last is not None and last.path == own
    # the next start loads it at once: no listing, no path to type
    again = _app(settings, repo, tmp_path)
    async with again.run_test(size=(120, 40)) as pilot:
        picker = again.screen
        assert isinstance(picker, ModelSetupScreen)
        await wait_for(pilot, lambda: isinstance(again.screen, SessionScreen), "the session", 120)
        assert picker.model_path == own
        # read from the picker's record: its widgets are gone once the session replaces it
        assert not any("Offline with no model" in line for line in picker.statuses)


async def test_a_pinned_model_wins_and_the_disk_is_listed_with_the_hub_unreachable(
    tmp_path: Path, smollm2_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    paths = AppPaths.default()
    imported = import_model(smollm2_gguf, paths.models_dir)
    own = tmp_path / "elsewhere" / "Other-Model-Q8_0.gguf"
    own.parent.mkdir()
    shutil.copyfile(smollm2_gguf, own)
    remember(paths, own)
    _store_eval(imported.name, [True, True, False])
    pinned = Settings.of(model=f"{REPO}:Q4_K_M", hf_endpoint=UNRESOLVABLE, context_size=2048)
    app = _app(pinned, make_repo(tmp_path), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = app.screen
        assert isinstance(picker, ModelSetupScreen)
        await wait_for(pilot, lambda: picker.state == "picking", "the models on disk", 30)
        assert picker.model_path is None  # the pinned spec, not the remembered file
        status = _status(picker)
        assert status.startswith("The Hub is unreachable") and "\n" not in status.strip()
        assert "Offline with no model" not in status
        shown = {r.local_path.name for r in picker.rows if r.local_path is not None}
        assert shown == {imported.name, own.name}
        cells = _cells(picker.query_one(DataTable))
        assert any("not measured; solved 2/3 of starter" in c for c in cells), cells


async def test_a_remembered_file_that_is_gone_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    gone = tmp_path / "deleted-Q4_K_M.gguf"
    remember(AppPaths.default(), gone)
    assert json.loads(state_file(AppPaths.default()).read_text())["machines"]
    settings = Settings.of(hf_endpoint=UNRESOLVABLE, context_size=2048)
    app = _app(settings, make_repo(tmp_path), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = app.screen
        assert isinstance(picker, ModelSetupScreen)
        await wait_for(pilot, lambda: picker.state == "failed", "the offline message", 30)
        note = str(picker.query_one("#picker-warnings", Static).render())
        assert note == f"The last model used here, {gone.name}, is gone ({gone}); pick another."
        assert "Traceback" not in _status(picker) and picker.model_path is None


async def test_the_picker_lists_other_files_on_disk_beside_the_hub_quants(
    hub: RunningHub, tmp_path: Path, smollm2_gguf: Path
) -> None:
    imported = import_model(smollm2_gguf, AppPaths.default().models_dir)
    settings = Settings.of(model=f"{REPO}:Q4_K_M", hf_endpoint=hub.endpoint, context_size=2048)
    app = _app(settings, make_repo(tmp_path), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = app.screen
        assert isinstance(picker, ModelSetupScreen)
        await wait_for(pilot, lambda: picker.state == "picking", "the quant list", 60)
        assert any("Q4_K_M" in r.label and r.local_path is None for r in picker.rows)
        assert any(
            r.local_path is not None and r.local_path.name == imported.name for r in picker.rows
        )


async def test_the_quant_switch_shows_eval_results_beside_the_drift(
    tmp_path: Path, smollm2_gguf: Path
) -> None:
    imported = import_model(smollm2_gguf, AppPaths.default().models_dir)
    _store_eval(imported.name, [True, False, True, True], attempts=3)
    settings = Settings.of(context_size=2048)

    def price(path: Path) -> SwitchPlan:
        raise AssertionError("not asked")

    app = FrogDeskApp(None, settings, first_screen=lambda app: QuantSwitchScreen(settings, price))
    async with app.run_test(size=(160, 40)) as pilot:
        switch = app.screen
        assert isinstance(switch, QuantSwitchScreen)
        table = switch.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, "the model on disk")
        cells = _cells(table)
        assert any("solved 1/4 of starter (Avg@3), Pass@3 3/4" in c for c in cells), cells


@pytest.mark.llama
@pytest.mark.parametrize("given", [True, False])
async def test_the_default_spec_given_with_model_wins_over_the_remembered_file(
    tmp_path: Path, smollm2_gguf: Path, monkeypatch: pytest.MonkeyPatch, given: bool
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    own = tmp_path / "elsewhere" / smollm2_gguf.name
    own.parent.mkdir()
    shutil.copyfile(smollm2_gguf, own)
    remember(AppPaths.default(), own)
    settings = Settings.of(hf_endpoint=UNRESOLVABLE, context_size=2048)  # the default spec
    picker = ModelSetupScreen(settings, make_repo(tmp_path), model_given=given)
    app = FrogDeskApp(
        None, settings, config_path=tmp_path / "config.toml", first_screen=lambda _: picker
    )
    async with app.run_test(size=(120, 40)) as pilot:
        if given:  # `frogdesk --model <the default spec>`: the user's choice, not the last file
            await wait_for(pilot, lambda: picker.state == "picking", "the models on disk", 30)
            assert picker.model_path is None
        else:  # the control: nothing named, so the file used here last is loaded
            await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session", 120)
            assert picker.model_path == own
