"""Text from the model and the repository reaches the TUI as literal text: no markup, no actions.

A real session on the script backend replays replies an attacker would write: a Bash command
whose markup would turn the tool card's title into a click action, a file name that does the
same in the review list, and an ordinary command that happens to contain `[/]`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList
from textual.widgets._collapsible import CollapsibleTitle

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.review import ReviewScreen
from frogdesk.tui.screens.session import SessionScreen
from tests.support.pilot import wait_for
from tests.support.scripted import call, make_repo, write_script

pytestmark = pytest.mark.anyio


QUIT = "[@click=app.quit]"
COMMANDS = [
    f"{QUIT}ls[/]",
    "ls [#000000 on #000000]&& echo hidden[/]",
    "grep -n 'arr[/]' src.c; ls [abc]*",
]
FILE_NAME = f"{QUIT}notes[/].txt"
# Where a click lands on the command in a card's title, and on the name in the review list.
TITLE_CLICK = (9, 0)
LIST_CLICK = (5, 1)


def _replies() -> list[str]:
    return [
        *("Run.\n</think>\n\n" + call("Bash", command=command) for command in COMMANDS),
        "Note.\n</think>\n\n" + call("Write", file_path=FILE_NAME, content="x\n"),
        "Done \x1b]0;title\x07.\n</think>\n\nAll done \x1b]52;c;eA==\x07.",
    ]


def _app(repo: Path, script: Path, settings: Settings) -> FrogDeskApp:
    return FrogDeskApp(CoreWorkbench(repo, settings, script=script), settings)


async def test_tool_cards_and_review_list_show_markup_literally(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    replies = _replies()
    settings = Settings.of(backend="script", sandbox="none")
    app = _app(repo, write_script(tmp_path / "s.jsonl", replies), settings)
    # The none sandbox asks before each command; the answer is no, so nothing runs in the repo.
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press(*"go", "enter")
        for _ in range(3):
            await wait_for(pilot, lambda: app.screen is not screen, "the approval", 60)
            await pilot.press("n")
        await wait_for(
            pilot, lambda: screen.last_exit is not None and not screen.running, "the run", 60
        )
        # Reasoning and answer: escapes shown, none passed on raw.
        answer = screen.conversation.query(".content").last().source  # type: ignore[attr-defined]
        assert "All done \\x1b]52;c;eA==\\x07." in answer and "\x1b" not in answer
        reasoning = [str(s.render()) for s in screen.conversation.query(".reasoning-text")]
        assert any("Done \\x1b]0;title\\x07." in r for r in reasoning)
        assert not any("\x1b" in r for r in reasoning)
        cards = screen.conversation.cards
        first = cards[0]
        shown = [str(c.query_one(CollapsibleTitle).label) for c in cards]
        for title, command in zip(shown, COMMANDS, strict=False):
            assert title.startswith(f"Bash  {command}  · error")
        assert shown[3].startswith(f"Write  {FILE_NAME}  · ok")
        # The ordinary way to open a card is a click on its title (here on the command): it
        # opens, and nothing else happens.
        await pilot.click(first.query_one(CollapsibleTitle), offset=TITLE_CLICK)
        await wait_for(pilot, lambda: not first.collapsed, "the card to open")
        await pilot.pause(0.2)
        assert app.is_running

        await pilot.press("ctrl+r")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ReviewScreen) and bool(app.screen.views),
            "the review",
        )
        files = app.screen.query_one(OptionList)
        prompts = [str(files.get_option_at_index(i).prompt) for i in range(files.option_count)]
        assert any(FILE_NAME in p for p in prompts)
        await pilot.click(files, offset=LIST_CLICK)
        await pilot.pause(0.2)
        assert app.is_running


@pytest.mark.parametrize("where", ["card title", "file list"])
async def test_the_same_markup_as_a_markup_string_does_act(where: str) -> None:
    """Positive control: the title and the list entry as markup strings, clicked the same way, quit."""
    from textual.app import App, ComposeResult
    from textual.widget import Widget
    from textual.widgets import Collapsible
    from textual.widgets.option_list import Option

    class Bait(App[None]):
        def compose(self) -> ComposeResult:
            if where == "card title":
                yield Collapsible(title=f"Bash  {COMMANDS[0]}  · error")
            else:
                yield OptionList(Option(f"A {FILE_NAME}  +1 -0"))

    app = Bait()
    async with app.run_test(size=(80, 20)) as pilot:
        target: Widget = app.query_one(CollapsibleTitle if where == "card title" else OptionList)
        await pilot.click(target, offset=TITLE_CLICK if where == "card title" else LIST_CLICK)
        await wait_for(pilot, lambda: not app.is_running, "the injected quit")


async def test_approval_dialog_shows_escapes_and_warns(tmp_path: Path) -> None:
    """A command that would redraw the line is shown with its escapes and a warning."""
    from textual.widgets import Static

    from frogdesk.inert import COMMAND_WARNING
    from frogdesk.tui.screens.modals import ApproveCommandScreen

    spoof = "touch owned; #\x1b[2K\x1b[1G\r  ls -la"
    repo = make_repo(tmp_path)
    replies = ["Run.\n</think>\n\n" + call("Bash", command=spoof), "Done.\n</think>\n\nok"]
    settings = Settings.of(backend="script", sandbox="none")
    app = _app(repo, write_script(tmp_path / "s.jsonl", replies), settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"go", "enter")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, ApproveCommandScreen)
                and bool(app.screen.query(".dialog-buttons"))
            ),
            "the question",
        )
        texts = [str(s.render()) for s in app.screen.query(Static)]
        assert "touch owned; #\\x1b[2K\\x1b[1G\\r  ls -la" in texts
        assert COMMAND_WARNING in texts
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ApproveCommandScreen), "no")
    assert not (repo / "owned").exists()
