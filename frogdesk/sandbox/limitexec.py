"""The first thing a command's process does: join its cgroups, set its rlimits and OOM score, exec.

Run as `python -I -c ... --limits JSON -- ARGV...` (see limits.py). It sets what the
process tree inherits, then becomes ARGV in place (same pid), so the supervisor or bwrap
that follows, and everything they start, carry the limits. It runs before any Landlock
ruleset, which would deny writing cgroup and /proc files.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from collections.abc import Sequence

from frogdesk.sandbox.cgroups import join

OOM_SCORE_ADJ = 1000
"""The OOM killer's first choice: any process may raise its own score, none lower it back."""
RLIMITS = {
    "fsize": resource.RLIMIT_FSIZE,
    "nproc": resource.RLIMIT_NPROC,
    "data": resource.RLIMIT_DATA,
}


def _lower(which: int, value: int) -> None:
    """Set a soft and hard limit, never above what is already allowed."""
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def apply_limits(config: dict[str, object]) -> None:
    """Join the groups, set the rlimits, raise the OOM score; OSError where a step fails."""
    procs = config.get("procs", [])
    rlimits = config.get("rlimits", {})
    assert isinstance(procs, list) and isinstance(rlimits, dict)
    join([str(p) for p in procs])
    for name, value in rlimits.items():
        _lower(RLIMITS[str(name)], int(value))
    with open("/proc/self/oom_score_adj", "w") as fh:
        fh.write(str(OOM_SCORE_ADJ))


def main(args: Sequence[str]) -> int:
    """Entry point: `--limits JSON -- ARGV...`; 125 when the limits cannot be set."""
    if len(args) < 4 or args[0] != "--limits" or args[2] != "--":
        print("usage: limitexec --limits JSON -- ARGV...", file=sys.stderr)
        return 2
    argv = list(args[3:])
    try:
        config = json.loads(args[1])
        if not isinstance(config, dict):
            raise ValueError("the limits are not a JSON object")
        apply_limits(config)
    except (OSError, ValueError, KeyError, TypeError, AssertionError) as exc:
        # Never run a command without the limits it was promised.
        print(f"frogdesk sandbox: cannot set the command's limits: {exc}", file=sys.stderr)
        return 125
    try:
        os.execv(argv[0], argv)
    except OSError as exc:
        print(f"frogdesk sandbox: cannot run {argv[0]}: {exc}", file=sys.stderr)
    return 127
