"""The one atomic write: old or new, never half; no temp file left; modes kept; files named."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from frogdesk.durable import atomic_write_bytes, atomic_write_text, publish


def test_replaces_keeping_the_mode_and_leaving_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "f.sh"
    path.write_text("old")
    path.chmod(0o751)
    atomic_write_text(path, "new")
    assert path.read_text() == "new" and path.stat().st_mode & 0o777 == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["f.sh"]


def test_text_that_cannot_be_encoded_touches_nothing(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(path, "bad \ud800")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_a_full_disk_keeps_the_old_file_and_names_the_new_one(small_disk: Path) -> None:
    path = small_disk / "f.bin"
    path.write_bytes(b"old")
    with pytest.raises(OSError) as caught:
        atomic_write_bytes(path, b"x" * (4 * 2**20))
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(path)
    assert path.read_bytes() == b"old" and [p.name for p in small_disk.iterdir()] == ["f.bin"]
    atomic_write_bytes(path, b"fits")  # control: a write that fits goes through
    assert path.read_bytes() == b"fits"


def test_publish_moves_a_finished_file_or_symlink_in_place(tmp_path: Path) -> None:
    (tmp_path / "part").write_bytes(b"done")
    publish(tmp_path / "part", tmp_path / "final")
    (tmp_path / "link.tmp").symlink_to("final")
    publish(tmp_path / "link.tmp", tmp_path / "link")
    assert (tmp_path / "link").read_bytes() == b"done" and (tmp_path / "link").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final", "link"]
