"""The status bar in a small terminal: the important fields first and whole, the rest where
there is room, laid out again on resize; a long prefill's progress; a fresh rate per session."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from rich.cells import cell_len

from frogdesk.config import Settings
from frogdesk.engine.chat import BackendInfo, Usage
from frogdesk.leaf.events import RunFinished, StepStarted, StepUsage
from frogdesk.sessions.record import SessionRecord
from frogdesk.tui.app import FrogDeskApp
from frogdesk.tui.messages import QuantSwitched, SessionOpened
from frogdesk.tui.screens.session import SessionScreen
from frogdesk.tui.widgets.status_bar import StatusBar, StatusInfo, format_status
from tests.support.pilot import wait_for
from tests.support.workbench import ReplaySession, ReplayWorkbench

pytestmark = pytest.mark.anyio

RECORD = SessionRecord("s1", "/repo", "/wt", "base", "fix app.py", "script")
DRAFTED = Usage(
    900,
    900,
    0,
    60,
    decode_seconds=0.5,
    drafted_tokens=40,
    accepted_tokens=31,
    drafted_by={"ngram": 40},
    accepted_by={"ngram": 31},
)

BUSY = StatusInfo(
    "FrogNano-4B",
    "Q4_K_M",
    "GPU 20/33 layers",
    "bwrap",
    12500,
    131072,
    7,
    150,
    111.6,
    3,
    "finished: final answer",
    drafted=40,
    accepted=31,
    by_drafter=(("ngram", 30, 25), ("mtp", 10, 6)),
    dialect="qwen3_coder_xml",
)


def shown(bar: StatusBar) -> str:
    """The bar's line, checked to fit the bar whole (nothing cut at the right edge)."""
    line = bar.content.plain  # type: ignore[union-attr]
    assert cell_len(line) <= bar.content_size.width, line
    return line


def screen_of(app: FrogDeskApp) -> SessionScreen:
    screen = app.screen
    assert isinstance(screen, SessionScreen)
    return screen


def test_every_width_keeps_the_essentials_in_order_and_whole() -> None:
    for width in (64, 78, 100, 118, 138, 200):
        line = format_status(BUSY, width).plain
        assert cell_len(line) <= width, (width, line)
        fields = line.split(" │ ")
        assert fields[0].startswith("FrogN") and fields[0].endswith("Q4_K_M")
        assert fields[1].startswith("finish")
        assert fields[2].startswith("ctx 12") and fields[3] == "step 7/150"
        assert fields[4] in ("3 files changed", "3 changed")
    assert "111.6 tok/s" in format_status(BUSY, 118).plain
    assert "XML calls" not in format_status(BUSY, 138).plain  # the least important goes first
    assert format_status(BUSY, 78).plain.startswith("FrogNano-4B Q4_K_M │ finished: final")


async def test_the_bar_fits_80_columns_and_shows_more_when_widened(tmp_path: Path) -> None:
    run = [StepStarted(0), StepUsage(0, DRAFTED), RunFinished("agent", "done", n_steps=1)]
    workbench = ReplayWorkbench(ReplaySession(RECORD, [run], changed=3))
    app = FrogDeskApp(workbench, Settings(), config_path=tmp_path / "config.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"fix app.py", "enter")
        screen = screen_of(app)
        await wait_for(pilot, lambda: not screen.running and screen.status.info.drafted, "the run")
        await pilot.pause()
        narrow = shown(screen.status)
        for part in ("FrogNano-4B Q4_K_M", "finished", "ctx 960/", "step 1/150", "3 "):
            assert part in narrow, narrow
        assert "drafts" not in narrow
        await pilot.resize_terminal(140, 24)
        await wait_for(pilot, lambda: "tok/s" in shown(screen.status), "the wider layout")
        wide = shown(screen.status)
        assert "3 files changed" in wide and "118.0 tok/s" in wide
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: shown(screen.status) == narrow, "the narrow layout again")


async def test_after_a_quant_switch_the_bar_names_the_model_not_its_path(tmp_path: Path) -> None:
    workbench = ReplayWorkbench(ReplaySession(RECORD, []))
    app = FrogDeskApp(workbench, Settings(), config_path=tmp_path / "config.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = screen_of(app)
        path = "/home/someone/.local/share/frogdesk/models/FrogNano-4B-Q8_0.gguf"
        screen.post_message(QuantSwitched(BackendInfo("llama", path, "Q8_0", "CPU", 4096)))
        await wait_for(pilot, lambda: screen.status.info.quant == "Q8_0", "the switch")
        await pilot.pause()
        line = shown(screen.status)
        assert line.startswith("FrogNano-4B-Q8_0 │ ready │ ctx 0/")
        assert "/home" not in line and "0 files changed" in line


async def test_a_long_prefill_shows_tokens_read_rate_and_time_left(tmp_path: Path) -> None:
    run = [StepStarted(0), StepUsage(0, DRAFTED), RunFinished("agent", "done", n_steps=1)]
    session = ReplaySession(RECORD, [run], pause_at=1)  # paused in step 1's prefill
    workbench = ReplayWorkbench(session)
    app = FrogDeskApp(workbench, Settings(), config_path=tmp_path / "config.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = screen_of(app)
        now = [100.0]
        screen.buffer.clock = lambda: now[0]
        await pilot.press(*"fix app.py", "enter")
        await wait_for(
            pilot,
            lambda: screen.status.info.state == "generating" and workbench.prefill_heard,
            "the run's prefill hook",
        )
        heard = workbench.prefill_heard
        assert heard is not None

        def engine(done: int, total: int) -> None:  # heard from the decoding thread
            worker = threading.Thread(target=heard, args=(done, total))
            worker.start()
            worker.join()

        engine(0, 3000)
        now[0] += 2.0
        engine(1000, 3000)
        await wait_for(pilot, lambda: "prompt 1.0k/3.0k" in shown(screen.status), "the count")
        await wait_for(pilot, lambda: "4s left" in shown(screen.status), "the time left")
        assert screen.status.info.prompt_rate == pytest.approx(500.0)
        await pilot.resize_terminal(120, 24)
        await wait_for(
            pilot,
            lambda: "reading prompt 1,000/3,000, 4s left, 500 tok/s" in shown(screen.status),
            "the whole progress where there is room",
        )
        engine(3000, 3000)
        await wait_for(pilot, lambda: "generating" in shown(screen.status), "the prefill's end")
        assert "prompt" not in shown(screen.status)
        session.gate.set()
        await wait_for(pilot, lambda: not screen.running, "the run to end")
        assert workbench.prefill_heard is None  # the hook goes with the run


async def test_a_cancelled_prefill_leaves_no_progress_behind(tmp_path: Path) -> None:
    run = [StepStarted(0), RunFinished("agent", "done", n_steps=1)]
    session = ReplaySession(RECORD, [run], pause_at=1)
    workbench = ReplayWorkbench(session)
    app = FrogDeskApp(workbench, Settings(), config_path=tmp_path / "config.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = screen_of(app)
        await pilot.press(*"fix app.py", "enter")
        await wait_for(pilot, lambda: workbench.prefill_heard is not None, "the hook")
        heard = workbench.prefill_heard
        assert heard is not None
        heard(0, 3000)
        heard(512, 3000)
        await wait_for(pilot, lambda: screen.status.info.prompt_total == 3000, "the progress")
        screen.action_stop()
        await wait_for(pilot, lambda: not screen.running, "the stop")
        assert screen.status.info.prompt_total == 0
        assert "prompt" not in shown(screen.status)


async def test_an_opened_session_shows_no_rate_of_the_one_before(tmp_path: Path) -> None:
    run = [StepStarted(0), StepUsage(0, DRAFTED), RunFinished("agent", "done", n_steps=1)]
    workbench = ReplayWorkbench(ReplaySession(RECORD, [run]))
    app = FrogDeskApp(workbench, Settings(), config_path=tmp_path / "config.toml")
    async with app.run_test(size=(120, 24)) as pilot:
        screen = screen_of(app)
        await pilot.press(*"fix app.py", "enter")
        await wait_for(pilot, lambda: not screen.running and screen.status.info.step, "the run")
        assert screen.status.info.tokens_per_second == pytest.approx(118.0)
        other = ReplaySession(SessionRecord("s2", "/repo", "/wt2", "base", "other", "script"), [])
        screen.post_message(SessionOpened(other, "", run=False))
        await wait_for(pilot, lambda: "Opened session s2" in screen.status.info.state
                       or screen.session is other, "the other session")  # fmt: skip
        await pilot.pause()
        assert screen.status.info.tokens_per_second == 0.0
        assert "- tok/s" in shown(screen.status)
