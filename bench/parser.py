"""Benchmark: tool-call parser throughput (MB/s of model output) now against an earlier commit; prints JSON.

The earlier parser is loaded in the same run from git history (`git show REV:path` into a
temporary package), so both are timed on the same machine, the same replies and the same
chunkings: whole replies, and replies fed in chunks of 1 to 8 characters (a seeded random
split, like a token stream). Both must give the same reasoning, content and calls on this
common path (exact calls only); the ratio is now / before (above 1: faster now).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from frogdesk.engine.chat import Reply, ToolCall, ToolSchema
from frogdesk.engine.toolcall import parser as parser_now
from frogdesk.leaf.schemas import tool_schemas

MODULES = ("parser", "scan", "values")
PACKAGE = "frogdesk/engine/toolcall"
RECOVERY_SUBJECT = "Tool calls: recover the format drifts"
CODE = "def add(a: int, b: int) -> int:\n    return a + b  # <b> & </b>\n\n"


def default_before(root: Path) -> str:
    """The commit just before the drift recovery came in."""
    out = subprocess.run(
        ["git", "log", "-n1", "--format=%H", f"--grep=^{RECOVERY_SUBJECT}", "HEAD"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not out:
        raise SystemExit("cannot find the recovery commit; pass --before REV")
    return out + "^"


def load_before(root: Path, rev: str, into: Path) -> ModuleType:
    """The parser package as it was at `rev`, importable as `parser_before.parser`."""
    package = into / "parser_before"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    for name in MODULES:
        source = subprocess.run(
            ["git", "show", f"{rev}:{PACKAGE}/{name}.py"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        source = source.replace("frogdesk.engine.toolcall.", "parser_before.")
        (package / f"{name}.py").write_text(source, encoding="utf-8")
    sys.path.insert(0, str(into))
    return importlib.import_module("parser_before.parser")


def make_replies(n: int, seed: int) -> list[str]:
    """Replies shaped like an agent's steps: reasoning, a line of content, one to three calls."""
    rng = random.Random(seed)
    render = parser_now.render_tool_call_xml
    replies = []
    for i in range(n):
        reasoning = "I should look at the file first. " * rng.randint(2, 30)
        calls = []
        for j in range(rng.randint(1, 3)):
            kind = rng.choice(["Read", "Edit", "Bash", "Write"])
            if kind == "Read":
                call = ToolCall("Read", {"file_path": f"src/m{i}.py", "offset": j + 1})
            elif kind == "Edit":
                old, new = CODE * rng.randint(1, 5), CODE.replace("+", "-") * rng.randint(1, 5)
                call = ToolCall("Edit", {"file_path": "a.py", "old_string": old, "new_string": new})
            elif kind == "Bash":
                call = ToolCall(
                    "Bash", {"command": "pytest -q tests/ 2>&1 | tail -5", "timeout": 60}
                )
            else:
                call = ToolCall(
                    "Write", {"file_path": f"b{i}.py", "content": CODE * rng.randint(5, 40)}
                )
            calls.append(render(call))
        replies.append(f"{reasoning}\n</think>\n\nLet me do that.\n" + "\n".join(calls))
    return replies


def chunkings(replies: Sequence[str], seed: int) -> list[list[str]]:
    """Each reply split into pieces of 1 to 8 characters."""
    rng = random.Random(seed)
    out = []
    for text in replies:
        pieces, at = [], 0
        while at < len(text):
            step = rng.randint(1, 8)
            pieces.append(text[at : at + step])
            at += step
        out.append(pieces)
    return out


def parse_all(module: ModuleType, tools: list[ToolSchema], chunked: list[list[str]]) -> list[Any]:
    """Feed every reply through a fresh parser; the replies' text and calls."""
    results = []
    for pieces in chunked:
        parser = module.QwenXmlToolParser(tools)
        reply = Reply()
        for piece in pieces:
            for event in parser.feed(piece):
                reply.add(event)
        for event in parser.finish():
            reply.add(event)
        results.append((reply.reasoning, reply.content, reply.tool_calls, len(reply.errors)))
    return results


def best_of_both(
    first: Callable[[], object], second: Callable[[], object], repeat: int
) -> tuple[float, float]:
    """The best CPU times of `repeat` runs of each (CPU, not wall: the machine is shared), alternated."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for fn, out in ((first, times[0]), (second, times[1])):
            start = time.process_time()
            fn()
            out.append(time.process_time() - start)
    return min(times[0]), min(times[1])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--before", help="git revision of the earlier parser (default: just before the recovery)"
    )
    ap.add_argument("--replies", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    rev = args.before or default_before(root)
    tools = tool_schemas()
    replies = make_replies(args.replies, args.seed)
    megabytes = sum(len(r.encode("utf-8")) for r in replies) / 1e6
    shapes = {"whole": [[r] for r in replies], "chunks_1_8": chunkings(replies, args.seed)}
    with tempfile.TemporaryDirectory() as tmp:
        before = load_before(root, rev, Path(tmp))
        out: dict[str, Any] = {
            "before": rev,
            "megabytes": round(megabytes, 3),
            "repeat": args.repeat,
        }
        for shape, chunked in shapes.items():
            now_result = parse_all(parser_now, tools, chunked)
            if parse_all(before, tools, chunked) != now_result:
                raise SystemExit(f"{shape}: the two parsers disagree on the common path")
            if any(errors for *_, errors in now_result):
                raise SystemExit(f"{shape}: a generated call did not parse")
            t_before, t_now = best_of_both(
                functools.partial(parse_all, before, tools, chunked),
                functools.partial(parse_all, parser_now, tools, chunked),
                args.repeat,
            )
            out[shape] = {
                "before_mb_s": round(megabytes / t_before, 2),
                "now_mb_s": round(megabytes / t_now, 2),
                "ratio_now_over_before": round(t_before / t_now, 3),
            }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
