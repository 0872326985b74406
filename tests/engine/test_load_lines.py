"""A model load on stderr: redrawn in place on a terminal, two lines in a log (not a hundred
carriage-return redraws), and the same closing line either way."""

from __future__ import annotations

import io
import os
import select

import pytest

from frogdesk.commands.progress import LoadProgress


class _Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def _load(progress: LoadProgress, clock: _Clock) -> None:
    for step in range(101):
        progress(step / 100)
        clock.now += 0.05


def test_off_a_terminal_a_load_is_one_line_as_it_starts_and_one_as_it_ends() -> None:
    clock = _Clock()
    log = io.StringIO()
    _load(LoadProgress(log, clock=clock), clock)
    assert log.getvalue() == "loading the model…\nloaded the model in 5.0 s\n"


def _drain(leader: int, until: str) -> bytes:
    """Everything the pty holds up to the line that holds `until`: one read returns at most
    what the pty's buffer passed on so far (about 4 KiB), not all that was written."""
    shown = b""
    while until.encode() not in shown or not shown.endswith(b"\r\n"):
        ready, _, _ = select.select([leader], [], [], 10.0)
        assert ready, f"the pty went quiet after {len(shown)} bytes"
        shown += os.read(leader, 1 << 16)
    return shown


def test_on_a_terminal_the_percentage_is_redrawn_in_place() -> None:
    # the control: a real terminal (a pty) gets the percentage, each once, in place
    leader, follower = os.openpty()
    clock = _Clock()
    with os.fdopen(follower, "w", encoding="utf-8") as tty:
        _load(LoadProgress(tty, clock=clock), clock)
        tty.flush()
        shown = _drain(leader, until="loaded the model in").decode()
    os.close(leader)
    redraws = shown.split("\r")[1:-2]  # the closing line and the pty's \r\n last
    assert len(redraws) > 90 and len(set(redraws)) == len(redraws)  # each percentage once
    assert redraws[0] == "loading the model:   0%" and redraws[-1] == "loading the model:  99%"
    assert shown.endswith("\rloaded the model in 5.0 s\x1b[K\r\n")  # the pty turns \n to \r\n


@pytest.mark.parametrize("fractions", [[0.0, 0.5, 1.0, 1.0], [1.0]])
def test_the_closing_line_is_said_once(fractions: list[float]) -> None:
    log = io.StringIO()
    progress = LoadProgress(log)
    for fraction in fractions:
        progress(fraction)
    assert log.getvalue().count("loaded the model in") == 1
