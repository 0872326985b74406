"""Switching quant during a session: the cost is announced, the new model loads, the conversation stays."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.engine.backends import make_backend
from frogdesk.models.local import import_model
from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.quant import QuantSwitchScreen
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.screens.sessions import SessionsScreen
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo

pytestmark = [pytest.mark.anyio, pytest.mark.llama, pytest.mark.slow]


async def test_switch_announces_cost_and_keeps_the_conversation(
    tmp_path: Path, smollm2_gguf: Path, qwen35_quants: dict[str, Path]
) -> None:
    models_dir = AppPaths.default().models_dir
    import_model(smollm2_gguf, models_dir)
    target = import_model(qwen35_quants["Q4_0"], models_dir)
    settings = Settings.of(context_size=1024)
    backend = make_backend(settings, model_path=smollm2_gguf)
    workbench = CoreWorkbench(make_repo(tmp_path), settings, backend=backend)
    app = FrogDeskApp(workbench, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await screen.conversation.add_user("an earlier prompt stays on screen")
        assert "SmolLM2" in screen.status.info.model
        await pilot.press("ctrl+o")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, QuantSwitchScreen) and bool(app.screen.models),
            "models",
        )
        picker = app.screen
        assert isinstance(picker, QuantSwitchScreen)
        names = [m.path.name for m in picker.models]
        assert sorted(names) == sorted([smollm2_gguf.name, target.name])
        table = picker.query_one(DataTable)
        table.move_cursor(row=names.index(target.name))
        await pilot.press("enter")
        cost = picker.query_one("#quant-cost", Static)
        await wait_for(
            pilot, lambda: "switching re-reads" in str(cost.render()), "the cost announcement", 60
        )
        assert picker.announced == target
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (
                screen.status.info.state == "ready" and "SmolLM2" not in screen.status.info.model
            ),
            "the switch",
            120,
        )
        assert workbench.backend is not backend and workbench.backend is not None
        assert "qwen35" in screen.status.info.model.lower()
        texts = [str(w.render()) for w in screen.conversation.query(".user-prompt, .notice")]
        assert any("an earlier prompt stays on screen" in t for t in texts)
        switched = [t.split("Switched to ", 1)[1] for t in texts if "Switched to" in t]
        assert switched and all("/" not in t.split(";")[0] for t in switched), switched
        assert workbench.backend is not None
        workbench.backend.close()


async def pick_and_switch(app: FrogDeskApp, pilot: Pilot[None], target: Path) -> None:
    """Ctrl+O, the target row, Enter for the cost, Enter to switch; waits for the new model."""
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    await pilot.press("ctrl+o")
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, QuantSwitchScreen) and bool(app.screen.models),
        "models",
    )
    picker = app.screen
    assert isinstance(picker, QuantSwitchScreen)
    names = [m.path.name for m in picker.models]
    picker.query_one(DataTable).move_cursor(row=names.index(target.name))
    await pilot.press("enter")
    await wait_for(pilot, lambda: picker.announced == target, "the cost announcement", 60)
    await pilot.press("enter")
    await wait_for(
        pilot,
        lambda: screen.status.info.state == "ready" and target.stem in screen.status.info.model,
        "the switch",
        120,
    )


async def test_switch_is_recorded_in_the_session_record(
    tmp_path: Path, smollm2_gguf: Path, qwen35_quants: dict[str, Path]
) -> None:
    paths = AppPaths.default()
    first = import_model(smollm2_gguf, paths.models_dir)
    q4 = import_model(qwen35_quants["Q4_0"], paths.models_dir)
    q8 = import_model(qwen35_quants["Q8_0"], paths.models_dir)
    settings = Settings.of(context_size=4096, max_steps=1, max_tokens_per_turn=4)
    repo = make_repo(tmp_path)
    store = SessionStore(paths.sessions_dir)

    # A session that ran in this app: the switch re-reads its conversation on the new model.
    workbench = CoreWorkbench(repo, settings, backend=make_backend(settings, model_path=first))
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
        assert store.get(session_id).model == settings.model
        await pick_and_switch(app, pilot, q4)
        assert store.get(session_id).model == str(q4)
        assert screen.session.record.model == str(q4)
    assert workbench.backend is not None
    workbench.backend.close()

    # The same session opened after a restart, on the first model: the switch is recorded too.
    workbench = CoreWorkbench(repo, settings, backend=make_backend(settings, model_path=first))
    app = FrogDeskApp(workbench, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press("ctrl+s")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionsScreen) and bool(app.screen.summaries),
            "the list",
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.session is not None, "the opened session")
        await pick_and_switch(app, pilot, q8)
        assert store.get(session_id).model == str(q8)
    assert workbench.backend is not None
    workbench.backend.close()
