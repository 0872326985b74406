"""Tools that cannot lose a file or take FrogDesk down: a size cap, streamed reads, atomic writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from frogdesk.engine.chat import ToolCall
from frogdesk.leaf.runner import ToolRunner
from frogdesk.leaf.textfile import MAX_FILE_BYTES


def run(runner: ToolRunner, name: str, args: dict[str, object]) -> str:
    return runner.run(ToolCall(name, args)).observation


def test_read_of_a_huge_sparse_file_is_refused_not_loaded(
    runner: ToolRunner, workdir: Path
) -> None:
    with open(workdir / "huge.log", "wb") as handle:
        handle.truncate(3 * 2**30)  # 3 GiB of holes: no disk used, but read() would load it all
    out = run(runner, "Read", {"file_path": "huge.log", "limit": 1})
    assert out == (
        f"FileTooLarge: huge.log is {3 * 2**30} bytes; Read refuses files over {MAX_FILE_BYTES}"
        " bytes (look at a part of it with Bash, e.g. head, tail or sed -n)"
    )
    edit = run(runner, "Edit", {"file_path": "huge.log", "old_string": "a", "new_string": "b"})
    assert edit.startswith("FileTooLarge: huge.log is ") and "Edit refuses" in edit
    assert (workdir / "huge.log").stat().st_size == 3 * 2**30


def test_read_just_under_the_cap_still_works(runner: ToolRunner, workdir: Path) -> None:
    """Positive control: the cap refuses by size, not every large file."""
    with open(workdir / "big.txt", "wb") as handle:
        handle.write(b"first\n")
        handle.truncate(MAX_FILE_BYTES)
    assert run(runner, "Read", {"file_path": "big.txt", "limit": 1}) == "big.txt\n1. first"


def test_write_that_cannot_be_encoded_leaves_the_file_intact(
    runner: ToolRunner, workdir: Path
) -> None:
    before = (workdir / "a.py").read_bytes()
    out = run(runner, "Write", {"file_path": "a.py", "content": "abc\ud800"})
    assert out.startswith("UnicodeEncodeError: ")
    assert (workdir / "a.py").read_bytes() == before
    assert sorted(p.name for p in workdir.iterdir()) == ["a.py", "pkg"]  # no temp file left


def test_write_and_edit_replace_atomically_keeping_mode_and_symlinks(
    runner: ToolRunner, workdir: Path
) -> None:
    (workdir / "run.sh").write_text("echo one\n")
    (workdir / "run.sh").chmod(0o750)
    (workdir / "alias.sh").symlink_to("run.sh")
    inode = (workdir / "run.sh").stat().st_ino
    edit = {"file_path": "alias.sh", "old_string": "one", "new_string": "two"}
    assert run(runner, "Edit", edit) == "Edited alias.sh (1 replacement)."
    assert (workdir / "alias.sh").is_symlink()
    assert (workdir / "run.sh").read_text() == "echo two\n"
    assert (workdir / "run.sh").stat().st_mode & 0o777 == 0o750
    assert (workdir / "run.sh").stat().st_ino != inode  # a new file renamed in, not rewritten
    assert run(runner, "Write", {"file_path": "run.sh", "content": "x"}) == (
        "Wrote run.sh (1 bytes)."
    )
    assert (workdir / "run.sh").read_text() == "x"


def test_write_on_a_full_disk_leaves_the_old_file(small_disk: Path) -> None:
    runner = ToolRunner(small_disk, None)
    (small_disk / "keep.txt").write_text("precious\n")
    out = run(runner, "Write", {"file_path": "keep.txt", "content": "x" * (4 * 2**20)})
    assert out.startswith("OSError: [Errno 28] No space left on device")
    assert (small_disk / "keep.txt").read_text() == "precious\n"
    assert sorted(p.name for p in small_disk.iterdir()) == ["keep.txt"]
    fits = run(runner, "Write", {"file_path": "keep.txt", "content": "new\n"})  # control
    assert fits == "Wrote keep.txt (4 bytes)." and (small_disk / "keep.txt").read_text() == "new\n"


@pytest.mark.parametrize("size", [0, 1, 65535, 65536, 65537, 200_000])
def test_streamed_read_equals_whole_read_at_chunk_edges(
    runner: ToolRunner, workdir: Path, size: int
) -> None:
    """Line breaks of every kind, including a CRLF and a multi-byte character split
    across the 64 KiB read boundary, give exactly what decoding the whole file gives."""
    unit = "a\r\nb\rc\x0bd\x0ce\x1cf\u2028g\u0085é€\n"
    text = (unit * (size // len(unit) + 1))[:size]
    data = b"x" * 65535 + b"\r\n" + text.encode() + b"\xff\xfe tail"
    (workdir / "t.txt").write_bytes(data)
    lines = data.decode("utf-8", errors="replace").splitlines()
    shown = "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))
    full = f"t.txt\n{shown}"
    expected = (
        full if len(full) <= 20000 else f"{full[:20000]}\n[truncated {len(full) - 20000} chars]"
    )
    assert run(runner, "Read", {"file_path": "t.txt"}) == expected
    window = lines[2:5]
    assert run(runner, "Read", {"file_path": "t.txt", "offset": 3, "limit": 3}) == (
        "t.txt\n" + "\n".join(f"{i}. {line}" for i, line in enumerate(window, 3))
    )
    os.unlink(workdir / "t.txt")
