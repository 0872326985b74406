"""Leaf parity: each of the five tools on a corpus of calls, byte for byte against Leaf's behaviour.

The reference below restates, in the simplest whole-file code, what Leaf's tool runner
does (the protocol's facts): read everything, decode with replacement, splitlines, join.
FrogDesk streams, caps sizes and writes atomically; for ordinary files the observation
and the resulting files must not differ by a byte.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.runner import ToolRunner
from tests.support.plain_shell import PlainShell


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}\n[truncated {len(text) - limit} chars]"


def _truthy(value: Any) -> bool:
    return (
        value.strip().lower() in {"1", "true", "yes", "on"}
        if isinstance(value, str)
        else bool(value)
    )


def leaf_reference(workdir: Path, tool: str, args: dict[str, Any]) -> str:
    """What Leaf's runner returns for these calls (only the paths the corpus uses)."""
    try:
        if tool == "Read":
            display = args.get("file_path") or args.get("path")
            text = (workdir / display).read_bytes().decode("utf-8", errors="replace")
            lines = text.splitlines()
            offset = max(int(args.get("offset") or 1), 1)
            limit = args.get("limit")
            chosen = (
                lines[offset - 1 :]
                if not limit or limit <= 0
                else lines[offset - 1 : offset - 1 + limit]
            )
            selected = "\n".join(f"{offset + i}. {line}" for i, line in enumerate(chosen))
            return _cut(f"{display}\n{selected}", 20000)
        if tool == "Write":
            display = args.get("file_path") or args.get("path")
            (workdir / display).parent.mkdir(parents=True, exist_ok=True)
            (workdir / display).write_text(args["content"], encoding="utf-8", newline="")
            return f"Wrote {display} ({len(args['content'])} bytes)."
        if tool == "Edit":
            display = args["file_path"]
            old, new = args["old_string"], args["new_string"]
            if not old:
                raise ValueError("old_string must be non-empty")
            text = (workdir / display).read_bytes().decode("utf-8")
            count = text.count(old)
            if count == 0:
                raise ValueError("old_string was not found")
            every = _truthy(args.get("replace_all", False))
            if count > 1 and not every:
                raise ValueError(
                    f"old_string matched {count} times; set replace_all=true or use a more specific old_string"
                )
            text = text.replace(old, new) if every else text.replace(old, new, 1)
            (workdir / display).write_bytes(text.encode("utf-8"))
            n = count if every else 1
            return f"Edited {display} ({n} {'replacement' if n == 1 else 'replacements'})."
        if tool == "Glob":
            base = workdir / args.get("path", ".")
            found = glob.glob(args["pattern"], root_dir=base, recursive=True)
            prefix = "" if args.get("path", ".") == "." else args["path"].rstrip("/") + "/"
            files = sorted(os.path.normpath(prefix + f) for f in found if (base / f).is_file())
            if not files:
                return "No files matched."
            more = f"\n... {len(files) - 1000} more files" if len(files) > 1000 else ""
            return "\n".join(files[:1000]) + more
        if tool == "Bash":
            done = subprocess.run(
                ["/bin/bash", "-c", args["command"]],
                cwd=workdir,
                capture_output=True,
                text=True,
                check=False,
            )
            return _cut(
                f"Exit code: {done.returncode}\nSTDOUT:\n{done.stdout}\nSTDERR:\n{done.stderr}",
                30000,
            )
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return f"Unknown tool: {tool}"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


CORPUS: list[tuple[str, dict[str, Any]]] = [
    ("Read", {"file_path": "a.py"}),
    ("Read", {"path": "a.py", "offset": 2, "limit": 2}),
    ("Read", {"file_path": "a.py", "offset": 99}),
    ("Read", {"file_path": "a.py", "offset": -3, "limit": 0}),
    ("Read", {"file_path": "crlf.txt"}),
    ("Read", {"file_path": "seps.txt"}),
    ("Read", {"file_path": "latin.txt"}),
    ("Read", {"file_path": "blob.bin"}),
    ("Read", {"file_path": "empty.txt"}),
    ("Read", {"file_path": "empty.txt", "offset": 2}),
    ("Read", {"file_path": "long.txt"}),
    ("Read", {"file_path": "long.txt", "offset": 500, "limit": 3}),
    ("Read", {"file_path": "no_final_newline.txt"}),
    ("Write", {"file_path": "new/deep/f.txt", "content": "x\r\ny\n"}),
    ("Write", {"file_path": "a.py", "content": "é€\n"}),
    ("Write", {"path": "empty.txt", "content": ""}),
    ("Edit", {"file_path": "crlf.txt", "old_string": "two", "new_string": "2"}),
    ("Edit", {"file_path": "rep.txt", "old_string": "x", "new_string": "y"}),
    ("Edit", {"file_path": "rep.txt", "old_string": "x", "new_string": "y", "replace_all": "yes"}),
    ("Edit", {"file_path": "rep.txt", "old_string": "zzz", "new_string": "y"}),
    ("Edit", {"file_path": "rep.txt", "old_string": "", "new_string": "y"}),
    ("Glob", {"pattern": "**/*.txt"}),
    ("Glob", {"pattern": "*.py"}),
    ("Glob", {"pattern": "*.txt", "path": "sub"}),
    ("Glob", {"pattern": "*.nothing"}),
    ("Bash", {"command": "echo out; echo err >&2; exit 3"}),
    ("Bash", {"command": "printf 'no newline'"}),
    ("Frob", {}),
]


def _make(root: Path) -> None:
    root.mkdir()
    (root / "a.py").write_text("one\ntwo\nthree\nfour\n")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n\r\n")
    (root / "seps.txt").write_bytes("a\x0bb\x0cc\x1cd\u2028e\u0085f\rg\n".encode())
    (root / "latin.txt").write_bytes(b"caf\xe9\n\xff\xfe\n")
    (root / "blob.bin").write_bytes(b"\x7fELF\x00\x01\n" + bytes(range(256)))
    (root / "empty.txt").write_bytes(b"")
    (root / "long.txt").write_text("".join(f"line {i} " + "z" * 60 + "\n" for i in range(1000)))
    (root / "no_final_newline.txt").write_bytes(b"last")
    (root / "rep.txt").write_text("x x x\n")
    (root / "sub").mkdir()
    (root / "sub" / "s.txt").write_text("s\n")
    (root / "sub" / ".hidden.txt").write_text("h\n")


@pytest.mark.parametrize(
    ("tool", "args"), CORPUS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(CORPUS)]
)
def test_observation_and_files_match_leaf(tmp_path: Path, tool: str, args: dict[str, Any]) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    _make(ours)
    shutil.copytree(ours, theirs)
    expected = leaf_reference(theirs, tool, dict(args))
    got = ToolRunner(ours, PlainShell()).run(ToolCall(tool, dict(args))).observation
    assert got == expected
    assert _tree(ours) == _tree(theirs)
