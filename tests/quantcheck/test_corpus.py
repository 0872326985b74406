"""The shipped corpus: versioned, four languages and transcripts, tool-call cases, none of it ours."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from frogdesk.leaf.schemas import TOOL_NAMES
from frogdesk.quantcheck.corpus import (
    CODE,
    TRANSCRIPT,
    Corpus,
    default_corpus_dir,
    load_corpus,
    render_call,
)
from frogdesk.quantcheck.errors import CorpusError

REPO = Path(__file__).resolve().parents[2]
WINDOW = 8
"""Consecutive non-blank lines that, found verbatim in FrogDesk's source, mark a copy."""


def test_shipped_corpus_covers_languages_and_transcripts() -> None:
    corpus = load_corpus()
    assert corpus.version == "2"
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


def _lines(text: str) -> list[str]:
    """Non-blank lines with whitespace runs collapsed, so re-indenting a copy does not hide it."""
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _window_hashes(text: str) -> set[bytes]:
    lines = _lines(text)
    return {
        hashlib.sha256("\n".join(lines[i : i + WINDOW]).encode()).digest()
        for i in range(len(lines) - WINDOW + 1)
    }


@pytest.fixture(scope="module")
def own_source() -> set[bytes]:
    """Every 8-line window of FrogDesk's Python source (the package and its tests)."""
    windows: set[bytes] = set()
    for folder in ("frogdesk", "tests"):
        for path in sorted((REPO / folder).rglob("*.py")):
            windows |= _window_hashes(path.read_text(encoding="utf-8", errors="replace"))
    assert len(windows) > 10_000, "the source tree was found"
    return windows


def own_source_documents(corpus: Corpus, own_source: set[bytes]) -> list[str]:
    """Names of the corpus documents that are FrogDesk's own source, by file name or content."""
    return [
        doc.name
        for doc in corpus.documents
        if Path(doc.name).name.startswith("frogdesk_")
        or not own_source.isdisjoint(_window_hashes(doc.text))
    ]


def test_no_corpus_document_is_frogdesks_own_source(own_source: set[bytes]) -> None:
    corpus = load_corpus()
    assert own_source_documents(corpus, own_source) == []
    manifest = json.loads((default_corpus_dir() / "corpus.json").read_text())
    assert not [e["file"] for e in manifest["code"] if "frogdesk" in e["file"]]
    shipped = {
        p.relative_to(default_corpus_dir()).as_posix() for p in default_corpus_dir().rglob("*")
    }
    assert not [name for name in shipped if Path(name).name.startswith("frogdesk_")]


def test_own_source_check_flags_a_copied_module(tmp_path: Path, own_source: set[bytes]) -> None:
    # Positive control: a corpus built from a real module, re-indented and under an innocent
    # name, is flagged by content; one named like the old copies is flagged by name.
    copy = tmp_path / "corpus"
    shutil.copytree(default_corpus_dir(), copy)
    module = (REPO / "frogdesk" / "quantcheck" / "corpus.py").read_text()
    reindented = "\n".join("\t" + line.replace("    ", "  ") for line in module.splitlines())
    target = next((copy / "python").glob("*.py.txt"))
    target.write_text("# a harmless-looking header\n\n" + reindented + "\n")
    (copy / "python" / "frogdesk_renamed.py.txt").write_text("def f() -> int:\n    return 1\n")
    manifest = json.loads((copy / "corpus.json").read_text())
    manifest["code"].append({"file": "python/frogdesk_renamed.py.txt", "language": "python"})
    (copy / "corpus.json").write_text(json.dumps(manifest))
    flagged = own_source_documents(load_corpus(copy), own_source)
    relative = target.relative_to(copy).as_posix()
    assert flagged == [relative, "python/frogdesk_renamed.py.txt"]
