"""One Leaf tool call run by hand, exactly as the agent would run it (`frogdesk tool`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.runner import ToolOutcome, ToolRunner
from frogdesk.sandbox.levels import choose_shell, confined_shell
from frogdesk.sandbox.shells.protocol import Shell
from frogdesk.worktree.checkout import load_worktree


def session_shell(workdir: Path, requested: str, private_dir: Path) -> Shell:
    """The shell the agent would get in `workdir`: the session's own for a FrogDesk worktree.

    Any other folder gets the same isolation level with `workdir` as the only writable
    place (HOME and tmp under `private_dir`); the user typed the command, so it runs
    without an approval gate at every level.
    """
    try:
        worktree = load_worktree(workdir.parent, workdir.name)
    except Exception:
        worktree = None
    if worktree is not None:
        return choose_shell(requested, worktree=worktree).shell
    return confined_shell(requested, workdir, private_dir=private_dir).shell


def run_tool_call(call: ToolCall, workdir: Path, sandbox: str) -> ToolOutcome:
    """Run `call` in `workdir` (Bash through the shell `sandbox` names), as Leaf's runner does.

    Raises the sandbox's, the worktree's or the tool runner's own error when the call cannot
    run at all; a call that ran and failed is an outcome with `ok` false.
    """
    with tempfile.TemporaryDirectory(
        prefix="frogdesk-tool-", ignore_cleanup_errors=True
    ) as private:
        shell = session_shell(workdir, sandbox, Path(private)) if call.name == "Bash" else None
        return ToolRunner(workdir, shell).run(call)
