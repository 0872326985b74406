"""One home per rule: backend kinds are told apart only in the engine's registry, a model's
warnings come from one producer, and the budget defaults are written once."""

from __future__ import annotations

import ast
import io
import re
import shutil
import tokenize
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

import frogdesk
from frogdesk.config import (
    CHOICES,
    DEFAULT_MAX_CONTEXT_TOKENS,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOKENS_PER_TURN,
    Settings,
)
from frogdesk.engine.chat import GenerationSettings
from frogdesk.engine.kinds import KIND_NAMES, KINDS, kind_of
from frogdesk.leaf.loop import LoopConfig

PACKAGE = Path(frogdesk.__file__).parent
REGISTRY = Path("engine/registry.py")
WARNINGS = Path("models/model_warnings.py")

GREP = re.compile(r'[=!]= "(llama|openai|script)"')
"""The issue's grep (`== "llama"` and friends), with `!=` too."""


def _kind_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in KIND_NAMES


def _compares_a_kind(node: ast.Compare) -> bool:
    operands = [node.left, *node.comparators]
    for op, right in zip(node.ops, node.comparators, strict=True):
        if isinstance(op, ast.Eq | ast.NotEq) and any(_kind_literal(o) for o in operands):
            return True
        listed = right.elts if isinstance(right, ast.Tuple | ast.List | ast.Set) else []
        if isinstance(op, ast.In | ast.NotIn) and any(_kind_literal(e) for e in listed):
            return True
    return False


def _tells_kinds_apart(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare):
        return _compares_a_kind(node)
    if isinstance(node, ast.MatchValue):
        return _kind_literal(node.value)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
        and "LlamaBackend" in ast.unparse(node.args[1])
    )


def kind_comparisons(source: str) -> list[int]:
    """Lines of `source` that tell backend kinds apart by name or class: `== "llama"`,
    `!= "script"`, `in ("script", "openai")`, `case "openai":`, `isinstance(x, LlamaBackend)`."""
    found = {n for n, line in enumerate(source.splitlines(), 1) if GREP.search(line)}
    found |= {
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.expr | ast.pattern) and _tells_kinds_apart(node)
    }
    return sorted(found)


def sources(root: Path) -> Iterator[tuple[Path, str]]:
    """Every module under `root`, by its path relative to `root`."""
    for path in sorted(root.rglob("*.py")):
        yield path.relative_to(root), path.read_text(encoding="utf-8")


def kind_checks_outside_the_registry(root: Path) -> list[str]:
    """`file:line` of every kind comparison in the package at `root` but in its registry."""
    return [
        f"{rel}:{line}"
        for rel, text in sources(root)
        if rel != REGISTRY
        for line in kind_comparisons(text)
    ]


def test_backend_kinds_are_told_apart_only_in_the_registry() -> None:
    assert kind_checks_outside_the_registry(PACKAGE) == []


def test_the_kind_check_sees_every_form() -> None:
    sample = "\n".join(
        [
            'if record.backend == "llama": pass',
            'if kind != "openai": pass',
            'ok = backend in ("script", "openai")',
            'ok = backend not in ["llama"]',
            'ok = "script" == spec.backend',
            "ok = isinstance(old, LlamaBackend)",
            "match kind:\n    case 'openai':\n        pass",
            'ok = kind_of(record.backend).local_model and name == "model.gguf"',
            'info = BackendInfo(kind="llama", model="m")',
        ]
    )
    assert kind_comparisons(sample) == [1, 2, 3, 4, 5, 6, 8]


def test_the_kind_check_flags_a_line_planted_in_a_copy(tmp_path: Path) -> None:
    copy = tmp_path / "frogdesk"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    assert kind_checks_outside_the_registry(copy) == []
    launch = copy / "tui" / "launch.py"
    launch.write_text(
        launch.read_text(encoding="utf-8") + '\n\nPLANTED = Settings().backend == "llama"\n',
        encoding="utf-8",
    )
    lines = len(launch.read_text(encoding="utf-8").splitlines())
    assert kind_checks_outside_the_registry(copy) == [f"tui/launch.py:{lines}"]


def test_the_registry_knows_the_kinds_the_settings_accept() -> None:
    assert KIND_NAMES == CHOICES["backend"] == tuple(KINDS)
    assert kind_of("llama").local_model and kind_of("llama").shared_weights
    assert kind_of("openai").remote_endpoint and not kind_of("openai").local_model
    assert kind_of("script").replays_script and not kind_of("script").rereads_on_switch
    unknown = kind_of("magic")
    assert unknown.name == "magic"
    capabilities = [f.name for f in fields(unknown) if f.type == "bool"]
    assert capabilities and not any(getattr(unknown, name) for name in capabilities)


WARNING_RULES = ("model_warnings", "is_frognano")
"""The rules a call site would assemble warnings from, instead of asking `warnings_for`."""


def warning_assembly(source: str) -> list[int]:
    """Lines of `source` that assemble a model's warnings from the rules themselves."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) in WARNING_RULES
    )


def test_model_warnings_come_from_one_producer() -> None:
    found = [
        f"{rel}:{line}"
        for rel, text in sources(PACKAGE)
        if rel != WARNINGS
        for line in warning_assembly(text)
    ]
    assert found == []


def test_the_warnings_check_sees_a_call_site() -> None:
    sample = (
        "frog = is_frognano(repo, path.name)\n"
        "out = model_warnings(name, frog, acknowledged, repo)\n"
        "out = warnings_for(ModelFacts(name, repo))\n"
        "out = model_warnings_module.model_warnings(name, True)\n"
    )
    assert warning_assembly(sample) == [1, 2, 4]


BUDGET_NUMBERS = {"150", "131072", "131_072", "8192", "8_192"}
OTHER_MEANINGS = {
    ("engine/llama/load/plan.py", "FALLBACK_CONTEXT = 8192"),
    ("engine/llama/load/options.py", "n_ctx: int = 8192"),
}
"""8,192 as a context size where the memory plan cannot read the model: not a budget."""


def budget_numbers(source: str) -> list[tuple[int, str]]:
    """(line, stripped text) of each decimal literal in `source` that is a budget default's
    number (hex flags and numbers inside strings are not)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    lines = source.splitlines()
    return [
        (tok.start[0], lines[tok.start[0] - 1].strip())
        for tok in tokens
        if tok.type == tokenize.NUMBER and tok.string in BUDGET_NUMBERS
    ]


def test_the_budget_numbers_are_written_once() -> None:
    found = sorted(
        (str(rel), text)
        for rel, source in sources(PACKAGE)
        for _, text in budget_numbers(source)
        if (str(rel), text) not in OTHER_MEANINGS
    )
    assert found == [
        ("config/loop.py", "DEFAULT_MAX_CONTEXT_TOKENS = 131072"),
        ("config/loop.py", "DEFAULT_MAX_STEPS = 150"),
        ("config/loop.py", "DEFAULT_MAX_TOKENS_PER_TURN = 8192"),
    ]


def test_the_budget_check_sees_a_second_copy() -> None:
    sample = (
        "max_steps: int = 150\nflag = 0x00020000\nceiling = 131_072\nhelp = 'default 150'\n"
        "max_tokens = 8192\n"
    )
    assert [line for line, _ in budget_numbers(sample)] == [1, 3, 5]


def test_every_budget_default_is_the_one_definition() -> None:
    settings, loop, generation = Settings(), LoopConfig(), GenerationSettings()
    assert settings.loop.max_steps == loop.max_steps == DEFAULT_MAX_STEPS == 150
    assert settings.loop.max_context_tokens == loop.max_context == generation.max_context
    assert generation.max_context == DEFAULT_MAX_CONTEXT_TOKENS == 131072
    assert settings.loop.max_tokens_per_turn == loop.max_tokens_per_turn == generation.max_tokens
    assert generation.max_tokens == DEFAULT_MAX_TOKENS_PER_TURN == 8192
