"""The session screen through Pilot: streaming, tool cards, stop, approval, keys, themes."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets._collapsible import CollapsibleTitle

from frogdesk import config
from frogdesk.config import Settings
from frogdesk.core.ports import SessionSummary
from frogdesk.engine.chat import ContentDelta
from frogdesk.leaf.events import RunFinished, StepStarted
from frogdesk.sessions.record import SessionRecord
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.help import HelpScreen
from frogdesk.tui.screens.modals import ApproveCommandScreen, StopChoiceScreen
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.widgets.conversation import ReasoningView
from frogdesk.tui.widgets.prompt_input import PromptInput
from tests.support.pilot import scripted_run, wait_for
from tests.support.workbench import ReplaySession, ReplayWorkbench

pytestmark = pytest.mark.anyio

RECORD = SessionRecord("s1", "/repo", "/wt", "base", "fix app.py", "script")


def make_app(
    session: ReplaySession, tmp_path: Path, **settings: object
) -> tuple[FrogDeskApp, ReplayWorkbench]:
    workbench = ReplayWorkbench(session)
    app = FrogDeskApp(workbench, Settings.of(**settings), config_path=tmp_path / "config.toml")  # type: ignore[arg-type]
    return app, workbench


def screen_of(app: FrogDeskApp) -> SessionScreen:
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    return screen


async def test_full_run_shows_reasoning_content_cards_and_status(tmp_path: Path) -> None:
    session = ReplaySession(RECORD, [scripted_run()], changed=1)
    app, workbench = make_app(session, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"fix app.py", "enter")
        screen = screen_of(app)
        await wait_for(
            pilot,
            lambda: screen.status.info.state == "finished: final answer" and not screen.running,
            "the run to end",
        )
        assert workbench.tasks == ["fix app.py"] and session.prompts == ["fix app.py"]
        cards = screen.conversation.cards
        assert [c.call.name for c in cards] == ["Edit", "Bash"]
        assert all(c.observation is not None and c.has_class("-ok") for c in cards)
        assert cards[0].title.startswith("Edit  app.py  · ok")
        reasoning = screen.query_one(ReasoningView)
        assert reasoning.text == "The bug is in app.py; x should be 2."
        info = screen.status.info
        assert (info.step, info.context_used, info.changed_files, info.tokens_per_second) == (
            3,
            1110,
            1,
            18.0,  # the last reply: 9 tokens after its first in 0.5 s
        )
        assert (info.model, info.quant, info.sandbox) == ("FrogNano-4B", "Q4_K_M", "bwrap")
        assert screen.query_one(PromptInput).has_focus
        # Observation expands on demand; the Edit card carries a diff.
        assert cards[0].collapsed
        await pilot.click(cards[0].query_one(CollapsibleTitle))
        await wait_for(pilot, lambda: not cards[0].collapsed, "the card to expand")
        assert cards[0].query(".tool-diff")


async def test_stop_mid_generation_then_continue_and_guidance(tmp_path: Path) -> None:
    first = [
        StepStarted(0),
        ContentDelta("Looking"),
        ContentDelta(" around"),
        RunFinished("agent", "never"),
    ]
    session = ReplaySession(
        RECORD, [first, [StepStarted(1), RunFinished("agent", "ok", n_steps=2)]], pause_at=2
    )
    app, _ = make_app(session, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"task", "enter")
        screen = screen_of(app)
        await wait_for(pilot, lambda: screen.status.info.state == "generating", "generation")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StopChoiceScreen), "the stop question")
        assert screen.last_exit is not None and screen.last_exit.exit_reason == "cancelled"
        await pilot.press("c")
        await wait_for(
            pilot,
            lambda: screen.status.info.state == "finished: final answer" and not screen.running,
            "the continued run",
        )
        assert session.prompts == ["task", ""]
        # Stop again (nothing queued: the run ends at once), answer with guidance this time.
        session.runs.append([StepStarted(2), ContentDelta("x"), RunFinished("agent", "ok")])
        session.pause_at = 1
        await pilot.press(*"more", "enter")
        await wait_for(pilot, lambda: screen.status.info.state == "generating", "generation")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: isinstance(app.screen, StopChoiceScreen), "the stop question")
        await pilot.press("g", *"use pathlib", "enter")
        await wait_for(
            pilot,
            lambda: not screen.running and session.prompts[-1] == "use pathlib",
            "guidance run",
        )
        assert session.prompts == ["task", "", "more", "use pathlib"]
        assert screen.query_one(PromptInput).history[-1] == "use pathlib"


async def test_bash_needs_approval_without_sandbox(tmp_path: Path) -> None:
    session = ReplaySession(RECORD, [scripted_run(), scripted_run()])
    app, workbench = make_app(session, tmp_path)
    workbench.level = "none"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = screen_of(app)
        await pilot.press(*"go", "enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ApproveCommandScreen), "the approval question"
        )
        assert isinstance(app.screen, ApproveCommandScreen)
        assert app.screen.command == "python -c 'print(1)'"
        await pilot.press("y")
        await wait_for(pilot, lambda: not screen.running, "the run")
        assert session.answers == [True]
        assert "none (asks)" in str(screen.status.render())
        await pilot.press(*"again", "enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ApproveCommandScreen), "the approval question"
        )
        await pilot.press("n")
        await wait_for(pilot, lambda: not screen.running, "the run")
        assert session.answers == [True, False]
        refused = screen.conversation.cards[-1]
        assert refused.observation == "refused by the user" and refused.has_class("-error")


async def test_worker_failure_is_shown_and_the_screen_stays_usable(tmp_path: Path) -> None:
    session = ReplaySession(RECORD, [scripted_run()])
    app, workbench = make_app(session, tmp_path)
    workbench.fail_with = "not a git repository"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = screen_of(app)
        await pilot.press(*"go", "enter")
        await wait_for(pilot, lambda: screen.status.info.state == "error", "the error")
        notices = [str(n.render()) for n in screen.query(".notice.-error")]
        assert any("not a git repository" in n for n in notices)
        workbench.fail_with = ""
        await pilot.press(*"go", "enter")
        await wait_for(
            pilot,
            lambda: screen.status.info.state == "finished: final answer",
            "a run after the error",
        )


async def test_prompt_history_recalls_with_up_and_down(tmp_path: Path) -> None:
    session = ReplaySession(RECORD, [[RunFinished("agent", "a")], [RunFinished("agent", "b")]])
    app, _ = make_app(session, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = screen_of(app)
        for text in ["first", "second"]:
            await pilot.press(*text, "enter")
            await wait_for(
                pilot, lambda: not screen.running and screen.last_exit is not None, "the run"
            )
            screen.last_exit = None
        prompt = screen.query_one(PromptInput)
        await pilot.press(*"dra")
        await pilot.press("up")
        assert prompt.value == "second"
        await pilot.press("up", "up")
        assert prompt.value == "first"
        await pilot.press("down", "down")
        assert prompt.value == "dra"


async def test_theme_switch_is_live_and_saved(tmp_path: Path) -> None:
    app, _ = make_app(ReplaySession(RECORD, []), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.theme == "frogdesk-dark" and app.syntax_style == "monokai"
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.theme == "frogdesk-light" and app.has_class("-theme-frogdesk-light")
        assert app.syntax_style == "friendly"
    assert config.read_file(tmp_path / "config.toml") == {"theme": "frogdesk-light"}
    reopened, _ = make_app(ReplaySession(RECORD, []), tmp_path, theme="frogdesk-light")
    async with reopened.run_test(size=(120, 40)):
        assert reopened.theme == "frogdesk-light"


async def test_keys_are_remappable_and_help_shows_them(tmp_path: Path) -> None:
    session = ReplaySession(RECORD, [scripted_run()])
    app, _ = make_app(session, tmp_path, keys={"reasoning": "f6", "bogus": "x"})
    async with app.run_test(size=(120, 40)) as pilot:
        screen = screen_of(app)
        await pilot.press(*"go", "enter")
        await wait_for(
            pilot, lambda: not screen.running and screen.last_exit is not None, "the run"
        )
        view = screen.query_one(ReasoningView)
        assert not view.collapsed
        await pilot.press("f6")
        assert view.collapsed
        await pilot.press("ctrl+e")  # the old key no longer does it
        assert view.collapsed
        assert any("bogus" in error for error in app.keymap_errors)
        screen.query_one(PromptInput).blur()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        assert isinstance(app.screen, HelpScreen)
        rows = dict((what, key) for key, what in app.screen.rows)
        assert rows["Reasoning"] == "f6" and rows["Stop"] == "esc"
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the help to close")


async def test_command_palette_lists_every_action(tmp_path: Path) -> None:
    app, _ = make_app(ReplaySession(RECORD, []), tmp_path)
    async with app.run_test(size=(120, 40)):
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Stop", "Review", "Quant", "Sessions", "Reasoning", "Help", "Theme"} <= titles


async def test_an_unexpected_worker_failure_is_shown(tmp_path: Path) -> None:
    class BrokenListing(ReplayWorkbench):
        def sessions(self) -> list[SessionSummary]:
            raise OSError("sessions folder unreadable")

    app = FrogDeskApp(BrokenListing(ReplaySession(RECORD, [])), Settings())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+s")
        await wait_for(
            pilot,
            lambda: any("sessions folder unreadable" in str(n.message) for n in app._notifications),
            "the error notification",
        )
