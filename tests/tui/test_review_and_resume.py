"""Review through Pilot on a real session (mixed decisions, conflicts, apply, undo, send back),
and resuming a stopped session after the app restarts."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TextArea

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.modals import ApproveCommandScreen, StopChoiceScreen
from frogdesk.tui.screens.review import CommentScreen, EditHunkScreen, ReviewScreen
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.screens.sessions import SessionsScreen
from tests.support.pilot import wait_for
from tests.support.scripted import call, fingerprint, make_repo, write_script

pytestmark = pytest.mark.anyio

EDIT_AND_WRITE = [
    "Fix add.\n</think>\n\n"
    + call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"),
    "Leave a note.\n</think>\n\n" + call("Write", file_path="CHANGES.md", content="add() fixed\n"),
    "Done.\n</think>\n\nFixed add() and noted it in CHANGES.md.",
]


def make_app(repo: Path, script: Path, tmp_path: Path) -> FrogDeskApp:
    settings = Settings.of(backend="script")
    return FrogDeskApp(
        CoreWorkbench(repo, settings, script=script), settings, config_path=tmp_path / "c.toml"
    )


async def run_task(app: FrogDeskApp, pilot: object, task: str) -> SessionScreen:
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    await pilot.press(*task, "enter")  # type: ignore[attr-defined]
    await wait_for(
        pilot, lambda: screen.last_exit is not None and not screen.running, "the run", 120
    )  # type: ignore[arg-type]
    return screen


async def test_review_mixed_decisions_conflict_apply_undo(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    script = write_script(tmp_path / "s.jsonl", EDIT_AND_WRITE)
    app = make_app(repo, script, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await run_task(app, pilot, "fix add")
        assert screen.status.info.changed_files == 2
        await pilot.press("ctrl+r")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ReviewScreen) and bool(app.screen.views),
            "the review",
        )
        review = app.screen
        assert isinstance(review, ReviewScreen)
        paths = [v.change.path for v in review.views]
        assert sorted(paths) == ["CHANGES.md", "calc.py"]
        # Approve calc.py, reject CHANGES.md, with single keys.
        for view in list(review.views):
            review._select(review.views.index(view))
            await pilot.press("a" if view.change.path == "calc.py" else "r")
        decisions = {v.change.path: v.decision for v in review.views}
        assert decisions == {"calc.py": "approved", "CHANGES.md": "rejected"}
        await pilot.press("v")  # side by side renders too
        assert all(v.split for v in review.views)
        # The user edits the same line meanwhile: apply is refused, the conflict shows inline.
        (repo / "calc.py").write_text("def add(a, b):\n    return b - a\n", encoding="utf-8")
        before_conflict = fingerprint(repo)
        await pilot.press("p")
        await wait_for(pilot, lambda: not review.busy and bool(review.last_report), "the apply")
        assert "refused" in review.last_report
        calc_view = next(v for v in review.views if v.change.path == "calc.py")
        assert calc_view.conflict
        assert fingerprint(repo) == before_conflict
        # Without the user's edit, the approved hunk (only) lands.
        (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
        review.last_report = ""
        await pilot.press("p")
        await wait_for(pilot, lambda: not review.busy and bool(review.last_report), "the apply")
        assert review.last_report.startswith("applied 1 file")
        assert (repo / "calc.py").read_text(encoding="utf-8").endswith("return a + b\n")
        assert not (repo / "CHANGES.md").exists()
        review.last_report = ""
        await pilot.press("u")
        await wait_for(pilot, lambda: not review.busy and bool(review.last_report), "the undo")
        assert (repo / "calc.py").read_text(encoding="utf-8").endswith("return a - b\n")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, "the session screen")


async def test_send_back_continues_the_session(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    replies = [*EDIT_AND_WRITE, "OK.\n</think>\n\nDropped the note as asked."]
    app = make_app(repo, write_script(tmp_path / "s.jsonl", replies), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await run_task(app, pilot, "fix add")
        await pilot.press("ctrl+r")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ReviewScreen) and bool(app.screen.views),
            "the review",
        )
        review = app.screen
        assert isinstance(review, ReviewScreen)
        for view in list(review.views):
            review._select(review.views.index(view))
            await pilot.press("a" if view.change.path == "calc.py" else "r")
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, CommentScreen), "the comment")
        screen.last_exit = None
        await pilot.press(*"no notes please", "enter")
        await wait_for(
            pilot,
            lambda: screen.last_exit is not None and not screen.running,
            "the continued run",
            120,
        )
        assert screen.last_exit is not None and screen.last_exit.exit_reason == "agent"
        assert screen.session is not None
        worktree = Path(screen.session.record.worktree)
        assert not (worktree / "CHANGES.md").exists()  # the rejected hunk was reverted
        assert screen.status.info.changed_files == 1


async def test_resume_after_restart(tmp_path: Path) -> None:
    from frogdesk.sandbox.levels import detect

    level, reason = detect("auto")
    if level == "none":
        pytest.skip(f"no sandbox on this machine: {reason}")
    repo = make_repo(tmp_path)
    replies = [
        "Look.\n</think>\n\n" + call("Read", file_path="calc.py"),
        "Wait.\n</think>\n\n" + call("Bash", command="sleep 300"),
        "Fix.\n</think>\n\n"
        + call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b"),
        "Done.\n</think>\n\nFixed.",
    ]
    script = write_script(tmp_path / "s.jsonl", replies)
    app = make_app(repo, script, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press(*"fix add", "enter")
        await wait_for(
            pilot,
            lambda: any(
                c.call.name == "Bash" and c.observation is None for c in screen.conversation.cards
            ),
            "the slow command",
            60,
        )
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: isinstance(app.screen, StopChoiceScreen), "the stop question", 60
        )
        await pilot.press("e")
        session_id = screen.session.record.id if screen.session else ""
    # A new app, as after a restart: the session is listed and resumes where it stopped.
    again = make_app(repo, script, tmp_path)
    async with again.run_test(size=(120, 40)) as pilot:
        screen = again.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press("ctrl+s")
        await wait_for(
            pilot,
            lambda: isinstance(again.screen, SessionsScreen) and bool(again.screen.summaries),
            "the list",
        )
        listing = again.screen
        assert isinstance(listing, SessionsScreen)
        assert [s.record.id for s in listing.summaries] == [session_id]
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: screen.session is not None and screen.status.info.state == "stopped by you",
            "resume",
        )
        await pilot.press("enter")  # empty prompt: continue
        await wait_for(
            pilot,
            lambda: screen.last_exit is not None and not screen.running,
            "the resumed run",
            120,
        )
        assert screen.last_exit is not None and screen.last_exit.exit_reason == "agent"
        # The stored conversation is shown first, then the resumed run's own call.
        assert [c.call.name for c in screen.conversation.cards] == ["Read", "Bash", "Edit"]
        assert screen.status.info.changed_files == 1


async def test_edited_hunk_is_what_lands(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    app = make_app(repo, write_script(tmp_path / "s.jsonl", EDIT_AND_WRITE), tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await run_task(app, pilot, "fix add")
        await pilot.press("ctrl+r")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ReviewScreen) and bool(app.screen.views),
            "the review",
        )
        review = app.screen
        assert isinstance(review, ReviewScreen)
        calc = next(v for v in review.views if v.change.path == "calc.py")
        review._select(review.views.index(calc))
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, EditHunkScreen), "the editor")
        editor = app.screen.query_one(TextArea)
        assert "return a + b" in editor.text
        editor.text = editor.text.replace("return a + b", "return b + a  # edited")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is review, "the review again")
        assert calc.decision == "approved" and calc.edited
        await pilot.press("p")
        await wait_for(pilot, lambda: not review.busy and bool(review.last_report), "the apply")
        assert (repo / "calc.py").read_text(encoding="utf-8").endswith("return b + a  # edited\n")
        assert not (repo / "CHANGES.md").exists()  # pending hunks are not applied


async def test_bash_approval_on_the_real_none_shell(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    replies = [
        "Run.\n</think>\n\n" + call("Bash", command="echo approved-run"),
        "Run again.\n</think>\n\n" + call("Bash", command="echo refused-run"),
        "Done.\n</think>\n\nOne ran, one was refused.",
    ]
    settings = Settings.of(backend="script", sandbox="none")
    script = write_script(tmp_path / "s.jsonl", replies)
    app = FrogDeskApp(CoreWorkbench(repo, settings, script=script), settings)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press(*"run things", "enter")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ApproveCommandScreen), "the first question", 60
        )
        assert isinstance(app.screen, ApproveCommandScreen) and "approved-run" in app.screen.command
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, ApproveCommandScreen) and "refused" in app.screen.command
            ),
            "the second question",
            60,
        )
        await pilot.press("n")
        await wait_for(
            pilot, lambda: screen.last_exit is not None and not screen.running, "the run", 60
        )
        first, second = screen.conversation.cards
        assert (
            first.observation is not None
            and "approved-run" in first.observation.split("STDOUT:")[1]
        )
        assert (
            second.observation is not None
            and "refused-run" not in second.observation.split("STDERR:")[0].split("STDOUT:")[-1]
        )
        assert screen.status.info.sandbox == "none"
