"""Switching quant during a session: the cost is announced, the new model loads, the conversation stays."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from frogdesk.config import Settings
from frogdesk.engine.backends import make_backend
from frogdesk.models.local import import_model
from frogdesk.paths import AppPaths
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.core import CoreWorkbench
from frogdesk.tui.screens.quant import QuantSwitchScreen
from frogdesk.tui.screens.session import SessionScreen
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo

pytestmark = [pytest.mark.anyio, pytest.mark.llama, pytest.mark.slow]


async def test_switch_announces_cost_and_keeps_the_conversation(
    tmp_path: Path, smollm2_gguf: Path, qwen35_quants: dict[str, Path]
) -> None:
    models_dir = AppPaths.default().models_dir
    import_model(smollm2_gguf, models_dir)
    target = import_model(qwen35_quants["Q4_0"], models_dir)
    settings = Settings(context_size=1024)
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
        assert any("Switched to" in t for t in texts)
        assert workbench.backend is not None
        workbench.backend.close()
