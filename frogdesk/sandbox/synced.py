"""Running a sandboxed command, then moving the objects it made into the user's store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from frogdesk.sandbox.shells.protocol import ShellResult
from frogdesk.worktree.objects import ObjectRoute, safe_sync, sync_notice


def run_and_sync(route: ObjectRoute | None, run: Callable[[], ShellResult]) -> ShellResult:
    """Run a command, then move its objects into the user's store, however the command ended."""
    if route is None:
        return run()
    safe_sync(route)  # leftovers of an interrupted earlier run
    try:
        result = run()
    finally:
        report = safe_sync(route)
    notice = sync_notice(report)
    if not notice:
        return result
    stderr = result.stderr + ("\n" if result.stderr and not result.stderr.endswith("\n") else "")
    return replace(result, stderr=stderr + notice + "\n")
