"""The check as it runs in the sandbox: the put-back files written first, then the command.

The files are written by the sandboxed shell itself, inside the session's worktree, so the
host never writes through anything the model could have made (a link in place of a test
folder); a link or file in the way of a folder is removed first.
"""

from __future__ import annotations

import base64
import shlex
from pathlib import PurePosixPath

from frogdesk.evals.errors import EvalError
from frogdesk.evals.task import EvalTask
from frogdesk.sizes import human_bytes

RESTORE_FAILED = 97
"""Exit code of a check whose files could not be put back (the check did not run)."""

MAX_COMMAND_BYTES = 120_000
"""Below Linux's 128 KiB limit on one argument: the command reaches bash as one."""


def _put(path: str, data: bytes, executable: bool) -> list[str]:
    parts = PurePosixPath(path).parts
    lines: list[str] = []
    for depth in range(1, len(parts)):
        folder = shlex.quote("/".join(parts[:depth]))
        lines.append(
            f"if [ -L {folder} ] || {{ [ -e {folder} ] && [ ! -d {folder} ]; }}; then rm -f -- {folder}; fi"
        )
        lines.append(f"mkdir -p -- {folder}")
    target = shlex.quote(path)
    encoded = base64.b64encode(data).decode("ascii")
    lines.append(f"rm -rf -- {target}")
    lines.append(f"printf '%s' {encoded} | base64 -d > {target}")
    lines.append(f"chmod {'755' if executable else '644'} -- {target}")
    return lines


def restore_script(task: EvalTask) -> str:
    """Shell lines that put the task's restored and hidden files in place (none: "true")."""
    lines: list[str] = []
    for path, data in task.put_back().items():
        lines += _put(path, data, path in task.executables)
    return " && ".join(lines) if lines else "true"


def check_command(task: EvalTask) -> str:
    """The whole command the attempt's sandbox runs: put back, then the task's check.

    A failure to put the files back exits RESTORE_FAILED with one line, never runs the check.
    """
    command = (
        f"{{ {restore_script(task)}; }} >/dev/null 2>&1 || "
        f"{{ echo 'frogdesk eval: the hidden files could not be put back'; exit {RESTORE_FAILED}; }}\n"
        f"{task.check}"
    )
    if len(command.encode("utf-8")) > MAX_COMMAND_BYTES:
        raise EvalError(
            f"task {task.name}: its restored and hidden files are too big to put back "
            f"({human_bytes(len(command.encode('utf-8')))}, at most "
            f"{human_bytes(MAX_COMMAND_BYTES)})"
        )
    return command
