"""The Sessions screen opens any session: a finished one shows its conversation, is reviewed
and continues with a new message; one made by `frogdesk run` opens the same way."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from textual.widgets import DataTable, Markdown

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.review import ReviewScreen
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.screens.sessions import SessionsScreen
from tests.support.pilot import wait_for
from tests.support.scripted import call, frogdesk, make_repo, write_script

pytestmark = pytest.mark.anyio

FIX_THEN_ANSWER = [
    "Fix add.\n</think>\n\n"
    + call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"),
    "Done.\n</think>\n\nFixed add().",
    "Checked.\n</think>\n\nThe test passes now.",
]


def headless_session(tmp_path: Path) -> tuple[Path, Path, str]:
    """A session made and finished by `frogdesk run`, in a subprocess."""
    repo = make_repo(tmp_path)
    script = write_script(tmp_path / "s.jsonl", FIX_THEN_ANSWER)
    done = frogdesk("run", "fix add", "--repo", str(repo), "--script", str(script), "--json")
    assert done.returncode == 0, done.stderr
    return repo, script, json.loads(done.stdout)["session_id"]


async def open_from_list(app: FrogDeskApp, pilot: object, session_id: str) -> SessionScreen:
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    await pilot.press("ctrl+s")  # type: ignore[attr-defined]
    await wait_for(
        pilot,  # type: ignore[arg-type]
        lambda: isinstance(app.screen, SessionsScreen) and bool(app.screen.summaries),
        "the list",
    )
    listing = app.screen
    assert isinstance(listing, SessionsScreen)
    assert [s.record.id for s in listing.summaries] == [session_id]
    row = listing.query_one(DataTable).get_row_at(0)
    assert str(row[1]) == "finished: final answer"  # inert text, not markup
    await pilot.press("enter")  # type: ignore[attr-defined]
    await wait_for(
        pilot,  # type: ignore[arg-type]
        lambda: screen.session is not None and screen.status.info.state == "finished: final answer",
        "the opened session",
    )
    return screen


def shown_texts(screen: SessionScreen) -> list[str]:
    """The user turns, notices and replies on screen, in order."""
    out = []
    for widget in screen.conversation.query(".user-prompt, .notice, .content"):
        source = widget.source if isinstance(widget, Markdown) else None
        out.append(source if source is not None else str(widget.render()))
    return out


async def test_finished_session_opens_is_reviewed_and_continues(tmp_path: Path) -> None:
    repo, script, session_id = headless_session(tmp_path)
    store = SessionStore(AppPaths.default().sessions_dir)
    before = store.read_transcript(session_id)
    settings = Settings.of(backend="script")
    app = FrogDeskApp(CoreWorkbench(repo, settings, script=script), settings)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_from_list(app, pilot, session_id)
        assert [c.call.name for c in screen.conversation.cards] == ["Edit"]
        texts = shown_texts(screen)
        assert texts[0] == "fix add"
        assert any("Fixed add()" in t for t in texts)
        assert not any("Error" in t for t in texts)

        await pilot.press("ctrl+r")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ReviewScreen) and bool(app.screen.views),
            "the review",
        )
        review = app.screen
        assert isinstance(review, ReviewScreen)
        assert [v.change.path for v in review.views] == ["calc.py"]
        await pilot.press("a", "p")
        await wait_for(pilot, lambda: "applied" in review.last_report.lower(), "the apply")
        assert "return a + b" in (repo / "calc.py").read_text(encoding="utf-8")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, "back to the session")

        await pilot.press(*"does the test pass?", "enter")
        await wait_for(
            pilot, lambda: screen.last_exit is not None and not screen.running, "the new turn", 120
        )
        assert screen.last_exit is not None and screen.last_exit.exit_reason == "agent"
        assert any("The test passes now." in t for t in shown_texts(screen))

    after = store.read_transcript(session_id)
    assert after.messages == before.messages and after.steps[:2] == before.steps
    assert [f.message.content for f in after.followups] == ["does the test pass?"]
    assert after.followups[0].before_step == 2 and len(after.steps) == 3
    assert after.conversation()[: len(before.conversation())] == before.conversation()
    assert store.get(session_id).status == "finished"


async def test_an_empty_prompt_on_a_finished_session_asks_for_a_message(tmp_path: Path) -> None:
    repo, script, session_id = headless_session(tmp_path)
    settings = Settings.of(backend="script")
    app = FrogDeskApp(CoreWorkbench(repo, settings, script=script), settings)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_from_list(app, pilot, session_id)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.status.info.state == "error", "the refusal")
        assert any("write a message to continue it" in t for t in shown_texts(screen))
    transcript = SessionStore(AppPaths.default().sessions_dir).read_transcript(session_id)
    assert len(transcript.steps) == 2 and not transcript.followups


async def test_a_session_another_process_runs_is_not_discarded(tmp_path: Path) -> None:
    repo, script, session_id = headless_session(tmp_path)
    store = SessionStore(AppPaths.default().sessions_dir)
    worktree = Path(store.get(session_id).worktree)
    runner = subprocess.Popen(["sleep", "300"])
    try:
        record = store.get(session_id)
        record.status, record.pid = "running", runner.pid
        store.update(record)

        refused = frogdesk("sessions", "discard", session_id)
        assert refused.returncode != 0 and "is running" in refused.stderr, refused.stderr
        assert worktree.is_dir()

        settings = Settings.of(backend="script")
        app = FrogDeskApp(CoreWorkbench(repo, settings, script=script), settings)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("ctrl+s")
            await wait_for(
                pilot,
                lambda: isinstance(app.screen, SessionsScreen) and bool(app.screen.summaries),
                "the list",
            )
            await pilot.press("d")
            await pilot.pause()
            await pilot.press("y")
            await wait_for(
                pilot,
                lambda: any("is running" in str(n.message) for n in app._notifications),
                "the refusal",
            )
        assert worktree.is_dir() and store.get(session_id).status == "running"
    finally:
        runner.kill()
        runner.wait()
    # Control: once that process is gone the same discard goes through.
    done = frogdesk("sessions", "discard", session_id)
    assert done.returncode == 0, done.stderr
    assert not worktree.exists() and store.get(session_id).status == "discarded"
