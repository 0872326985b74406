"""The attempts screen through Pilot on real sessions (script backend, real git, real sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import Input, Static

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.attempts import AttemptDiffScreen, AttemptsScreen, AttemptsSetupScreen
from frogdesk.tui.screens.review import ReviewScreen
from frogdesk.tui.screens.session import SessionScreen
from tests.attempts.scripts import CHECK, three_scripts
from tests.support.pilot import wait_for
from tests.support.scripted import fingerprint, make_repo

pytestmark = pytest.mark.anyio


def make_app(repo: Path, scripts: list[Path], tmp_path: Path, attempts: int = 1) -> FrogDeskApp:
    settings = Settings.of(backend="script", attempts=attempts)
    bench = CoreWorkbench(repo, settings, script=scripts[0], attempt_scripts=scripts)
    return FrogDeskApp(bench, settings, config_path=tmp_path / "c.toml")


def card(screen: AttemptsScreen, position: int) -> str:
    content = screen.query_one(f"#card-{position}", Static).content
    assert isinstance(content, Text)
    return content.plain


async def start_attempts(app: FrogDeskApp, pilot: object, check: str | None) -> AttemptsScreen:
    assert isinstance(app.screen, SessionScreen)
    await pilot.press(*"fix add", "ctrl+n")  # type: ignore[attr-defined]
    await wait_for(pilot, lambda: isinstance(app.screen, AttemptsSetupScreen), "the setup")  # type: ignore[arg-type]
    setup = app.screen
    assert isinstance(setup, AttemptsSetupScreen)
    assert setup.query_one("#attempts-n", Input).value == "3"
    if check is not None:
        setup.query_one("#attempts-check", Input).value = check
    await pilot.press("enter")  # type: ignore[attr-defined]
    await wait_for(pilot, lambda: isinstance(app.screen, AttemptsScreen), "the attempts")  # type: ignore[arg-type]
    screen = app.screen
    assert isinstance(screen, AttemptsScreen)
    await wait_for(pilot, lambda: screen.outcome is not None, "the attempts to end", 120)  # type: ignore[arg-type]
    return screen


async def test_ranked_side_by_side_diff_and_review_of_the_pick(
    tmp_path: Path, sandboxed_bash: str
) -> None:
    repo = make_repo(tmp_path)
    before = fingerprint(repo)
    app = make_app(repo, three_scripts(tmp_path), tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await start_attempts(app, pilot, CHECK)
        assert screen.outcome is not None and screen.outcome.ranked
        first = card(screen, 0)
        assert first.startswith("#1") and "check passed" in first and "Added." in first
        assert "1 files, +1 -1" in first and "2 steps" in first
        assert "check failed" in card(screen, 1) and "check failed" in card(screen, 2)
        await pilot.press("d")
        assert isinstance(app.screen, AttemptDiffScreen)
        assert "+    return a + b" in app.screen.patch
        await pilot.press("escape")
        await pilot.press("right")
        assert screen.selected == 1
        await pilot.press("left", "k")  # the best one, others discarded
        assert screen.keep_others is False
        chosen = screen.outcome.attempts[0].session_id
        others = [a.session_id for a in screen.outcome.attempts[1:]]
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen), "the review")
        review = app.screen
        assert isinstance(review, ReviewScreen) and review.session_id == chosen
        await wait_for(pilot, lambda: bool(review.views), "the hunks")
        assert [v.change.path for v in review.views] == ["calc.py"]
        bench = app.workbench
        assert isinstance(bench, CoreWorkbench)
        assert [bench.service.store.get(i).status for i in others] == ["discarded"] * 2
    assert fingerprint(repo) == before


async def test_without_a_check_it_says_it_compares(tmp_path: Path, sandboxed_bash: str) -> None:
    repo = make_repo(tmp_path)
    app = make_app(repo, three_scripts(tmp_path), tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await start_attempts(app, pilot, "")
        header = screen.query_one("#attempts-header", Static).content
        assert isinstance(header, Text) and "not ranked" in header.plain
        assert [card(screen, i).split()[0:2] for i in range(3)] == [
            ["attempt", "1"],
            ["attempt", "2"],
            ["attempt", "3"],
        ]
        assert all("no check" in card(screen, i) for i in range(3))


async def test_setup_shows_the_detected_check_and_the_default_n(
    tmp_path: Path, sandboxed_bash: str
) -> None:
    repo = make_repo(tmp_path)
    app = make_app(repo, three_scripts(tmp_path), tmp_path, attempts=2)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press(*"fix add", "ctrl+n")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptsSetupScreen), "the setup")
        setup = app.screen
        assert isinstance(setup, AttemptsSetupScreen)
        assert setup.query_one("#attempts-n", Input).value == "2"
        assert setup.query_one("#attempts-check", Input).value.startswith("python3 -m pytest")
        setup.query_one("#attempts-n", Input).value = "99"
        await pilot.press("enter")
        assert isinstance(app.screen, AttemptsSetupScreen)  # refused, with a reason
        await pilot.press("escape")
        assert isinstance(app.screen, SessionScreen)
