"""The review screen as a person reads it: coloured line changes, every whole-file change spelled
out (symlink targets, modes, binary sizes), and a footer whose labels are never cut."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from frogdesk.config import Settings
from frogdesk.core.workbench import CoreWorkbench
from frogdesk.paths import AppPaths
from frogdesk.sessions.record import SessionRecord, SessionSpec
from frogdesk.sessions.service import SessionService
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.screens.review import ReviewScreen
from frogdesk.tui.themes import diff_colours, frog_themes
from frogdesk.tui.widgets.diff_render import diff_rows, split_table, unified_table, word_spans
from tests.support.pilot import wait_for
from tests.support.scripted import call, git, make_repo, write_script

pytestmark = pytest.mark.anyio


def _session(tmp_path: Path, replies: list[str]) -> tuple[SessionService, SessionRecord]:
    repo = make_repo(tmp_path)
    settings = Settings.of(backend="script")
    service = SessionService(AppPaths.default(), settings)
    script = write_script(tmp_path / "s.jsonl", replies)
    active = service.start(SessionSpec("fix add", repo, backend="script", script=str(script)))
    service.run(active)
    return service, active.record


def _review_app(service: SessionService, record: SessionRecord, theme: str) -> FrogDeskApp:
    return FrogDeskApp(
        None,
        Settings.of(theme=theme),
        first_screen=lambda app: ReviewScreen(
            CoreWorkbench(Path(record.repo), service.settings, paths=service.paths),
            record.id,
            app.syntax_style,
        ),
    )


FIX = "Fix.\n</think>\n\n" + call(
    "Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b"
)


@pytest.mark.parametrize("width", [80, 140])
async def test_footer_labels_fit_whole(tmp_path: Path, width: int) -> None:
    service, record = _session(tmp_path, [FIX, "Done.\n</think>\n\nFixed."])
    app = _review_app(service, record, "frogdesk-dark")
    async with app.run_test(size=(width, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: bool(screen.views), "the diff")
        footer = screen.query_one(Footer)
        await wait_for(
            pilot, lambda: any(k.region.width for k in footer.query(FooterKey)), "the footer"
        )

        def fits() -> bool:
            shown = [k for k in footer.query(FooterKey) if k.display and k.region.width]
            return {"Help", "Approve"} <= {k.description for k in shown} and all(
                k.region.height == 1 and k.region.right <= width for k in shown
            )

        await wait_for(pilot, fits, "every shown footer label to fit")
        assert footer.region.height == 1
        keys = list(footer.query(FooterKey))
        for key in keys:
            label = f"{key.key_display} {key.description}".strip()
            shown = key.render_line(0).text.strip()
            if not key.display:
                continue  # hidden whole; Help lists it
            # A label that is shown is shown whole, on one line, inside the screen.
            assert key.region.height == 1 and key.region.right <= width, (label, key.region)
            assert shown == label, (shown, label)


async def test_whole_file_hunks_show_targets_modes_and_sizes(tmp_path: Path) -> None:
    replies = [
        FIX,
        "Link.\n</think>\n\n" + call("Bash", command="ln -s ../../etc/passwd evil_link"),
        "Mode.\n</think>\n\n" + call("Bash", command="chmod +x test_calc.py"),
        "Blob.\n</think>\n\n" + call("Bash", command="head -c 300 /dev/zero > blob.bin"),
        "Done.\n</think>\n\nDone.",
    ]
    service, record = _session(tmp_path, replies)
    # Commands need a sandbox or an approval; when neither ran them, make the same changes here.
    worktree = Path(record.worktree)
    if not (worktree / "blob.bin").exists():
        os.symlink("../../etc/passwd", worktree / "evil_link")
        (worktree / "test_calc.py").chmod(0o755)
        (worktree / "blob.bin").write_bytes(b"\0" * 300)
    git(worktree, "status", "--porcelain")
    app = _review_app(service, record, "frogdesk-dark")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        # each view draws itself when mounted, after the list of views is made
        await wait_for(pilot, lambda: drawn(screen) >= 4, "the diff drawn")
        shown = {
            view.change.path: _plain(view.content)
            for view in screen.views
            if view.hunk.kind != "text"
        }
    assert "symlink -> ../../etc/passwd" in shown["evil_link"]
    assert "mode 100644 -> 100755" in shown["test_calc.py"]
    assert "300 bytes" in shown["blob.bin"]


async def test_a_theme_switch_repaints_the_open_review(tmp_path: Path) -> None:
    service, record = _session(tmp_path, [FIX, "Done.\n</think>\n\nFixed."])
    app = _review_app(service, record, "frogdesk-dark")
    dark = diff_colours(frog_themes()["frogdesk-dark"].theme)
    light = diff_colours(frog_themes()["frogdesk-light"].theme)
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: drawn(screen) > 0, "the diff drawn")
        view = screen.views[0]
        # Control: the hunk is painted in the dark theme's colours first.
        assert dark.added in _plain_html(view.content)
        assert light.added not in _plain_html(view.content)
        app.action_toggle_theme()
        await pilot.pause()
        await wait_for(pilot, lambda: light.added in _plain_html(view.content), "light colours")
        assert dark.added not in _plain_html(view.content)
        assert view.style_name == frog_themes()["frogdesk-light"].syntax_style


def _plain_html(renderable: object) -> str:
    console = Console(width=200, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_html(inline_styles=True)


def drawn(screen: ReviewScreen) -> int:
    """How many hunk views have drawn themselves (all of them, or none)."""
    views = screen.views
    return len(views) if views and all(_plain(v.content).strip() for v in views) else 0


def _plain(renderable: object) -> str:
    console = Console(width=200, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def _backgrounds(text: Text) -> set[str]:
    found: set[str] = set()
    for span in text.spans:
        style = Style.parse(span.style) if isinstance(span.style, str) else span.style
        if style.bgcolor is not None and style.bgcolor.triplet is not None:
            found.add(style.bgcolor.triplet.hex)
    return found


def test_rows_pair_edited_lines_and_words() -> None:
    old = ["def add(a, b):", "    return a - b", "x = 1", "gone()"]
    new = ["def add(a, b):", "    return a + b", "x = 1"]
    kinds = [(r.kind, r.old, r.new) for r in diff_rows(old, new)]
    assert kinds == [
        ("context", 0, 0),
        ("changed", 1, 1),
        ("context", 2, 2),
        ("removed", 3, None),
    ]
    assert word_spans(old[1], new[1]) == ([(13, 14)], [(13, 14)])
    assert word_spans("abc", "xyz") == ([], [])  # unrelated lines: no word highlight


@pytest.mark.parametrize("theme", ["frogdesk-dark", "frogdesk-light"])
@pytest.mark.parametrize("draw", [unified_table, split_table])
def test_both_layouts_paint_lines_and_changed_words(theme: str, draw: object) -> None:
    colours = diff_colours(frog_themes()[theme].theme)
    style = frog_themes()[theme].syntax_style
    old = ["    return a - b", "x = 1"]
    new = ["    return a + b", "x = 1"]
    table = draw(old, new, (1, 1), "python", style, colours)  # type: ignore[operator]
    console = Console(width=100, record=True, color_system="truecolor", file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(table)
    html = console.export_html(inline_styles=True, clear=False)
    for colour in (colours.removed, colours.added, colours.removed_word, colours.added_word):
        assert f"background-color: {colour}" in html, (colour, theme)
    # The unchanged line has no line colour.
    lines = console.export_text().splitlines()
    assert any("x = 1" in line for line in lines)


def test_fitting_labels_keeps_order_and_help() -> None:
    from frogdesk.tui.widgets.fitting_footer import fitting_labels

    assert fitting_labels([10, 10, 10, 6], 35, {3}) == {0, 1, 3}
    assert fitting_labels([10, 30, 5, 6], 40, {3}) == {0, 3}  # no gaps: order is kept
    assert fitting_labels([10, 10], 100, set()) == {0, 1}
