"""The starter suite that ships with FrogDesk: small bug fixes and features with their tests."""

from __future__ import annotations

from frogdesk.evals.starter.js_tasks import JS_TASKS
from frogdesk.evals.starter.python_tasks import PYTHON_TASKS
from frogdesk.evals.starter.shell_tasks import SHELL_TASKS
from frogdesk.evals.task import EvalTask, validate

STARTER = "starter"
"""The suite's name on the command line."""


def starter_tasks() -> list[EvalTask]:
    """Every starter task, Python first, in a stable order."""
    return [validate(t) for t in (*PYTHON_TASKS, *JS_TASKS, *SHELL_TASKS)]
