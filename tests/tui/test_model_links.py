"""A link in the model's answer is shown, never opened: a click does not reach the browser."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Markdown

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.session import SessionScreen
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo, write_script

pytestmark = pytest.mark.anyio

URL = "https://evil.example/steal?t=1"


async def test_a_clicked_link_in_the_answer_is_not_opened(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    script = write_script(tmp_path / "s.jsonl", [f"Done.\n</think>\n\nSee [the docs]({URL})."])
    settings = Settings.of(backend="script", sandbox="none")
    app = FrogDeskApp(CoreWorkbench(repo, settings, script=script), settings)
    opened: list[str] = []
    app.open_url = lambda url, *, new_tab=True: opened.append(url)  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press(*"go", "enter")
        await wait_for(
            pilot, lambda: screen.last_exit is not None and not screen.running, "the run", 60
        )
        answer = screen.conversation.query(Markdown).last()
        assert URL in answer.source
        # What a click on the link does: the Markdown block posts LinkClicked for its widget.
        answer.post_message(Markdown.LinkClicked(answer, URL))
        await wait_for(pilot, lambda: bool(app._notifications), "the link notice", 10)
        assert opened == []
        notice = list(app._notifications)[-1]
        assert URL in str(notice.message)

        # Positive control: a Markdown widget that opens links does reach open_url here.
        control = Markdown(f"[x]({URL})")
        await screen.conversation.mount(control)
        control.post_message(Markdown.LinkClicked(control, URL))
        await wait_for(pilot, lambda: opened == [URL], "the control's open_url", 10)
