"""The quant switch takes a .gguf path too, with the same cost announcement; offline it is the way."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.engine.backends import make_backend
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.quant import QuantSwitchScreen
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.widgets.model_rows import COLUMNS
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo

pytestmark = [pytest.mark.anyio, pytest.mark.llama, pytest.mark.slow]


async def test_a_path_given_in_the_quant_switch_is_loaded(
    tmp_path: Path, smollm2_gguf: Path, qwen35_quants: dict[str, Path]
) -> None:
    settings = Settings.of(context_size=1024)
    backend = make_backend(settings, model_path=smollm2_gguf)
    workbench = CoreWorkbench(make_repo(tmp_path), settings, backend=backend)
    app = FrogDeskApp(workbench, settings)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, QuantSwitchScreen), "the switch")
        picker = app.screen
        assert isinstance(picker, QuantSwitchScreen)
        cost = picker.query_one("#quant-cost", Static)
        field = picker.query_one("#quant-path", Input)
        await wait_for(pilot, lambda: "give a .gguf path" in str(cost.render()), "no models")
        assert field.has_focus and picker.models == []
        table = picker.query_one(DataTable)
        assert [str(c.label) for c in table.columns.values()] == list(COLUMNS)

        await pilot.press(*str(tmp_path / "missing.gguf"), "enter")
        await wait_for(pilot, lambda: "no such model file" in str(cost.render()), "the refusal")
        assert picker.announced is None

        field.value = str(qwen35_quants["Q4_0"])
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: "switching re-reads" in str(cost.render()), "the cost announcement", 60
        )
        assert picker.announced == qwen35_quants["Q4_0"]
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: screen.status.info.state == "ready" and "qwen35" in screen.status.info.model,
            "the switch",
            120,
        )
        assert workbench.backend is not None and workbench.backend is not backend
        workbench.backend.close()
