"""Every screen that shows outside text sends the terminal none of its escapes.

Each test renders a real screen fed text an attacker controls (a repository's file names and
contents, the model's reply, an endpoint's error, a session record on disk) and reads what a
full redraw would write to the terminal. Each has a control: the same text through a plain
Rich `Text` or markdown-it's default parser does carry the escape, so the check can see one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from rich.text import Text
from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Button, DataTable, Label, Markdown, Static

from frogdesk.attempts.record import AttemptResult, AttemptsOutcome
from frogdesk.attempts.verify import CheckResult, detect_check
from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.engine.chat import ContentDelta
from frogdesk.leaf.events import LoopEvent
from frogdesk.paths import AppPaths
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.attempts import (
    AttemptDiffScreen,
    AttemptsRequest,
    AttemptsScreen,
    AttemptsSetupScreen,
)
from frogdesk.tui.screens.help import HelpScreen
from frogdesk.tui.screens.modals import ApproveCommandScreen, ConfirmScreen
from frogdesk.tui.screens.review import UNEDITABLE_HUNK, editable_text
from frogdesk.tui.screens.sessions import SessionsScreen
from frogdesk.tui.widgets.conversation import Conversation
from frogdesk.worktree.checkout import create_worktree
from tests.support.pilot import wait_for
from tests.support.scripted import make_repo
from tests.support.terminal import foreign_controls, screen_output

pytestmark = pytest.mark.anyio

LINK = "\x1b]8;;https://evil.invalid/\x1b\\CLICK\x1b]8;;\x1b\\"
TITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J\x1b[31m"
RLO = "\u202e"
NAME_LINK = "\x1b]8;;evil.invalid\x1b\\CLICK\x1b]8;;\x1b\\"  # no slash: a file name
QUIT = "[@click=app.quit]"


class _Shows(App[None]):
    """An app whose only screen shows one widget."""

    def __init__(self, make: Callable[[], ComposeResult]) -> None:
        super().__init__()
        self.make = make

    def compose(self) -> ComposeResult:
        yield from self.make()


async def test_the_check_can_see_an_escape_in_plain_rich_text() -> None:
    """The control: a Rich Text is no markup, but it passes ESC and U+202E through."""
    app = _Shows(lambda: iter([Static(Text(f"a{LINK}b{RLO}c"))]))
    async with app.run_test(size=(80, 10)):
        found = foreign_controls(app)
    assert "\x1b" in found and RLO in found


class _Attempts:
    """Just what the attempts screen asks of a workbench: one finished attempt and its patch."""

    def run_attempts(
        self,
        task: str,
        n: int,
        check: str,
        operator: object,
        cancel: threading.Event,
        on_event: Callable[[int, LoopEvent], None],
    ) -> AttemptsOutcome:
        check_result = CheckResult(check, 1, f"FAILED {TITLE}", 0.5)
        attempt = AttemptResult(
            0,
            "20260101-000000-abcdef",
            1,
            "llm_query_error",
            error=f"HTTP 500: {CLEAR}endpoint",
            final_message=f"Done.{RLO}gnp.exe {LINK}",
            check=check_result,
        )
        return AttemptsOutcome((attempt,), check, f"tests/test_{LINK}.py found")

    def attempt_patch(self, session_id: str) -> str:
        return f"+++ b/evil\n+{TITLE}\x1b[1A\x1b[2Kline from the file\n"


async def test_attempt_screens_show_file_names_replies_errors_and_patches_inert(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / f"test_{NAME_LINK}.py").write_text("")  # a file name in the repository
    found = detect_check(repo)
    assert found is not None and "\x1b" in found.reason
    setup = AttemptsSetupScreen(3, found.command, found.reason)
    app = FrogDeskApp(None, Settings.of(backend="script"), first_screen=lambda _: setup)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: app.screen is setup, "the setup dialog")
        assert foreign_controls(app) == []
        assert "test_\\x1b]8;;evil.invalid\\x1b" in screen_output(app)
        app.pop_screen()
        screen = AttemptsScreen(
            _Attempts(),  # type: ignore[arg-type]
            f"task {TITLE}",
            AttemptsRequest(1, "pytest -q"),
            lambda _: False,
        )
        await app.push_screen(screen)
        await wait_for(pilot, lambda: screen.outcome is not None, "the attempts")
        await pilot.pause()
        shown = screen_output(app)
        assert foreign_controls(app) == []
        assert "HTTP 500: \\x1b[2J" in shown and "Done.\\u202egnp.exe" in shown
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptDiffScreen), "the diff")
        await pilot.pause()
        assert foreign_controls(app) == []
        assert "+\\x1b]0;owned\\x07\\x1b[1A" in screen_output(app)


async def test_a_character_reference_in_the_reply_stays_as_typed() -> None:
    """markdown-it would turn `&#x202e;` into a real override after inert_text let it pass."""
    reply = "Saved as invoice_&#x202E;fdp.exe and ran &#x2066;it&#x2069;; see &#8238;moc."
    control = MarkdownIt("gfm-like").render(reply)
    assert RLO in control and "\u2066" in control  # the default parser decodes them

    app = _Shows(lambda: iter([Conversation("monokai", id="c")]))
    async with app.run_test(size=(120, 20)) as pilot:
        await app.query_one(Conversation).apply([ContentDelta(reply)])
        await wait_for(pilot, lambda: bool(app.query(Markdown)), "the reply")
        await pilot.pause()
        shown = screen_output(app)
        assert foreign_controls(app) == []
    assert "invoice_&#x202E;fdp.exe" in shown and "&#8238;moc." in shown


def test_a_hunk_the_editor_would_show_wrongly_is_not_editable() -> None:
    assert editable_text(b"x = 1\r\n\ty = 2\n") == "x = 1\r\n\ty = 2\n"  # CRLF and tabs: fine
    assert editable_text("naïve = 'é'\n".encode()) == "naïve = 'é'\n"
    for hostile in (
        b"x = 1  # \x1b]0;owned\x1b\\\x1b[1A\n",  # an escape the text area would draw raw
        b"ok\rhidden\n",  # a lone carriage return
        "evil\u202etxt\n".encode(),  # a bidi override
        b"caf\xe9\n",  # Latin-1: decoding would replace the byte, saving would write U+FFFD
    ):
        assert editable_text(hostile) is None, hostile
    assert "not UTF-8" in UNEDITABLE_HUNK


def _tampered_session(repo: Path, tmp_path: Path) -> str:
    """A session whose record on disk says something no FrogDesk wrote."""
    store = SessionStore(AppPaths.default().sessions_dir)
    session_id = "20260101-000000-abc123"
    wt = create_worktree(repo, tmp_path / "worktrees", session_id)
    store.create(SessionRecord(session_id, str(repo), str(wt.path), wt.base_commit, "t", "m"))
    path = store.session_dir(session_id) / "session.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["status"], data["exit_reason"] = "finished", f"[reverse]TAMPERED[/]{TITLE}{QUIT}x"
    path.write_text(json.dumps(data), encoding="utf-8")
    return session_id


async def test_a_tampered_session_record_is_listed_as_text(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    _tampered_session(repo, tmp_path)
    settings = Settings.of(backend="script")
    workbench = CoreWorkbench(repo, settings, script=tmp_path / "none.jsonl")
    app = FrogDeskApp(None, settings, first_screen=lambda _: SessionsScreen(workbench))
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, SessionsScreen)
                and app.screen.query_one(DataTable).row_count == 1
            ),
            "the list",
        )
        await pilot.pause()
        shown = screen_output(app)
        assert foreign_controls(app) == []
        assert "[reverse]TAMPERED[/]\\x1b]0;owned\\x07[@click=app.quit]" in shown


async def test_a_question_and_button_labels_are_never_markup() -> None:
    question = f"Discard session {QUIT}x[/] ({TITLE})?"
    app = FrogDeskApp(
        None, Settings.of(backend="script"), first_screen=lambda _: ConfirmScreen(question)
    )
    async with app.run_test(size=(120, 20)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.pause()
        label = app.screen.query_one(Label)
        assert str(label.render()) == f"Discard session {QUIT}x[/] (\\x1b]0;owned\\x07)?"
        buttons = [str(b.label) for b in app.screen.query(Button)]
        assert buttons == ["Yes [y]", "No [n]"]  # as plain strings, "[y]" was taken for a tag
        assert foreign_controls(app) == []
        await pilot.click(label, offset=(17, 0))  # where "[@click" would have made a link
        await pilot.pause()
        assert app.is_running
    assert Content.from_markup("Yes [y]").plain == "Yes "  # the control: markup eats it


async def test_the_help_title_names_the_keys_table() -> None:
    app = FrogDeskApp(None, Settings.of(backend="script"), first_screen=lambda _: HelpScreen([]))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await pilot.pause()
        assert "remap them under [keys] in config.toml" in screen_output(app)


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("rm -rf ./build\U000e0020\U000e002f", "rm -rf ./build\\U000e0020\\U000e002f"),
        ("ls\u00a0-la /", "ls\\xa0-la /"),
        ("echo \u061cok", "echo \\u061cok"),
    ],
)
async def test_the_approval_dialog_shows_hidden_characters_and_warns(
    command: str, shown: str
) -> None:
    app = FrogDeskApp(
        None, Settings.of(backend="script"), first_screen=lambda _: ApproveCommandScreen(command)
    )
    async with app.run_test(size=(140, 20)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ApproveCommandScreen), "it")
        await pilot.pause()
        output = screen_output(app)
    assert shown in output and "warning: this command contains" in output
