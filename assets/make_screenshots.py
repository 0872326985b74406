"""Save each main screen of the TUI as SVG (Textual's save_screenshot) and convert it to PNG.

Run from the repository root: `python assets/make_screenshots.py`. PNG conversion uses
`rsvg-convert` (Debian/Ubuntu: librsvg2-bin) or, failing that, the cairosvg package.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "assets" / "screenshots"
SIZE = (120, 36)


def to_png(svg: Path) -> Path:
    """Convert one SVG to PNG beside it."""
    png = svg.with_suffix(".png")
    if shutil.which("rsvg-convert"):
        subprocess.run(["rsvg-convert", "--zoom", "1.0", str(svg), "-o", str(png)], check=True)
    else:
        import cairosvg  # type: ignore[import-not-found]

        cairosvg.svg2png(url=str(svg), write_to=str(png))
    return png


async def shoot(app: object, name: str, prepare: Callable[[object], Awaitable[None]]) -> Path:
    """Run the app headless, let `prepare` drive it, save the screen."""
    async with app.run_test(size=SIZE) as pilot:  # type: ignore[attr-defined]
        await prepare(pilot)
        await pilot.pause(0.3)
        svg = Path(app.save_screenshot(filename=f"{name}.svg", path=str(OUT)))  # type: ignore[attr-defined]
    return svg


async def main() -> None:
    """Every main screen, in the dark theme, plus the session screen in the light one."""
    os.environ["FROGDESK_HOME"] = tempfile.mkdtemp(prefix="frogdesk-shots-")
    os.environ["HF_HUB_OFFLINE"] = "1"
    sys.path.insert(0, str(ROOT))
    from frogdesk.config import Settings
    from frogdesk.core.workbench import CoreWorkbench
    from frogdesk.paths import AppPaths
    from frogdesk.sessions.record import SessionRecord
    from frogdesk.sessions.service import SessionService, SessionSpec
    from frogdesk.tui.app import FrogDeskApp
    from frogdesk.tui.screens.review import ReviewScreen
    from frogdesk.tui.screens.setup import ModelSetupScreen
    from tests.support.demo import demo_listing, mid_run
    from tests.support.scripted import call, make_repo, write_script
    from tests.support.workbench import ReplaySession, ReplayWorkbench

    OUT.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="frogdesk-shots-repo-"))
    shots: list[Path] = []

    async def nothing(pilot: object) -> None:
        await pilot.pause(0.5)  # type: ignore[attr-defined]

    settings = Settings()
    picker = FrogDeskApp(
        None,
        settings,
        first_screen=lambda app: ModelSetupScreen(settings, work, listed=demo_listing()),
    )
    shots.append(await shoot(picker, "picker", nothing))

    for theme in ("frogdesk-dark", "frogdesk-light"):
        record = SessionRecord("demo", "/repo", "/wt", "base", "make the tests pass", "script")
        session = ReplaySession(record, [mid_run()], pause_at=len(mid_run()) - 1, changed=1)
        app = FrogDeskApp(ReplayWorkbench(session), Settings(theme=theme))

        async def run_task(pilot: object) -> None:
            await pilot.press(*"make the tests in tests/test_calc.py pass", "enter")  # type: ignore[attr-defined]
            await pilot.pause(1.0)  # type: ignore[attr-defined]

        shots.append(await shoot(app, f"session-{theme.split('-')[1]}", run_task))
        session.gate.set()

    repo = make_repo(work)
    script = write_script(
        work / "replies.jsonl",
        [
            "Fix.\n</think>\n\n"
            + call(
                "Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"
            ),
            "Note.\n</think>\n\n" + call("Write", file_path="CHANGES.md", content="add() fixed\n"),
            "Done.\n</think>\n\nFixed add() and noted it in CHANGES.md.",
        ],
    )
    script_settings = Settings(backend="script")
    service = SessionService(AppPaths.default(), script_settings)
    active = service.start(SessionSpec("fix add()", repo, backend="script", script=str(script)))
    service.run(active)
    done = active.record
    review = FrogDeskApp(
        None,
        script_settings,
        first_screen=lambda app: ReviewScreen(
            CoreWorkbench(repo, script_settings, script=script), done.id, app.syntax_style
        ),
    )

    async def decide(pilot: object) -> None:
        await pilot.pause(1.0)  # type: ignore[attr-defined]
        await pilot.press("j", "a", "v")  # type: ignore[attr-defined]

    shots.append(await shoot(review, "review", decide))

    sessions = FrogDeskApp(CoreWorkbench(repo, script_settings, script=script), script_settings)

    async def open_list(pilot: object) -> None:
        await pilot.press("ctrl+s")  # type: ignore[attr-defined]
        await pilot.pause(1.0)  # type: ignore[attr-defined]

    shots.append(await shoot(sessions, "sessions", open_list))
    for svg in shots:
        print(to_png(svg).relative_to(ROOT))
        svg.unlink()  # the PNGs are what the README shows


if __name__ == "__main__":
    asyncio.run(main())
