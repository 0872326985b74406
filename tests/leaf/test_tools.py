"""Every observation string of the Leaf protocol, tool by tool, on real files and a real shell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.runner import ToolRunner
from frogdesk.leaf.tools import bash_timeout


def run(runner: ToolRunner, name: str, args: Any) -> str:
    return runner.run(ToolCall(name, args)).observation


READ_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("whole file", {"file_path": "a.py"}, "a.py\n1. one\n2. two\n3. three\n4. four\n5. five"),
    ("path alias", {"path": "a.py", "limit": 1}, "a.py\n1. one"),
    ("offset", {"file_path": "a.py", "offset": 4}, "a.py\n4. four\n5. five"),
    ("offset and limit", {"file_path": "a.py", "offset": 2, "limit": 2}, "a.py\n2. two\n3. three"),
    ("offset 0 counts as 1", {"file_path": "a.py", "offset": 0, "limit": 1}, "a.py\n1. one"),
    (
        "negative offset counts as 1",
        {"file_path": "a.py", "offset": -5, "limit": 1},
        "a.py\n1. one",
    ),
    ("limit 0 means to the end", {"file_path": "a.py", "offset": 5, "limit": 0}, "a.py\n5. five"),
    (
        "negative limit means to the end",
        {"file_path": "a.py", "offset": 5, "limit": -1},
        "a.py\n5. five",
    ),
    ("offset past the end", {"file_path": "a.py", "offset": 99}, "a.py\n"),
    ("limit past the end", {"file_path": "a.py", "offset": 5, "limit": 10}, "a.py\n5. five"),
    (
        "numbers given as strings",
        {"file_path": "a.py", "offset": "2", "limit": "1"},
        "a.py\n2. two",
    ),
    ("absolute path inside", {"file_path": "{root}/pkg/mod.py"}, "pkg/mod.py\n1. x = 1\n2. y = 1"),
    ("dot segments inside", {"file_path": "pkg/../a.py", "limit": 1}, "a.py\n1. one"),
    ("missing file_path", {}, "ValueError: file_path is required"),
    ("empty file_path", {"file_path": ""}, "ValueError: file_path is required"),
    (
        "bad offset",
        {"file_path": "a.py", "offset": "x"},
        "ValueError: invalid literal for int() with base 10: 'x'",
    ),
]


@pytest.mark.parametrize(("name", "args", "expected"), READ_CASES, ids=[c[0] for c in READ_CASES])
def test_read(
    runner: ToolRunner, workdir: Path, name: str, args: dict[str, Any], expected: str
) -> None:
    args = {
        k: v.replace("{root}", str(workdir)) if isinstance(v, str) else v for k, v in args.items()
    }
    assert run(runner, "Read", args) == expected


def test_read_missing_file_is_an_error_observation(runner: ToolRunner) -> None:
    out = run(runner, "Read", {"file_path": "nope.py"})
    assert out.startswith("FileNotFoundError: [Errno 2] No such file or directory")


def test_read_directory_is_an_error_observation(runner: ToolRunner) -> None:
    assert run(runner, "Read", {"file_path": "pkg"}).startswith("IsADirectoryError: ")


def test_read_replaces_invalid_utf8(runner: ToolRunner, workdir: Path) -> None:
    (workdir / "latin.txt").write_bytes(b"caf\xe9\n")
    assert run(runner, "Read", {"file_path": "latin.txt"}) == "latin.txt\n1. caf\ufffd"


def test_read_decodes_binary_files_with_replacement_like_leaf(
    runner: ToolRunner, workdir: Path
) -> None:
    data = b"\x7fELF\x00\x01\x02" + bytes(range(256))
    (workdir / "blob.bin").write_bytes(data)
    lines = data.decode("utf-8", errors="replace").splitlines()
    expected = "blob.bin\n" + "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))
    assert run(runner, "Read", {"file_path": "blob.bin"}) == expected


def test_read_truncates_at_20000_chars(runner: ToolRunner, workdir: Path) -> None:
    lines = [f"line {i:05d} " + "x" * 40 for i in range(1000)]
    (workdir / "big.txt").write_text("\n".join(lines), encoding="utf-8")
    full = "big.txt\n" + "\n".join(f"{i + 1}. {line}" for i, line in enumerate(lines))
    out = run(runner, "Read", {"file_path": "big.txt"})
    assert out == full[:20000] + f"\n[truncated {len(full) - 20000} chars]"


def test_read_exactly_at_limit_is_not_truncated(runner: ToolRunner, workdir: Path) -> None:
    body = "y" * (20000 - len("f.txt\n1. "))
    (workdir / "f.txt").write_text(body, encoding="utf-8")
    assert run(runner, "Read", {"file_path": "f.txt"}) == f"f.txt\n1. {body}"


WRITE_CASES: list[tuple[str, dict[str, Any], str, str | None]] = [
    (
        "new file",
        {"file_path": "new.py", "content": "print(1)\n"},
        "Wrote new.py (9 bytes).",
        "new.py",
    ),
    (
        "parents created",
        {"file_path": "d/e/f.txt", "content": "hi"},
        "Wrote d/e/f.txt (2 bytes).",
        "d/e/f.txt",
    ),
    ("path alias", {"path": "alias.txt", "content": ""}, "Wrote alias.txt (0 bytes).", "alias.txt"),
    (
        "characters not bytes",
        {"file_path": "u.txt", "content": "héllo✓"},
        "Wrote u.txt (6 bytes).",
        "u.txt",
    ),
    ("overwrite", {"file_path": "a.py", "content": "new\n"}, "Wrote a.py (4 bytes).", "a.py"),
    ("missing content", {"file_path": "x.txt"}, "ValueError: content is required", None),
    ("missing file_path", {"content": "x"}, "ValueError: file_path is required", None),
]


@pytest.mark.parametrize(
    ("name", "args", "expected", "written"), WRITE_CASES, ids=[c[0] for c in WRITE_CASES]
)
def test_write(
    runner: ToolRunner,
    workdir: Path,
    name: str,
    args: dict[str, Any],
    expected: str,
    written: str | None,
) -> None:
    assert run(runner, "Write", args) == expected
    if written is not None:
        assert (workdir / written).read_bytes() == args["content"].encode("utf-8")


EDIT_CASES: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "one match",
        {"old_string": "x = 1", "new_string": "x = 2"},
        "Edited pkg/mod.py (1 replacement).",
        "x = 2\ny = 1\n",
    ),
    (
        "empty old_string",
        {"old_string": "", "new_string": "z"},
        "ValueError: old_string must be non-empty",
        "x = 1\ny = 1\n",
    ),
    (
        "not found",
        {"old_string": "zzz", "new_string": "z"},
        "ValueError: old_string was not found",
        "x = 1\ny = 1\n",
    ),
    (
        "several matches",
        {"old_string": " = 1", "new_string": " = 2"},
        "ValueError: old_string matched 2 times; set replace_all=true or use a more specific old_string",
        "x = 1\ny = 1\n",
    ),
    (
        "replace_all",
        {"old_string": " = 1", "new_string": " = 2", "replace_all": True},
        "Edited pkg/mod.py (2 replacements).",
        "x = 2\ny = 2\n",
    ),
    (
        "replace_all 'true'",
        {"old_string": "1", "new_string": "3", "replace_all": "true"},
        "Edited pkg/mod.py (2 replacements).",
        "x = 3\ny = 3\n",
    ),
    (
        "replace_all 'yes'",
        {"old_string": "1", "new_string": "3", "replace_all": "yes"},
        "Edited pkg/mod.py (2 replacements).",
        "x = 3\ny = 3\n",
    ),
    (
        "replace_all 'on'",
        {"old_string": "1", "new_string": "3", "replace_all": "On"},
        "Edited pkg/mod.py (2 replacements).",
        "x = 3\ny = 3\n",
    ),
    (
        "replace_all '1'",
        {"old_string": "1", "new_string": "3", "replace_all": "1"},
        "Edited pkg/mod.py (2 replacements).",
        "x = 3\ny = 3\n",
    ),
    (
        "replace_all 'false' string",
        {"old_string": "1", "new_string": "3", "replace_all": "false"},
        "ValueError: old_string matched 2 times; set replace_all=true or use a more specific old_string",
        "x = 1\ny = 1\n",
    ),
    (
        "replace_all 'no' string",
        {"old_string": "1", "new_string": "3", "replace_all": "no"},
        "ValueError: old_string matched 2 times; set replace_all=true or use a more specific old_string",
        "x = 1\ny = 1\n",
    ),
    (
        "replace_all with one match",
        {"old_string": "y", "new_string": "w", "replace_all": True},
        "Edited pkg/mod.py (1 replacement).",
        "x = 1\nw = 1\n",
    ),
    (
        "delete text",
        {"old_string": "y = 1\n", "new_string": ""},
        "Edited pkg/mod.py (1 replacement).",
        "x = 1\n",
    ),
    (
        "missing new_string",
        {"old_string": "x"},
        "ValueError: new_string is required",
        "x = 1\ny = 1\n",
    ),
]


@pytest.mark.parametrize(
    ("name", "args", "expected", "after"), EDIT_CASES, ids=[c[0] for c in EDIT_CASES]
)
def test_edit(
    runner: ToolRunner, workdir: Path, name: str, args: dict[str, Any], expected: str, after: str
) -> None:
    assert run(runner, "Edit", {"file_path": "pkg/mod.py", **args}) == expected
    assert (workdir / "pkg" / "mod.py").read_text(encoding="utf-8") == after


def test_edit_missing_file(runner: ToolRunner) -> None:
    out = run(runner, "Edit", {"file_path": "nope.py", "old_string": "a", "new_string": "b"})
    assert out.startswith("FileNotFoundError: ")


def test_edit_path_alias(runner: ToolRunner) -> None:
    assert (
        run(runner, "Edit", {"path": "a.py", "old_string": "two", "new_string": "2"})
        == "Edited a.py (1 replacement)."
    )


def test_edit_keeps_crlf(runner: ToolRunner, workdir: Path) -> None:
    (workdir / "w.txt").write_bytes(b"a\r\nb\r\n")
    assert (
        run(runner, "Edit", {"file_path": "w.txt", "old_string": "b", "new_string": "c"})
        == "Edited w.txt (1 replacement)."
    )
    assert (workdir / "w.txt").read_bytes() == b"a\r\nc\r\n"


def make_glob_tree(root: Path, names: list[str]) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")


GLOB_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("top level", {"pattern": "*.py"}, "a.py"),
    ("recursive", {"pattern": "**/*.py"}, "a.py\npkg/mod.py\nsrc/deep/er/z.py\nsrc/m.py"),
    ("from a path", {"pattern": "**/*.py", "path": "src"}, "src/deep/er/z.py\nsrc/m.py"),
    ("from a path, one level", {"pattern": "*.py", "path": "src"}, "src/m.py"),
    ("double star spans none", {"pattern": "src/**/m.py"}, "src/m.py"),
    ("trailing double star lists files only", {"pattern": "src/**"}, "src/deep/er/z.py\nsrc/m.py"),
    ("hidden names skipped by wildcards", {"pattern": "**/*.cfg"}, "No files matched."),
    ("hidden names matched by a dot pattern", {"pattern": ".*"}, ".hidden.cfg"),
    ("hidden dir by literal name", {"pattern": ".github/*.yml"}, ".github/ci.yml"),
    ("question mark and class", {"pattern": "pkg/[dm]?*.*"}, "pkg/data.txt\npkg/mod.py"),
    ("literal path", {"pattern": "pkg/mod.py"}, "pkg/mod.py"),
    ("directories are not listed", {"pattern": "*"}, "a.py"),
    ("nothing", {"pattern": "*.rs"}, "No files matched."),
    (".git never descended", {"pattern": ".git/*"}, "No files matched."),
    (".git skipped by dot patterns", {"pattern": "**/.*"}, ".hidden.cfg"),
    ("missing pattern", {}, "ValueError: pattern is required"),
]


@pytest.mark.parametrize(("name", "args", "expected"), GLOB_CASES, ids=[c[0] for c in GLOB_CASES])
def test_glob(
    runner: ToolRunner, workdir: Path, name: str, args: dict[str, Any], expected: str
) -> None:
    make_glob_tree(
        workdir,
        [
            "src/m.py",
            "src/deep/er/z.py",
            ".hidden.cfg",
            ".github/ci.yml",
            ".git/config",
            ".git/HEAD",
            "src/.cache/q.py",
        ],
    )
    assert run(runner, "Glob", args) == expected


def test_glob_lists_at_most_1000(runner: ToolRunner, workdir: Path) -> None:
    make_glob_tree(workdir, [f"many/f{i:04d}.txt" for i in range(1234)])
    out = run(runner, "Glob", {"pattern": "many/*.txt"}).split("\n")
    assert len(out) == 1001
    assert out[:2] == ["many/f0000.txt", "many/f0001.txt"]
    assert out[999] == "many/f0999.txt"
    assert out[1000] == "... 234 more files"


def test_glob_exactly_1000_has_no_tail(runner: ToolRunner, workdir: Path) -> None:
    make_glob_tree(workdir, [f"many/f{i:04d}.txt" for i in range(1000)])
    out = run(runner, "Glob", {"pattern": "many/*"}).split("\n")
    assert len(out) == 1000 and out[-1] == "many/f0999.txt"


def test_bash_exit_code_and_streams(runner: ToolRunner) -> None:
    out = run(runner, "Bash", {"command": "echo out; echo err >&2; exit 3", "description": "demo"})
    assert out == "Exit code: 3\nSTDOUT:\nout\n\nSTDERR:\nerr\n"


def test_bash_runs_in_workdir(runner: ToolRunner, workdir: Path) -> None:
    assert (
        run(runner, "Bash", {"command": "pwd"}) == f"Exit code: 0\nSTDOUT:\n{workdir}\n\nSTDERR:\n"
    )


def test_bash_timeout_keeps_output(runner: ToolRunner) -> None:
    out = run(runner, "Bash", {"command": "echo started; echo warn >&2; sleep 30", "timeout": 0.5})
    assert out == "Timed out after 0.5s\nSTDOUT:\nstarted\n\nSTDERR:\nwarn\n"


def test_bash_timeout_in_milliseconds_above_1000(runner: ToolRunner) -> None:
    assert (
        run(runner, "Bash", {"command": "sleep 30", "timeout": 1500})
        == "Timed out after 1.5s\nSTDOUT:\n\nSTDERR:\n"
    )


def test_bash_timeout_ms_argument(runner: ToolRunner) -> None:
    assert (
        run(runner, "Bash", {"command": "sleep 30", "timeout_ms": 700})
        == "Timed out after 0.7s\nSTDOUT:\n\nSTDERR:\n"
    )


@pytest.mark.parametrize(
    ("args", "seconds"),
    [
        ({}, 120.0),
        ({"timeout": 5}, 5.0),
        ({"timeout": "7.5"}, 7.5),
        ({"timeout": 1000}, 1000.0),
        ({"timeout": 1001}, 1.001),
        ({"timeout": 30000}, 30.0),
        ({"timeout_ms": 2500}, 2.5),
        ({"timeout_ms": 2500, "timeout": 9}, 2.5),
        ({"timeout": 0}, 120.0),
    ],
)
def test_bash_timeout_rules(args: dict[str, Any], seconds: float) -> None:
    assert bash_timeout(args) == pytest.approx(seconds)


def test_bash_truncates_at_30000(runner: ToolRunner) -> None:
    out = run(runner, "Bash", {"command": "python3 -c \"print('z' * 40000)\""})
    full = "Exit code: 0\nSTDOUT:\n" + "z" * 40000 + "\n\nSTDERR:\n"
    assert out == full[:30000] + f"\n[truncated {len(full) - 30000} chars]"


def test_bash_missing_command(runner: ToolRunner) -> None:
    assert run(runner, "Bash", {}) == "ValueError: command is required"


def test_unknown_tool(runner: ToolRunner) -> None:
    assert run(runner, "Delete", {"file_path": "a.py"}) == "Unknown tool: Delete"


@pytest.mark.parametrize("args", [["a.py"], "a.py", None, 3])
def test_non_object_arguments_run_with_no_arguments(runner: ToolRunner, args: Any) -> None:
    assert run(runner, "Read", args) == "ValueError: file_path is required"
    assert run(runner, "Glob", args) == "ValueError: pattern is required"


def test_outcome_flags(runner: ToolRunner) -> None:
    assert runner.run(ToolCall("Read", {"file_path": "a.py"})).ok
    assert not runner.run(ToolCall("Read", {})).ok
    assert not runner.run(ToolCall("Nope", {})).ok
