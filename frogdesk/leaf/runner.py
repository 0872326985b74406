"""The tool runner: one call in, Leaf's observation string out; errors become observations."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.approval import CommandGate
from frogdesk.leaf.errors import ShellMissingError, ToolInfrastructureError
from frogdesk.leaf.events import CommandOutcome
from frogdesk.leaf.tools import LeafTools
from frogdesk.sandbox.shells.protocol import Shell


@dataclass(frozen=True)
class ToolOutcome:
    """What one call produced: the observation the model sees and whether it succeeded."""

    observation: str
    ok: bool
    elapsed: float
    command: CommandOutcome | None = None
    """How a Bash command ended (exit code, stopped, timed out); None for other tools."""


class ToolRunner:
    """Runs Leaf tool calls inside one workdir, Bash through the injected Shell, each Bash
    command first through `gate` (approval) when one is given."""

    def __init__(self, workdir: Path, shell: Shell | None, gate: CommandGate | None = None) -> None:
        self.workdir = workdir
        self.tools = LeafTools(workdir, shell, gate)

    def run(self, call: ToolCall, cancel: threading.Event | None = None) -> ToolOutcome:
        """Run one call; raises ToolInfrastructureError only when the runner cannot work."""
        start = time.monotonic()
        args: Mapping[str, Any] = call.arguments if isinstance(call.arguments, dict) else {}
        ended: list[CommandOutcome] = []

        def bash(a: Mapping[str, Any]) -> str:
            text, result = self.tools.bash_result(a, cancel)
            ended.append(CommandOutcome(result.exit_code, result.cancelled, result.timed_out))
            return text

        handlers: dict[str, Callable[[Mapping[str, Any]], str]] = {
            "Read": self.tools.read,
            "Write": self.tools.write,
            "Edit": self.tools.edit,
            "Glob": lambda a: self.tools.glob(a, cancel),
            "Bash": bash,
        }
        handler = handlers.get(call.name)
        if handler is None:
            return ToolOutcome(f"Unknown tool: {call.name}", False, time.monotonic() - start)
        try:
            observation = handler(args)
        except ShellMissingError as exc:
            raise ToolInfrastructureError(str(exc)) from exc
        except Exception as exc:
            return ToolOutcome(f"{type(exc).__name__}: {exc}", False, time.monotonic() - start)
        command = ended[0] if ended else None
        return ToolOutcome(observation, True, time.monotonic() - start, command)
