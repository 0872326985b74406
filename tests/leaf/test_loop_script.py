"""The loop on the real script backend: Leaf's strings for bad calls, parser errors as observations."""

from __future__ import annotations

import json
from pathlib import Path

from frogdesk.engine.chat import Message
from frogdesk.engine.script_backend import ScriptBackend
from frogdesk.leaf.loop import LoopConfig, run_loop
from frogdesk.leaf.runner import ToolRunner
from frogdesk.leaf.schemas import SYSTEM_PROMPT, tool_schemas


def script(path: Path, replies: list[str]) -> Path:
    path.write_text("".join(json.dumps({"text": r}) + "\n" for r in replies), encoding="utf-8")
    return path


def test_bad_calls_get_leaf_observations_and_the_loop_goes_on(
    tmp_path: Path, runner: ToolRunner
) -> None:
    replies = [
        "hmm\n</think>\n\n<tool_call>\n<function=Frob>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>",
        "hmm\n</think>\n\n<tool_call>\n<function=Read>\n<parameter=offset>\n2\n</parameter>\n</function>\n</tool_call>",
        "hmm\n</think>\n\n<tool_call>\n<function=Read>\n<parameter=file_path>\na.py\n</parameter>\n</function>\noops\n</tool_call>",
        "hmm\n</think>\n\n<tool_call>\n<function=Edit>\n<parameter=file_path>\na.py\n</parameter>\n"
        "<parameter=old_string>\no\n</parameter>\n<parameter=new_string>\n0\n</parameter>\n"
        "<parameter=replace_all>\nyes\n</parameter>\n</function>\n</tool_call>",
        "done\n</think>\n\nAll good.",
    ]
    backend = ScriptBackend(script(tmp_path / "s.jsonl", replies), strict_calls=False)
    messages = [Message("system", SYSTEM_PROMPT), Message("user", "go")]
    result = run_loop(backend, tool_schemas(), runner, LoopConfig(), messages)
    assert result.exit_reason == "agent" and result.final_message == "All good."
    observations = [o.observation for s in result.steps for o in s.observations]
    assert observations[0] == "Unknown tool: Frob"
    assert observations[1] == "ValueError: file_path is required"
    assert observations[2].startswith(
        "Invalid tool call to 'Read'"
    )  # the parser's word on broken XML
    assert observations[3] == "Edited a.py (3 replacements)."
    assert (runner.workdir / "a.py").read_text(encoding="utf-8").startswith("0ne\ntw0\nthree\nf0ur")
