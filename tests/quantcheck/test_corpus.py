"""The shipped corpus: versioned, four languages and transcripts, cases that end where the model acts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from frogdesk.leaf.schemas import TOOL_NAMES
from frogdesk.quantcheck.corpus import (
    CODE,
    TRANSCRIPT,
    CorpusError,
    default_corpus_dir,
    load_corpus,
    render_call,
)


def test_shipped_corpus_covers_languages_and_transcripts() -> None:
    corpus = load_corpus()
    assert corpus.version == "1"
    languages = {d.language for d in corpus.documents if d.kind == CODE}
    assert {"python", "javascript", "typescript", "go"} <= languages
    transcripts = [d for d in corpus.documents if d.kind == TRANSCRIPT]
    assert len(transcripts) >= 4
    size = sum(len(d.text) for d in corpus.documents)
    assert size > 60_000, "a few tens of thousands of tokens"
    for doc in transcripts:
        assert doc.text.startswith("<|im_start|>system\n# Tools\n")
        assert "<tool_response>\n" in doc.text and "</tool_call><|im_end|>\n" in doc.text
        assert doc.text.endswith("<|im_end|>\n")


def test_cases_end_after_the_reasoning_and_name_leaf_tools() -> None:
    corpus = load_corpus()
    assert len(corpus.cases) >= 10
    for case in corpus.cases:
        assert case.prefix.endswith("</think>\n\n")
        assert case.prefix.rfind("<|im_start|>assistant\n<think>\n") > case.prefix.rfind(
            "<|im_end|>"
        )
        assert case.expected_tool in TOOL_NAMES
        doc = next(d for d in corpus.documents if d.name == case.name.split("#")[0])
        assert doc.text.startswith(case.prefix)
        assert doc.text[len(case.prefix) :].startswith(
            f"<tool_call>\n<function={case.expected_tool}>"
        )


def test_render_call_formats_values() -> None:
    text = render_call("Bash", {"command": "ls", "timeout": 5, "env": {"A": [1]}})
    assert text == (
        "<tool_call>\n<function=Bash>\n<parameter=command>\nls\n</parameter>\n"
        "<parameter=timeout>\n5\n</parameter>\n"
        '<parameter=env>\n{"A": [1]}\n</parameter>\n</function>\n</tool_call>'
    )


def test_digest_follows_the_bytes(tmp_path: Path) -> None:
    copy = tmp_path / "corpus"
    shutil.copytree(default_corpus_dir(), copy)
    assert load_corpus(copy).digest == load_corpus().digest
    go_file = next((copy / "go").glob("*.go"))
    go_file.write_text(go_file.read_text() + "\n// changed\n")
    assert load_corpus(copy).digest != load_corpus().digest


def test_missing_file_and_bad_manifest_are_clear_errors(tmp_path: Path) -> None:
    copy = tmp_path / "corpus"
    shutil.copytree(default_corpus_dir(), copy)
    next((copy / "typescript").glob("*.ts")).unlink()
    with pytest.raises(CorpusError, match="missing"):
        load_corpus(copy)
    manifest = json.loads((copy / "corpus.json").read_text())
    del manifest["version"]
    (copy / "corpus.json").write_text(json.dumps(manifest))
    with pytest.raises(CorpusError, match="malformed"):
        load_corpus(copy)
    with pytest.raises(CorpusError):
        load_corpus(tmp_path / "nowhere")
