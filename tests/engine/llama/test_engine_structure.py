"""The llama engine's state has one owner: the conversation alone writes its transcript,
no class skips its base's constructor, and both decode targets are one protocol."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from frogdesk.engine.llama.decode.batch import SequenceContext
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.decode.target import DecodeTarget
from frogdesk.engine.llama.errors import DecodeError
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.shared import SharedLlama

ENGINE = Path(__file__).resolve().parents[3] / "frogdesk" / "engine"
OWNERS = {"llama/conversation/conversation.py", "llama/conversation/transcript.py"}
"""Where the transcript's fields may be written."""
FIELDS = {"tokens", "n_past", "schedule", "covered", "boundaries", "messages", "context_key"}
MUTATORS = {"append", "extend", "clear", "insert", "pop", "remove", "reset", "cut"}


def _single(context: LlamaContext) -> DecodeTarget:
    return context  # mypy checks that a context of its own is a decode target


def _shared(slot: SequenceContext) -> DecodeTarget:
    return slot  # ... and so is one sequence of a shared context


def transcript_writes(source: str) -> list[int]:
    """Lines that assign to, or mutate, a transcript field reached through `.transcript`
    or a local `t` (how the engine names a transcript)."""

    def is_transcript(node: ast.expr) -> bool:
        return (isinstance(node, ast.Name) and node.id in {"t", "transcript"}) or (
            isinstance(node, ast.Attribute) and node.attr in {"transcript", "_t"}
        )

    def field_of_transcript(node: ast.expr) -> bool:
        return isinstance(node, ast.Attribute) and node.attr in FIELDS and is_transcript(node.value)

    lines = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            if func.attr in MUTATORS and (field_of_transcript(func.value) or (
                func.attr in {"reset", "cut"} and is_transcript(func.value)
            )):  # fmt: skip
                lines.append(node.lineno)
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.expr) and field_of_transcript(part):
                    lines.append(node.lineno)
    return sorted(set(lines))


def test_the_scan_finds_a_write_to_the_transcript() -> None:
    """Positive control: each way of writing the transcript is seen."""
    source = (
        "t.n_past += 1\n"
        "backend.transcript.tokens.append(5)\n"
        "self._t.schedule = []\n"
        "t.reset()\n"
        "n = t.n_past\n"  # a read
        "tokens.append(3)\n"  # not a transcript
    )
    assert transcript_writes(source) == [1, 2, 3, 4]


def test_only_the_conversation_writes_the_transcript() -> None:
    found = {}
    for path in sorted(ENGINE.rglob("*.py")):
        name = path.relative_to(ENGINE).as_posix()
        if name in OWNERS:
            continue
        lines = transcript_writes(path.read_text(encoding="utf-8"))
        if lines:
            found[name] = lines
    assert found == {}


def constructors_skipping_their_base(source: str) -> list[str]:
    """Classes with a base of their own (not object, Protocol, an exception or a dataclass
    field holder) whose `__init__` never calls `super().__init__`."""
    skipping = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef) or not node.bases:
            continue
        bases = [ast.unparse(base) for base in node.bases]
        if all(b in {"object", "Protocol", "NamedTuple"} or b.endswith("Error") for b in bases):
            continue
        init = next(
            (n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"),
            None,
        )
        if init is None:
            continue
        calls = [
            n
            for n in ast.walk(init)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "__init__"
            and ast.unparse(n.func.value) == "super()"
        ]
        if not calls:
            skipping.append(node.name)
    return skipping


def test_the_scan_finds_a_constructor_that_skips_its_base() -> None:
    """Positive control: the shape `SequenceBackend(LlamaBackend)` had is flagged."""
    source = (
        "class A:\n    def __init__(self): self.x = 1\n"
        "class B(A):\n    def __init__(self): self.y = 2\n"
        "class C(A):\n    def __init__(self):\n        super().__init__()\n"
        "class D(A):\n    pass\n"
    )
    assert constructors_skipping_their_base(source) == ["B"]


def test_no_engine_class_skips_its_base_constructor() -> None:
    found = {}
    for path in sorted(ENGINE.rglob("*.py")):
        names = constructors_skipping_their_base(path.read_text(encoding="utf-8"))
        if names:
            found[path.relative_to(ENGINE).as_posix()] = names
    assert found == {}


def test_a_shared_sequence_refuses_a_draft_and_the_backends_share_one_base(
    smollm2_gguf: Path,
) -> None:
    """One sequence of a shared context has one row per batch: it says so and refuses to
    verify (a context of its own verifies); the conversation on it decodes as usual."""
    from frogdesk.engine.llama.backend import LlamaBackend
    from frogdesk.engine.llama.conversation.replying import ConversationBackend

    shared = SharedLlama(smollm2_gguf, 2, LlamaOptions(n_ctx=512, n_threads=1))
    try:
        backend = shared.backends[0]
        assert isinstance(backend, ConversationBackend) and not isinstance(backend, LlamaBackend)
        assert backend.drafting is None and not backend.context.can_verify
        with pytest.raises(DecodeError, match="cannot verify a draft"):
            backend.context.decode_rows([1, 2], 0)
        tokens = shared.model.tokenize("Hello there")
        assert backend.context.decode(tokens, 0) == len(tokens)
    finally:
        shared.close()
    single = LlamaBackend(smollm2_gguf, LlamaOptions(n_ctx=512, n_threads=1, speculative=False))
    try:
        assert single.context.can_verify
        single.context.decode_rows(single.model.tokenize("Hello there"), 0)
        assert len(single.context.logits()) == single.model.n_vocab
    finally:
        single.close()
