"""The session's drafting counts in the status bar: per drafter, summed, kept by a resumed session."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.engine.chat import ContentDelta, Usage
from frogdesk.leaf.events import RunFinished, StepStarted, StepUsage
from frogdesk.paths import AppPaths
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.session import SessionScreen
from tests.support.pilot import wait_for
from tests.support.workbench import ReplaySession, ReplayWorkbench
from tests.tui.test_open_sessions import headless_session, open_from_list

pytestmark = pytest.mark.anyio

RECORD = SessionRecord("s1", "/repo", "/wt", "base", "copy a file", "llama")


def drafted_run() -> list[object]:
    """Two replies: the n-gram drafter alone, then both drafters."""
    return [
        StepStarted(0),
        ContentDelta("Copying."),
        StepUsage(
            0,
            Usage(
                500,
                500,
                0,
                41,
                decode_seconds=2.0,
                drafted_tokens=20,
                accepted_tokens=16,
                drafted_by={"ngram": 20},
                accepted_by={"ngram": 16},
            ),
        ),
        StepStarted(1),
        ContentDelta("Done."),
        StepUsage(
            1,
            Usage(
                600,
                100,
                500,
                11,
                decode_seconds=0.5,
                drafted_tokens=10,
                accepted_tokens=6,
                drafted_by={"ngram": 6, "mtp": 4},
                accepted_by={"ngram": 5, "mtp": 1},
            ),
        ),
        RunFinished("agent", "Done.", n_steps=2),
    ]


async def test_status_bar_sums_drafts_per_drafter_and_shows_the_decode_rate(
    tmp_path: Path,
) -> None:
    session = ReplaySession(RECORD, [drafted_run()])  # type: ignore[list-item]
    app = FrogDeskApp(ReplayWorkbench(session), Settings(), config_path=tmp_path / "c.toml")
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press(*"copy a file", "enter")
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await wait_for(
            pilot, lambda: not screen.running and screen.status.info.step == 2, "the run"
        )
        info = screen.status.info
        assert (info.drafted, info.accepted) == (30, 22)
        assert info.by_drafter == (("mtp", 4, 1), ("ngram", 26, 21))
        # the last reply: 10 tokens after its first in 0.5 s (accepted drafts counted once)
        assert info.tokens_per_second == 20.0
        line = str(screen.status.render())
        assert "20.0 tok/s (drafts 22/30 accepted: mtp 1/4, ngram 21/26)" in line


async def test_an_opened_session_shows_its_stored_drafts(
    tmp_path: Path,
) -> None:
    repo, script, session_id = headless_session(tmp_path)
    store = SessionStore(AppPaths.default().sessions_dir)
    record = store.get(session_id)
    assert record.drafts == {}  # the script backend drafts nothing
    record.drafts = {"ngram": {"drafted": 40, "accepted": 31}, "mtp": {"drafted": 8, "accepted": 2}}
    store.update(record)
    settings = Settings.of(backend="script")
    app = FrogDeskApp(CoreWorkbench(repo, settings, script=script), settings)
    async with app.run_test(size=(160, 40)) as pilot:
        first = app.screen
        assert isinstance(first, SessionScreen) and first.status.info.drafted == 0
        screen = await open_from_list(app, pilot, session_id)
        info = screen.status.info
        assert (info.drafted, info.accepted) == (48, 33)
        assert info.by_drafter == (("mtp", 8, 2), ("ngram", 40, 31))
        assert "drafts 33/48 accepted: mtp 2/8, ngram 31/40" in str(screen.status.render())
