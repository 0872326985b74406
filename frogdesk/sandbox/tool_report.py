"""What a session's shell finds: the interpreter and tools inside its sandbox, in lines for the
session's first screen and `frogdesk doctor`."""

from __future__ import annotations

from pathlib import Path

from frogdesk.sandbox.shells.base import SandboxShell
from frogdesk.sandbox.shells.protocol import Shell
from frogdesk.sandbox.toolchain import TOOLS, ToolchainProbe, probe_tools


def toolchain_summary(shell: Shell, workdir: Path, *, timeout: float = 30.0) -> list[str]:
    """Lines saying which interpreter and tools the session's shell finds, for the session's
    first screen and doctor: each tool's path inside the sandbox or "not found", then what
    of the launch environment the sandbox is not shown, and why."""
    return probe_lines(probe_tools(shell, workdir, timeout), refused_entries(shell))


def refused_entries(shell: Shell) -> list[str]:
    """What of the launch environment's toolchain the shell's sandbox does not show, and why."""
    if isinstance(shell, SandboxShell) and shell.policy.toolchain is not None:
        return list(shell.policy.toolchain.refused)
    return []


def probe_lines(probe: ToolchainProbe, refused: list[str]) -> list[str]:
    """One line per tool (its path inside the sandbox, or "not found"), then the refusals."""
    if probe.error is not None:
        return [f"the shell's tools are unknown: {probe.error}", *refused]
    lines = []
    for tool in TOOLS:
        where = probe.tools.get(tool)
        line = f"{tool:<8} {where or 'not found'}"
        if where and tool == "python" and probe.python_version:
            venv = f", venv {probe.virtual_env}" if probe.virtual_env else ""
            line += f" (Python {probe.python_version}{venv})"
        lines.append(line)
    return [*lines, *refused]
