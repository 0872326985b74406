"""`frogdesk tool`: run one Leaf tool call from stdin exactly as the agent would, print the observation."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frogdesk.commands.common import load_settings
from frogdesk.commands.errors import UserError
from frogdesk.core.tool_call import run_tool_call
from frogdesk.engine.chat import ToolCall
from frogdesk.inert import inert_text
from frogdesk.leaf.errors import ToolInfrastructureError
from frogdesk.sandbox.errors import SandboxError
from frogdesk.worktree.errors import WorktreeError


def register(sub: Any) -> None:
    """Add the subcommand parser."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "tool",
        help="run one tool call read from stdin and print the observation",
        description=(
            'Reads {"tool": NAME, "args": {...}, "workdir": DIR} (Leaf\'s payload; "arguments" '
            "also works) from PAYLOAD or stdin, runs it exactly as the agent would (Bash "
            "through the sandboxed shell) and prints the observation with nothing added."
        ),
    )
    parser.add_argument(
        "payload", nargs="?", type=Path, default=None, help="JSON file (default: stdin)"
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="the folder the tool works in (wins over the payload's)",
    )
    parser.add_argument(
        "--sandbox",
        choices=("auto", "bwrap", "landlock", "none"),
        default=None,
        help="shell isolation for Bash (default: the sandbox setting)",
    )
    parser.set_defaults(func=main)


@dataclass(frozen=True)
class ToolRequest:
    """One call as Leaf's tool runner takes it: the call and, optionally, its workdir."""

    call: ToolCall
    workdir: Path | None


def read_request(text: str) -> ToolRequest:
    """Parse a payload; arguments under "args" or "arguments", not an object -> no arguments."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"the payload is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tool"), str):
        raise UserError(
            'the payload must be a JSON object like {"tool": "Read", "args": {"file_path": "x.py"}}'
        )
    args = data.get("args", data.get("arguments", {}))
    where = data.get("workdir")
    return ToolRequest(
        ToolCall(data["tool"], args if isinstance(args, dict) else {}),
        Path(where) if isinstance(where, str) and where else None,
    )


def main(args: argparse.Namespace) -> int:
    """Run the call; exit 0 when the tool succeeded, 1 when the observation is an error."""
    settings = load_settings(args)
    source: Path | None = args.payload
    request = read_request(source.read_text(encoding="utf-8") if source else sys.stdin.read())
    given: Path | None = args.workdir or request.workdir
    if given is None:
        raise UserError('no workdir: pass --workdir DIR or put "workdir" in the payload')
    workdir = given.expanduser().resolve()
    if not workdir.is_dir():
        raise UserError(f"{given} is not a folder")
    try:
        outcome = run_tool_call(request.call, workdir, args.sandbox or settings.sandbox.level)
    except (SandboxError, WorktreeError, ToolInfrastructureError) as exc:
        raise UserError(str(exc)) from None
    # Like Leaf's runner, nothing is added: a pipe gets the model's exact bytes; a terminal
    # gets them inert, so a file's escape sequences cannot drive it.
    sys.stdout.write(
        outcome.observation if not sys.stdout.isatty() else inert_text(outcome.observation)
    )
    return 0 if outcome.ok else 1
