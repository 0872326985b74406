"""The line `frogdesk eval` prints per finished task says how fast the model decoded, so a task
that timed out on a busy machine reads as slow rather than as a weak model."""

from __future__ import annotations

from frogdesk.commands.eval import _task_line
from frogdesk.core.evaluating import Progress
from frogdesk.evals.results import AttemptRecord, TaskResult


def test_the_task_line_carries_the_mean_decode_rate() -> None:
    attempts = [
        AttemptRecord(1, solved=False, steps=4, tokens_per_second=4.0),
        AttemptRecord(2, solved=True, steps=6, tokens_per_second=5.0),
    ]
    result = TaskResult("py-leap", attempts=attempts)
    line = _task_line(Progress(3, 16, result, 250.04, None), 2, None)
    assert line == "[3/16] py-leap: solved 1/2, 10 steps, 250.0s, 4.5 tok/s per attempt"


def test_a_task_that_did_not_run_says_why_and_no_rate() -> None:
    result = TaskResult("py-broken", status="broken", note="passes before any change")
    line = _task_line(Progress(1, 2, result, 0.0, None), 1, 30.0)
    assert line == "[1/2] py-broken: broken (passes before any change)  ETA 30s"
