"""Leaf's tool list and system prompt, to the character; AGENTS.md only when enabled."""

from __future__ import annotations

import os
from pathlib import Path

from frogdesk.leaf.schemas import SYSTEM_PROMPT, system_prompt, tool_schemas


def test_system_prompt() -> None:
    assert SYSTEM_PROMPT == (
        "You are a software-engineering agent working in a checked-out repository.\n"
        "Use the available tools to inspect files, make focused edits, and run commands.\n"
        "Solve the task, validate when practical, then give a brief final answer."
    )


def test_tools() -> None:
    def p(kind: str, text: str) -> dict[str, str]:
        return {"type": kind, "description": text}

    def tool(
        name: str, text: str, props: dict[str, dict[str, str]], required: list[str]
    ) -> dict[str, object]:
        return {
            "type": "function",
            "function": {
                "name": name,
                "description": text,
                "parameters": {"type": "object", "properties": props, "required": required},
            },
        }

    expected = [
        tool(
            "Read",
            "Read a text file. Returns numbered lines.",
            {
                "file_path": p("string", "Path to the file to read."),
                "offset": p("integer", "Optional 1-based starting line."),
                "limit": p("integer", "Optional maximum number of lines."),
            },
            ["file_path"],
        ),
        tool(
            "Write",
            "Write a complete file, creating parent directories when needed.",
            {
                "file_path": p("string", "Path to write."),
                "content": p("string", "Full file contents."),
            },
            ["file_path", "content"],
        ),
        tool(
            "Edit",
            "Replace an exact string in a text file.",
            {
                "file_path": p("string", "Path to edit."),
                "old_string": p("string", "Exact text to replace."),
                "new_string": p("string", "Replacement text."),
                "replace_all": p(
                    "boolean", "Replace every occurrence instead of requiring one match."
                ),
            },
            ["file_path", "old_string", "new_string"],
        ),
        tool(
            "Glob",
            "Find files by glob pattern.",
            {
                "pattern": p("string", "Glob pattern, e.g. **/*.py."),
                "path": p("string", "Optional directory to search from."),
            },
            ["pattern"],
        ),
        tool(
            "Bash",
            "Run a shell command in the repository workdir.",
            {
                "command": p("string", "Command to run."),
                "description": p("string", "Short description of the command."),
                "timeout": p("number", "Optional timeout in seconds."),
            },
            ["command"],
        ),
    ]
    assert tool_schemas() == expected
    assert [list(t["function"]["parameters"]["properties"]) for t in tool_schemas()][2] == [
        "file_path",
        "old_string",
        "new_string",
        "replace_all",
    ]


def test_tool_list_is_a_fresh_copy() -> None:
    tools = tool_schemas()
    tools[0]["function"]["name"] = "Changed"
    assert tool_schemas()[0]["function"]["name"] == "Read"


def test_agents_md_only_when_enabled(tmp_path: Path) -> None:
    assert system_prompt(tmp_path, project_instructions=True) == SYSTEM_PROMPT
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n", encoding="utf-8")
    assert system_prompt(tmp_path) == SYSTEM_PROMPT
    assert system_prompt(tmp_path, project_instructions=False) == SYSTEM_PROMPT
    assert system_prompt(tmp_path, project_instructions=True) == SYSTEM_PROMPT + "\n\nUse tabs."


def test_agents_md_is_read_beneath_the_repository(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    outside.mkdir()
    (outside / "id_ed25519").write_text("PRIVATE KEY\n", encoding="utf-8")
    (repo / "AGENTS.md").symlink_to(outside / "id_ed25519")
    # Positive control: read by name, the link hands over the key.
    assert "PRIVATE KEY" in (repo / "AGENTS.md").read_text(encoding="utf-8")
    assert system_prompt(repo, project_instructions=True) == SYSTEM_PROMPT
    (repo / "AGENTS.md").unlink()
    (repo / "docs").mkdir()
    (repo / "docs" / "agents.md").write_text("Use tabs.\n", encoding="utf-8")
    (repo / "AGENTS.md").symlink_to("docs/agents.md")
    assert system_prompt(repo, project_instructions=True) == SYSTEM_PROMPT + "\n\nUse tabs."
    (repo / "AGENTS.md").unlink()
    os.mkfifo(repo / "AGENTS.md")
    assert system_prompt(repo, project_instructions=True) == SYSTEM_PROMPT  # and no wait
