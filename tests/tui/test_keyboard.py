"""The app's keys through Pilot: from any field, tool cards, stop, quitting, queued messages,
the palette, the help's order and a new session."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Footer, Input, Static
from textual.widgets._footer import FooterKey

from frogdesk.config import Settings
from frogdesk.core.status import ending_words
from frogdesk.engine.chat import ContentDelta
from frogdesk.leaf.events import RunFinished, StepStarted
from frogdesk.sessions.record import SessionRecord
from frogdesk.tui.app import FrogCommands, FrogDeskApp, QuitQuestion
from frogdesk.tui.screens.help import TEXT_EDITING, HelpScreen
from frogdesk.tui.screens.modals import StopChoiceScreen
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.screens.setup import ModelSetupScreen
from frogdesk.tui.widgets.conversation import ReasoningView
from frogdesk.tui.widgets.prompt_input import PromptInput
from frogdesk.tui.widgets.queued import QueuedMessages
from tests.support.demo import demo_listing
from tests.support.pilot import scripted_run, wait_for
from tests.support.workbench import ReplaySession, ReplayWorkbench

pytestmark = pytest.mark.anyio

RECORD = SessionRecord("s1", "/repo", "/wt", "base", "fix app.py", "script")
SIZE = (120, 40)


def make_app(
    session: ReplaySession, repo: Path | None = None
) -> tuple[FrogDeskApp, ReplayWorkbench]:
    workbench = ReplayWorkbench(session)
    return FrogDeskApp(workbench, Settings(), repo=repo), workbench


def screen_of(app: FrogDeskApp) -> SessionScreen:
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    return screen


def paused_run() -> ReplaySession:
    """A run that generates, then waits at its gate (or for a stop)."""
    run = [
        StepStarted(0),
        ContentDelta("Looking"),
        ContentDelta(" around"),
        RunFinished("agent", "done"),
    ]
    return ReplaySession(RECORD, [run], pause_at=2)


async def run_to_end(pilot: Pilot[None], screen: SessionScreen, task: str) -> None:
    await pilot.press(*task, "enter")
    await wait_for(
        pilot, lambda: not screen.running and screen.last_exit is not None, "the run to end"
    )


async def test_help_and_reasoning_keys_work_from_the_focused_prompt() -> None:
    app, _ = make_app(ReplaySession(RECORD, [scripted_run()]))
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        prompt = screen.query_one(PromptInput)
        await run_to_end(pilot, screen, "go")
        assert prompt.has_focus
        view = screen.query_one(ReasoningView)
        assert not view.collapsed
        await pilot.press("ctrl+e")  # Input's own Ctrl+E (end of line) must not eat it
        assert view.collapsed and prompt.has_focus
        await pilot.press("question_mark")  # an empty field: `?` types nothing, so it helps
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await pilot.press("question_mark")  # and closes it again
        await wait_for(pilot, lambda: app.screen is screen, "the help to close")
        await pilot.press(*"why", "question_mark")  # in text, `?` is a character
        await pilot.pause()
        assert prompt.value == "why?" and app.screen is screen
        await pilot.press("f1")  # not text: always the help
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help by F1")
        assert prompt.value == "why?"


async def test_help_key_works_from_the_pickers_empty_path_field(tmp_path: Path) -> None:
    settings = Settings()
    app = FrogDeskApp(
        None,
        settings,
        first_screen=lambda app: ModelSetupScreen(settings, tmp_path, listed=demo_listing()),
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: getattr(app.screen, "state", "") == "picking", "the list")
        picker = app.screen
        field = picker.query_one("#picker-local", Input)
        field.focus()
        await pilot.pause()
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        assert field.value == ""
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is picker, "the help to close")
        await pilot.press(*"/models/a", "question_mark")
        await pilot.pause()
        assert field.value == "/models/a?" and app.screen is picker


async def test_card_keys_move_between_tool_cards_past_the_reasoning() -> None:
    app, _ = make_app(ReplaySession(RECORD, [scripted_run()]))
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await run_to_end(pilot, screen, "go")
        first, last = screen.conversation.cards
        reasoning = screen.query_one(ReasoningView)

        def in_card() -> object:
            focused = app.focused
            assert focused is not None and focused not in reasoning.walk_children()
            return next((c for c in (first, last) if focused in c.walk_children()), None)

        await pilot.press("ctrl+up")  # from the prompt: the newest card
        assert in_card() is last
        await pilot.press("ctrl+up")
        assert in_card() is first
        await pilot.press("ctrl+up")  # the first stays
        assert in_card() is first
        await pilot.press("enter")  # the focused card opens
        await wait_for(pilot, lambda: not first.collapsed, "the card to open")
        await pilot.press("ctrl+down")
        assert in_card() is last
        await pilot.press("ctrl+down")  # past the last: back to typing
        assert screen.query_one(PromptInput).has_focus


async def test_escape_in_the_stop_question_goes_back_and_changes_nothing() -> None:
    session = paused_run()
    session.runs.append([StepStarted(1), RunFinished("agent", "ok", n_steps=2)])
    app, _ = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press(*"task", "enter")
        await wait_for(pilot, lambda: screen.status.info.state == "generating", "generation")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StopChoiceScreen), "the question")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, "the question to close")
        assert screen.status.info.state == ending_words("cancelled") != "ended"
        assert screen.query_one(PromptInput).has_focus and session.prompts == ["task"]
        # Still stopped, not ended: Enter on the empty prompt continues it.
        await pilot.press("enter")
        await wait_for(pilot, lambda: session.prompts == ["task", ""], "the continued run")


async def test_stop_question_end_key_still_ends() -> None:
    app, _ = make_app(paused_run())
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press(*"task", "enter")
        await wait_for(pilot, lambda: screen.status.info.state == "generating", "generation")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StopChoiceScreen), "the question")
        await pilot.press("e")
        await wait_for(pilot, lambda: screen.status.info.state == "ended", "the end")


async def test_ctrl_c_twice_quits_and_once_only_warns() -> None:
    app, _ = make_app(ReplaySession(RECORD, []))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert any("Ctrl+C again to quit" in str(n.message) for n in app._notifications)
        app.disarm_quit()  # what the timer does once the moment has passed
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running  # a lone press after the moment only warns again
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")


async def test_ctrl_c_stops_a_run_rather_than_quitting() -> None:
    app, _ = make_app(paused_run())
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press(*"task", "enter")
        await wait_for(pilot, lambda: screen.status.info.state == "generating", "generation")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: isinstance(app.screen, StopChoiceScreen), "the question")
        assert app.is_running


async def test_ctrl_q_asks_before_quitting_while_the_model_works() -> None:
    session = paused_run()
    app, _ = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press(*"task", "enter")
        await wait_for(pilot, lambda: screen.status.info.state == "generating", "generation")
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitQuestion), "the question")
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is screen, "the question to close")
        assert app.is_running and screen.running
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitQuestion), "the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")


async def test_ctrl_q_quits_at_once_when_nothing_runs() -> None:
    app, _ = make_app(ReplaySession(RECORD, []))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, "the app to quit")


async def test_a_message_typed_while_the_model_works_is_queued_then_sent() -> None:
    session = paused_run()
    app, _ = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        prompt = screen.query_one(PromptInput)
        await pilot.press(*"task", "enter")
        await wait_for(pilot, lambda: screen.status.info.state == "generating", "generation")
        typed = "also [bold]x[/]"
        await pilot.press(*"draft", "enter")
        await pilot.pause()
        queue = screen.query_one(QueuedMessages)
        assert queue.texts == ["draft"] and prompt.value == ""
        # Up in the empty prompt takes it back to edit; Enter queues the edited text.
        await pilot.press("up")
        assert prompt.value == "draft" and queue.texts == []
        prompt.value = ""
        await pilot.press(*typed, "enter")
        await pilot.pause()
        assert queue.texts == [typed]
        shown = [str(line.render()) for line in queue.query(Static)]
        assert len(shown) == 1 and shown[0].endswith(typed)  # as typed, no markup read
        session.gate.set()
        await wait_for(pilot, lambda: session.prompts == ["task", typed], "the queued send")
        await wait_for(pilot, lambda: not screen.running, "the second run")
        assert queue.texts == [] and not queue.query(Static)
        users = [str(s.render()) for s in screen.conversation.query(".user-prompt")]
        assert users == ["task", typed]


async def test_a_stop_puts_the_queued_message_back_into_the_prompt() -> None:
    session = paused_run()
    app, _ = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press(*"task", "enter")
        await wait_for(pilot, lambda: screen.status.info.state == "generating", "generation")
        await pilot.press(*"later", "enter")
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, StopChoiceScreen), "the question")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, "the question to close")
        assert screen.query_one(PromptInput).value == "later"
        assert screen.query_one(QueuedMessages).texts == [] and session.prompts == ["task"]


async def test_the_palette_lists_each_action_once_and_searches_descriptions() -> None:
    app, _ = make_app(ReplaySession(RECORD, []))
    async with app.run_test(size=SIZE):
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert titles.count("Theme") == 1
        assert len(titles) == len(set(titles))
        provider = FrogCommands(app.screen)
        found = [str(hit.match_display) async for hit in provider.search("change")]
        assert "Theme" in found
        found = [str(hit.match_display) async for hit in provider.search("fresh task")]
        assert found == ["New"]
        found = [str(hit.match_display) async for hit in provider.search("revi")]
        assert found[0] == "Review"  # a name match still ranks first


async def test_the_footer_shows_each_key_once() -> None:
    app, _ = make_app(ReplaySession(RECORD, []))
    async with app.run_test(size=SIZE) as pilot:
        footer = app.screen.query_one(Footer)
        await wait_for(pilot, lambda: bool(footer.query(FooterKey)), "the footer")
        await pilot.pause()
        shown = [k.key for k in footer.query(FooterKey) if k.display]
        assert shown.count("ctrl+p") == 1, shown  # the palette key, docked at the right
        assert len(shown) == len(set(shown)), shown


async def test_help_lists_the_apps_keys_first_and_text_editing_last() -> None:
    app, _ = make_app(ReplaySession(RECORD, []))
    async with app.run_test(size=SIZE) as pilot:
        assert screen_of(app).query_one(PromptInput).has_focus
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        headings = [heading for heading, _ in help_screen.groups]
        assert headings[0] == "This screen" and headings[1] == "Everywhere"
        assert headings[-1] == TEXT_EDITING
        first = dict((what, key) for key, what in help_screen.groups[0][1])
        assert {"Stop", "Review", "Reasoning", "New", "Prev card", "Next card"} <= set(first)
        assert (first["Prev card"], first["Next card"]) == ("^↑", "^↓")
        editing = [what for _, what in help_screen.groups[-1][1]]
        assert len(editing) > 10 and "Stop" not in editing


async def test_new_session_key_opens_a_fresh_prompt_on_the_same_repository(
    tmp_path: Path,
) -> None:
    session = ReplaySession(RECORD, [scripted_run(), [RunFinished("agent", "ok")]])
    app, workbench = make_app(session, repo=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: bool(screen.query(".notice")), "the repository line")
        first_notice = str(screen.query(".notice").first().render())
        assert first_notice.startswith(f"Repository: {tmp_path}")
        await run_to_end(pilot, screen, "first task")
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: app.screen is not screen, "a new screen")
        fresh = screen_of(app)
        assert fresh.session is None and fresh.conversation.cards == []
        assert fresh.workbench is workbench and fresh.repo == tmp_path
        await wait_for(pilot, lambda: bool(fresh.query(".notice")), "the repository line")
        assert fresh.query_one(PromptInput).has_focus
        await run_to_end(pilot, fresh, "second task")
        assert workbench.tasks == ["first task", "second task"]
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert "New" in titles


async def test_new_session_waits_for_the_model() -> None:
    app, _ = make_app(paused_run())
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_of(app)
        await pilot.press(*"task", "enter")
        await wait_for(pilot, lambda: screen.status.info.state == "generating", "generation")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert app.screen is screen and screen.running
