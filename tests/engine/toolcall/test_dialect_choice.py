"""The dialect a model speaks is read from its own chat template, shown, recorded and used end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogdesk import cli
from frogdesk.engine.chat import GenerationSettings, Message, Reply, ToolSchema
from frogdesk.engine.errors import DialectError, ScriptError
from frogdesk.engine.openai.stream import ChunkAssembler
from frogdesk.engine.script_backend import ScriptBackend
from frogdesk.engine.template import ChatTemplate
from frogdesk.engine.toolcall.detect import choose_dialect
from frogdesk.engine.toolcall.dialect import HERMES, XML, dialect_named
from frogdesk.leaf.schemas import tool_schemas
from frogdesk.sessions.record import SessionSpec
from tests.support import tiny_qwen35
from tests.support.hermes_chat_template import HERMES_CHAT_TEMPLATE
from tests.support.scripted import make_repo
from tests.support.sessionkit import recording_service
from tests.support.tiny_chat_template import CHAT_TEMPLATE

MISTRAL_LIKE = (
    "{% for m in messages %}{{ m.content }}{% for c in m.tool_calls or [] %}[TOOL_CALLS] "
    '[{{ {"name": c.function.name, "arguments": c.function.arguments} | tojson }}]'
    "{% endfor %}{% endfor %}"
)
NO_TOOLS = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}"
FENCED_WRITE = (
    "I'll create the file.\n```json\n"
    '{"name": "Write", "arguments": {"file_path": "new.py", "content": "x = 1\\n"}}\n```'
)
"""Issue 30's lost call: Qwen2.5-Coder answers with its call in a ```json fence."""


def test_each_template_names_its_dialect() -> None:
    hermes = choose_dialect(ChatTemplate(HERMES_CHAT_TEMPLATE))
    assert hermes.dialect is HERMES and hermes.taught
    xml = choose_dialect(ChatTemplate(CHAT_TEMPLATE))
    assert xml.dialect is XML and xml.taught
    silent = choose_dialect(ChatTemplate(NO_TOOLS))
    assert silent.dialect is XML and not silent.taught
    assert "teaches no tool-call form" in silent.describe()


def test_a_form_frogdesk_does_not_speak_is_refused_in_one_line() -> None:
    with pytest.raises(DialectError) as caught:
        choose_dialect(ChatTemplate(MISTRAL_LIKE, origin="/m/mistral.gguf"))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("/m/mistral.gguf: its chat template writes a tool call as ")
    assert "[TOOL_CALLS]" in message and "frogdesk_probe" in message


def test_unknown_dialect_names_are_refused() -> None:
    assert dialect_named("hermes_json") is HERMES
    with pytest.raises(ValueError, match="qwen3_coder_xml, hermes_json"):
        dialect_named("mistral")


def _reply(backend: ScriptBackend, tools: list[ToolSchema]) -> Reply:
    reply = Reply()
    settings = GenerationSettings(enable_thinking=False)
    for event in backend.generate([Message(role="user", content="go")], tools, settings):
        reply.add(event)
    return reply


def test_the_script_backend_replays_in_the_dialect_its_first_line_names(tmp_path: Path) -> None:
    lines = [json.dumps({"dialect": "hermes_json"}), json.dumps({"text": FENCED_WRITE})]
    script = tmp_path / "hermes.jsonl"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    backend = ScriptBackend(script)
    assert backend.info.dialect == "hermes_json"
    reply = _reply(backend, tool_schemas())
    assert [c.name for c in reply.tool_calls] == ["Write"]
    assert reply.recoveries == ["fenced_json"]
    # Control: read as XML the same reply is no longer the silent final answer of issue 30,
    # but a call recovered from the other dialect and counted as such.
    plain = tmp_path / "xml.jsonl"
    plain.write_text(lines[1] + "\n", encoding="utf-8")
    old = _reply(ScriptBackend(plain), tool_schemas())
    assert [c.name for c in old.tool_calls] == ["Write"] and old.errors == []
    assert old.recoveries == ["other_dialect_hermes_json", "fenced_json"]
    late = tmp_path / "late.jsonl"
    late.write_text(lines[1] + "\n" + lines[0] + "\n", encoding="utf-8")
    with pytest.raises(ScriptError, match="line 2: a dialect line must come first"):
        ScriptBackend(late)


def test_a_session_records_its_dialect_and_acts_on_a_fenced_call(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    service, _ = recording_service()
    script = tmp_path / "s.jsonl"
    script.write_text(
        "\n".join(
            json.dumps(entry)
            for entry in (
                {"dialect": "hermes_json", "thinking": False},
                {"text": FENCED_WRITE},
                {"text": "Done."},
            )
        )
        + "\n",
        encoding="utf-8",
    )
    active = service.start(SessionSpec("add", repo, backend="script", script=str(script)))
    outcome = service.run(active)
    active.close()
    assert outcome.record.dialect == "hermes_json"
    assert outcome.record.recoveries == {"fenced_json": 1}
    assert outcome.result.n_steps == 2 and outcome.files_changed == ["new.py"]
    stored = service.store.get(outcome.record.id)
    assert stored.dialect == "hermes_json"


def test_an_endpoint_that_leaves_hermes_calls_in_the_content_is_read_in_the_dialect() -> None:
    tools = tool_schemas()
    chunk = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "content": '<tool_call>\n{"name": "Glob", "arguments": {"pattern": "*.py"}}\n</tool_call>'
                },
            }
        ]
    }
    assembler = ChunkAssembler(tools, thinking=False, dialect=HERMES)
    reply = Reply()
    for event in [*assembler.add(json.dumps(chunk)), *assembler.finish()]:
        reply.add(event)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("Glob", {"pattern": "*.py"})]
    # Control: the XML dialect reads it only as a call in the other dialect, and counts it.
    xml = ChunkAssembler(tools, thinking=False)
    other = Reply()
    for event in [*xml.add(json.dumps(chunk)), *xml.finish()]:
        other.add(event)
    assert [(c.name, c.arguments) for c in other.tool_calls] == [("Glob", {"pattern": "*.py"})]
    assert other.recoveries == ["other_dialect_hermes_json"] and other.errors == []


# Real GGUFs through llama.cpp ------------------------------------------------------


def _tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template: str, name: str) -> Path:
    monkeypatch.setattr(tiny_qwen35, "CHAT_TEMPLATE", template)
    return tiny_qwen35.write_tiny_qwen35(tmp_path / name)


def test_models_info_shows_the_dialect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hermes = _tiny(tmp_path, monkeypatch, HERMES_CHAT_TEMPLATE, "hermes-F16.gguf")
    assert cli.main(["models", "info", str(hermes), "--json", "--context", "2048"]) == 0
    shown = json.loads(capsys.readouterr().out)["tool_call_dialect"]
    assert shown["name"] == "hermes_json" and shown["taught"] and not shown["refused"]
    assert cli.main(["models", "info", str(hermes), "--context", "2048"]) == 0
    rows = capsys.readouterr().out
    assert "tool calls" in rows and "Hermes JSON in <tool_call> (from the chat template)" in rows
    odd = _tiny(tmp_path, monkeypatch, MISTRAL_LIKE, "odd-F16.gguf")
    assert cli.main(["models", "info", str(odd), "--json", "--context", "2048"]) == 0
    refused = json.loads(capsys.readouterr().out)["tool_call_dialect"]
    assert refused["name"] == "" and "[TOOL_CALLS]" in refused["refused"]


@pytest.mark.llama
def test_the_llama_backend_speaks_hermes_with_its_grammar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from frogdesk.engine.llama.backend import LlamaBackend
    from frogdesk.engine.llama.load.options import LlamaOptions

    path = _tiny(tmp_path, monkeypatch, HERMES_CHAT_TEMPLATE, "hermes-F16.gguf")
    flag: ToolSchema = {
        "type": "function",
        "function": {
            "name": "Flag",
            "parameters": {"type": "object", "properties": {"on": {"type": "boolean"}}},
        },
    }
    backend = LlamaBackend(path, LlamaOptions(n_ctx=2048, seed=1))
    try:
        assert backend.info.dialect == "hermes_json"
        settings = GenerationSettings(
            temperature=0.0, max_tokens=300, tool_choice="required", enable_thinking=False
        )
        reply = Reply()
        for event in backend.generate([Message(role="user", content="go")], [flag], settings):
            reply.add(event)
        # The random model is held to the Hermes grammar, and the Hermes parser reads it.
        assert reply.finish is not None
        assert reply.finish.raw_text.startswith('<tool_call>\n{"name": "Flag", "arguments": {')
        assert reply.tool_calls and {c.name for c in reply.tool_calls} == {"Flag"}
        assert reply.errors == []
    finally:
        backend.close()


@pytest.mark.llama
def test_a_template_in_an_unknown_form_is_refused_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from frogdesk.engine.llama.backend import LlamaBackend
    from frogdesk.engine.llama.load.options import LlamaOptions

    path = _tiny(tmp_path, monkeypatch, MISTRAL_LIKE, "odd-F16.gguf")
    with pytest.raises(DialectError) as caught:
        LlamaBackend(path, LlamaOptions(n_ctx=512))
    assert "\n" not in str(caught.value) and "[TOOL_CALLS]" in str(caught.value)
    # Control: the same model with the XML template loads and speaks XML.
    plain = _tiny(tmp_path, monkeypatch, CHAT_TEMPLATE, "plain-F16.gguf")
    backend = LlamaBackend(plain, LlamaOptions(n_ctx=512))
    try:
        assert backend.info.dialect == "qwen3_coder_xml"
    finally:
        backend.close()
