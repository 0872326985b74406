"""`frogdesk run` says what happened: tool lines, rates, failures, dialects; `--endpoint` flags.

Issues 30.3 and 32, through the real CLI in a subprocess with the script backend.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from frogdesk.cli import build_parser
from tests.support.scripted import call, frogdesk, make_repo, write_script

FENCED_READ = (
    'Look.\n</think>\n\nI will read it.\n```json\n{"name": "Read", "arguments": '
    '{"file_path": "calc.py"}}\n```'
)
XML_READ = "Look.\n</think>\n\n" + call("Read", file_path="calc.py")
DONE = "Done.\n</think>\n\nall done"
WRONG_DIALECT = "looked like a tool call in {} but not in this model's dialect ({})"
XML_TITLE = "Qwen3-Coder XML in <tool_call>"
HERMES_TITLE = "Hermes JSON in <tool_call>"


@pytest.fixture
def sandboxed_bash() -> str:
    """Headless Bash runs unattended only inside a sandbox."""
    from frogdesk.sandbox.levels import detect

    level, reason = detect("auto")
    if level == "none":
        pytest.skip(f"no sandbox on this machine, headless Bash would need approval: {reason}")
    return str(level)


def _run(
    tmp_path: Path, replies: list[str], *extra: str, dialect: str = ""
) -> tuple[dict[str, Any], str]:
    tmp_path.mkdir(exist_ok=True)
    repo = make_repo(tmp_path)
    script = write_script(tmp_path / "s.jsonl", replies)
    if dialect:
        text = script.read_text(encoding="utf-8")
        script.write_text(json.dumps({"dialect": dialect}) + "\n" + text, encoding="utf-8")
    done = frogdesk("run", "fix it", "--repo", str(repo), "--script", str(script), "--json", *extra)
    return json.loads(done.stdout), done.stderr


def test_a_call_in_the_other_dialect_is_read_counted_and_said(tmp_path: Path) -> None:
    summary, stderr = _run(tmp_path / "xml", [FENCED_READ, DONE])
    # Before: one step, the fenced call taken as the final answer, `recoveries: {}`.
    assert summary["n_steps"] == 2 and summary["exit_reason"] == "agent"
    assert summary["dialect"] == "qwen3_coder_xml"
    assert summary["recoveries"] == {"fenced_json": 1, "other_dialect_hermes_json": 1}
    assert WRONG_DIALECT.format(HERMES_TITLE, XML_TITLE) in stderr
    assert "-> Read calc.py: ok" in stderr
    # The reverse: an XML call from a model whose template teaches Hermes.
    summary, stderr = _run(tmp_path / "hermes", [XML_READ, DONE], dialect="hermes_json")
    assert summary["n_steps"] == 2 and summary["dialect"] == "hermes_json"
    assert summary["recoveries"] == {"other_dialect_qwen3_coder_xml": 1}
    assert WRONG_DIALECT.format(XML_TITLE, HERMES_TITLE) in stderr


def test_a_broken_call_in_the_other_dialect_is_answered_with_an_error(tmp_path: Path) -> None:
    broken = 'Look.\n</think>\n\n<tool_call>\n{"name": "Read", "arguments": {"file_path": "x"\n</tool_call>'
    summary, _ = _run(tmp_path, [broken, DONE])
    assert summary["n_steps"] == 2 and summary["exit_reason"] == "agent"
    traj = json.loads(
        (Path(summary["output_dir"]) / "trajectory_seed-0.json").read_text(encoding="utf-8")
    )
    observation = traj["steps"][0]["observations"][0]["observation"]
    assert WRONG_DIALECT.format(HERMES_TITLE, XML_TITLE) in observation
    assert "Call a tool as <tool_call>\n<function=NAME>" in observation


def test_progress_names_each_call_its_argument_exit_code_and_rate(
    tmp_path: Path, sandboxed_bash: str
) -> None:
    command = "echo hi\x1b]0;pwned\x07; exit 3\nsecond line"
    bash = "Run.\n</think>\n\n" + call("Bash", command=command)
    summary, stderr = _run(tmp_path, [XML_READ, bash, DONE])
    assert summary["exit_reason"] == "agent" and summary["n_steps"] == 3
    lines = stderr.splitlines()
    assert "  Read calc.py" in lines
    assert any(line.startswith("    -> Read calc.py: ok · ") for line in lines)
    # The command's first line, its control characters shown, never sent raw to the terminal.
    assert "  Bash echo hi\\x1b]0;pwned\\x07; exit 3 …" in lines
    assert any("-> Bash echo hi" in line and ": exit 3 · " in line for line in lines)
    assert "\x1b" not in stderr and "\x07" not in stderr
    assert sum(line.startswith("  reply: ") and "tok/s" in line for line in lines) == 3


def test_json_carries_the_error_and_quiet_still_says_the_failure(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    # --endpoint alone means the openai backend (it was silently ignored before).
    done = frogdesk(
        "run", "x", "--repo", str(repo), "--endpoint", "http://127.0.0.1:9/v1", "--json", "--quiet"
    )
    assert done.returncode == 1
    summary = json.loads(done.stdout)
    assert summary["exit_reason"] == "llm_query_error"
    assert "127.0.0.1:9" in summary["error"]
    failure = [line for line in done.stderr.splitlines() if line.startswith("stopped: ")]
    assert len(failure) == 1 and "model error" in failure[0] and "127.0.0.1:9" in failure[0]
    assert "llm_query_error" not in done.stderr  # the identifier stays in the JSON


def test_an_endpoint_with_the_llama_backend_is_a_clear_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    for args in (
        ("run", "x", "--repo", str(repo), "--backend", "llama"),
        ("--repo", str(repo), "--backend", "llama"),
    ):
        done = frogdesk(*args, "--endpoint", "http://127.0.0.1:9/v1")
        assert done.returncode == 2
        assert "--endpoint URL is for the openai backend, not --backend llama" in done.stderr
    # The TUI without an endpoint for the openai backend says what it needs.
    done = frogdesk("--repo", str(repo), "--backend", "openai")
    assert done.returncode == 2 and "needs --endpoint URL" in done.stderr


def test_the_tui_takes_the_backend_flags_run_takes() -> None:
    args = build_parser().parse_args(["--backend", "openai", "--endpoint", "http://h:1/v1"])
    assert (args.backend, args.endpoint) == ("openai", "http://h:1/v1")


def test_the_tui_opens_on_the_endpoint_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import frogdesk.tui.launch
    from frogdesk.cli import main

    opened: list[Any] = []
    # Only the app's start is replaced: what is under test is what the flags make of it.
    monkeypatch.setattr(
        frogdesk.tui.launch, "run_tui", lambda repo, settings, *a, **k: opened.append(settings) or 0
    )
    repo = make_repo(tmp_path)
    assert main(["--repo", str(repo), "--endpoint", "http://127.0.0.1:9/v1"]) == 0
    assert (
        opened[0].engine.backend == "openai"
        and opened[0].engine.openai_endpoint == "http://127.0.0.1:9/v1"
    )
    assert main(["--repo", str(repo), "--backend", "openai", "--endpoint", "http://h:2/v1"]) == 0
    assert (
        opened[1].engine.backend == "openai" and opened[1].engine.openai_endpoint == "http://h:2/v1"
    )
