"""Leaf's five tool schemas and its system prompt, exactly as FrogNano was trained on them."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from frogdesk.beneath import open_beneath, open_root, opened
from frogdesk.engine.chat import ToolSchema

SYSTEM_PROMPT = "\n".join(
    (
        "You are a software-engineering agent working in a checked-out repository.",
        "Use the available tools to inspect files, make focused edits, and run commands.",
        "Solve the task, validate when practical, then give a brief final answer.",
    )
)
"""Leaf's three-line system prompt."""

TOOL_NAMES = ("Read", "Write", "Edit", "Glob", "Bash")
"""The tools in the order the model was trained with."""

PROJECT_INSTRUCTIONS_FILE = "AGENTS.md"
MAX_INSTRUCTIONS_BYTES = 64 * 1024
"""What of AGENTS.md reaches the prompt; the rest is cut."""


def _param(kind: str, description: str) -> dict[str, Any]:
    return {"type": kind, "description": description}


def _tool(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> ToolSchema:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def tool_schemas() -> list[ToolSchema]:
    """A fresh copy of Leaf's tool list: Read, Write, Edit, Glob, Bash."""
    return [
        _tool(
            "Read",
            "Read a text file. Returns numbered lines.",
            {
                "file_path": _param("string", "Path to the file to read."),
                "offset": _param("integer", "Optional 1-based starting line."),
                "limit": _param("integer", "Optional maximum number of lines."),
            },
            ["file_path"],
        ),
        _tool(
            "Write",
            "Write a complete file, creating parent directories when needed.",
            {
                "file_path": _param("string", "Path to write."),
                "content": _param("string", "Full file contents."),
            },
            ["file_path", "content"],
        ),
        _tool(
            "Edit",
            "Replace an exact string in a text file.",
            {
                "file_path": _param("string", "Path to edit."),
                "old_string": _param("string", "Exact text to replace."),
                "new_string": _param("string", "Replacement text."),
                "replace_all": _param(
                    "boolean", "Replace every occurrence instead of requiring one match."
                ),
            },
            ["file_path", "old_string", "new_string"],
        ),
        _tool(
            "Glob",
            "Find files by glob pattern.",
            {
                "pattern": _param("string", "Glob pattern, e.g. **/*.py."),
                "path": _param("string", "Optional directory to search from."),
            },
            ["pattern"],
        ),
        _tool(
            "Bash",
            "Run a shell command in the repository workdir.",
            {
                "command": _param("string", "Command to run."),
                "description": _param("string", "Short description of the command."),
                "timeout": _param("number", "Optional timeout in seconds."),
            },
            ["command"],
        ),
    ]


def system_prompt(repo: Path | None = None, *, project_instructions: bool = False) -> str:
    """Leaf's system prompt; with `project_instructions`, the repo's AGENTS.md is appended.

    The model was not trained with project instructions, so callers pass the user's
    `Settings.project_instructions` (off by default).
    """
    if not project_instructions or repo is None:
        return SYSTEM_PROMPT
    extra = _project_instructions(repo)
    if not extra:
        return SYSTEM_PROMPT
    return f"{SYSTEM_PROMPT}\n\n{extra}"


def _project_instructions(repo: Path) -> str:
    """AGENTS.md of the repository, opened beneath it: a committed `AGENTS.md ->
    ~/.ssh/id_ed25519` is refused, not put into the prompt; a FIFO never blocks."""
    try:
        with opened(open_root(repo)) as root:
            flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY
            with opened(open_beneath(root, PROJECT_INSTRUCTIONS_FILE, flags)) as fd:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return ""
                data = os.read(fd, MAX_INSTRUCTIONS_BYTES)
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace").strip()
