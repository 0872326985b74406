"""Invariant 3: the model sees Leaf's strings exactly; FrogDesk's notices go to the user only."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.e2e import call, frogdesk, make_user_repo, reply, run_script

# Leaf's protocol, written out from its description (not imported from FrogDesk).
LEAF_SYSTEM = (
    "You are a software-engineering agent working in a checked-out repository.\n"
    "Use the available tools to inspect files, make focused edits, and run commands.\n"
    "Solve the task, validate when practical, then give a brief final answer."
)


def _tool(name: str, description: str, params: list[tuple[str, str, str, bool]]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {p: {"type": t, "description": d} for p, t, d, _ in params},
                "required": [p for p, _, _, req in params if req],
            },
        },
    }


LEAF_TOOLS = [
    _tool("Read", "Read a text file. Returns numbered lines.", [
        ("file_path", "string", "Path to the file to read.", True),
        ("offset", "integer", "Optional 1-based starting line.", False),
        ("limit", "integer", "Optional maximum number of lines.", False),
    ]),
    _tool("Write", "Write a complete file, creating parent directories when needed.", [
        ("file_path", "string", "Path to write.", True),
        ("content", "string", "Full file contents.", True),
    ]),
    _tool("Edit", "Replace an exact string in a text file.", [
        ("file_path", "string", "Path to edit.", True),
        ("old_string", "string", "Exact text to replace.", True),
        ("new_string", "string", "Replacement text.", True),
        ("replace_all", "boolean", "Replace every occurrence instead of requiring one match.", False),
    ]),
    _tool("Glob", "Find files by glob pattern.", [
        ("pattern", "string", "Glob pattern, e.g. **/*.py.", True),
        ("path", "string", "Optional directory to search from.", False),
    ]),
    _tool("Bash", "Run a shell command in the repository workdir.", [
        ("command", "string", "Command to run.", True),
        ("description", "string", "Short description of the command.", False),
        ("timeout", "number", "Optional timeout in seconds.", False),
    ]),
]  # fmt: skip

TASK = "Look around, then stop.\nSecond line of the task, kept verbatim.  "
READ_APP = call("Read", file_path="app.py")
APP_OBSERVATION = "app.py\n1. def answer():\n2.     return 42  # unstaged"
WORDS_OF_FROGDESK = ("frogdesk", "sandbox", "root", "stuck in a loop", "warning", "approval")
"""Words of FrogDesk's own notices; none is in the scripted conversation itself."""


def looping_replies() -> list[str]:
    """Three identical steps (the loop notice), one unknown tool, one Bash, then an answer."""
    return [
        reply("Read it.", READ_APP),
        reply("Again.", READ_APP),
        reply("Once more.", READ_APP),
        reply("Try a tool.", call("Grep", pattern="x")),
        reply("List.", call("Bash", command="ls")),
        reply("Finished.", answer="Nothing to change."),
    ]


def expected_observations() -> list[str]:
    """What Leaf answers to each call of `looping_replies`, to the character."""
    listing = "app.py\nbig.txt\nold.txt\nrun.sh\nstaged.txt\nuntracked.txt\n"
    return [APP_OBSERVATION] * 3 + [
        "Unknown tool: Grep",
        f"Exit code: 0\nSTDOUT:\n{listing}\nSTDERR:\n",
    ]


@pytest.mark.slow
def test_trajectory_and_transcript_hold_only_leaf_strings(
    tmp_path: Path, sandbox_level: str
) -> None:
    repo = make_user_repo(tmp_path)
    done, _, traj = run_script(repo, looping_replies(), tmp_path, task=TASK)
    assert done.returncode == 0, done.stderr
    # The user is told: the loop, the sandbox level, and (here) that FrogDesk runs as root.
    assert "stuck in a loop" in done.stderr
    assert f"sandbox: {sandbox_level}" in done.stderr
    assert ("running as root" in done.stderr) == (os.geteuid() == 0)
    messages = traj["messages"]
    assert isinstance(messages, list)
    assert messages[0] == {"role": "system", "content": LEAF_SYSTEM}
    assert messages[1] == {"role": "user", "content": TASK}
    assert traj["tools"] == LEAF_TOOLS
    tool_messages = [m["content"] for m in messages if m["role"] == "tool"]
    assert tool_messages == expected_observations()
    assert [m["role"] for m in messages[2:]] == ["assistant", "tool"] * 5 + ["assistant"]
    assert messages[-1]["content"] == "Nothing to change."

    seen_by_model = json.dumps(messages, ensure_ascii=False).lower()
    for word in WORDS_OF_FROGDESK:
        assert word not in seen_by_model, word


def session_transcript_messages(session_id: str) -> list[dict[str, Any]]:
    """Every message the on-disk transcript of a session holds (what a resume feeds back)."""
    from frogdesk.paths import AppPaths
    from frogdesk.sessions.store import SessionStore

    store = SessionStore(AppPaths.default().sessions_dir)
    transcript = store.read_transcript(session_id)
    return [m.to_template_dict() for m in transcript.conversation()]


@pytest.mark.slow
def test_the_stored_transcript_a_resume_replays_holds_only_leaf_strings(
    tmp_path: Path, sandbox_level: str
) -> None:
    repo = make_user_repo(tmp_path)
    done, summary, _ = run_script(repo, looping_replies(), tmp_path, task=TASK)
    assert done.returncode == 0, done.stderr
    stored = session_transcript_messages(str(summary["session_id"]))
    assert stored[0] == {"role": "system", "content": LEAF_SYSTEM}
    assert [m["content"] for m in stored if m["role"] == "tool"] == expected_observations()
    text = json.dumps(stored, ensure_ascii=False).lower()
    for word in WORDS_OF_FROGDESK:
        assert word not in text, word


@pytest.mark.llama
@pytest.mark.slow
def test_llama_backend_feeds_the_model_exactly_the_template_render(
    tmp_path: Path, qwen35_gguf: Path, sandbox_level: str
) -> None:
    from frogdesk.engine.chat import GenerationSettings
    from frogdesk.engine.llama.backend import LlamaBackend
    from frogdesk.engine.llama.load.options import LlamaOptions
    from frogdesk.paths import AppPaths
    from frogdesk.sessions.store import SessionStore

    repo = make_user_repo(tmp_path)
    done, summary, _ = run_script(
        repo, looping_replies()[:-1], tmp_path, "--max-steps", "5", task=TASK
    )
    assert done.returncode == 1 and "stuck in a loop" in done.stderr
    store = SessionStore(AppPaths.default().sessions_dir)
    messages = store.read_transcript(str(summary["session_id"])).conversation()
    backend = LlamaBackend(qwen35_gguf, LlamaOptions(n_ctx=4096, n_threads=2, seed=1))
    try:
        settings = GenerationSettings(temperature=0.0, max_tokens=4, seed=1)
        list(backend.generate(messages, LEAF_TOOLS, settings))
        expected = backend.template.render(messages, LEAF_TOOLS, add_generation_prompt=True)
        t = backend.transcript
        fed = backend.model.detokenize(t.tokens[: t.n_past])
    finally:
        backend.close()
    bos = backend.template.bos_token
    fed = fed.removeprefix(bos) if bos and not expected.startswith(bos) else fed
    # Everything up to the generation prompt is the template's render, to the character;
    # after it come only the tokens the model itself sampled.
    assert fed.startswith(expected), (fed[: len(expected)], expected)
    assert LEAF_SYSTEM in expected and TASK in expected
    for observation in expected_observations():
        assert f"<tool_response>\n{observation}\n</tool_response>" in expected
    for tool in LEAF_TOOLS:
        assert json.dumps(tool, ensure_ascii=False) in expected
    lowered = expected.lower()
    for word in ("frogdesk", "sandbox", "stuck in a loop", "warning", "running as root"):
        assert word not in lowered, word


def test_the_notices_are_real_and_go_to_stderr_only(tmp_path: Path, sandbox_level: str) -> None:
    repo = make_user_repo(tmp_path)
    replies = [reply("Read.", READ_APP)] * 3 + [reply("Done.", answer="ok")]
    done, _, traj = run_script(repo, replies, tmp_path)
    assert done.returncode == 0
    notice = [line for line in done.stderr.splitlines() if "stuck in a loop" in line]
    assert len(notice) == 1 and notice[0].startswith("frogdesk: warning: ")
    assert "stuck" not in done.stdout
    assert "stuck in a loop" not in json.dumps(traj)
    listing = frogdesk("sessions", "list", "--json")
    assert "stuck in a loop" not in listing.stdout
