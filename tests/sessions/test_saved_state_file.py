"""The saved-state file read back as hostile: damage, truncation, size, links; the cap and discard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from frogdesk.engine.llama.conversation.saved_state import EngineState, read_state, write_to
from frogdesk.engine.llama.errors import SavedStateError
from frogdesk.sessions.saved_states import (
    _make_room,
    discard_state,
    state_file,
    states_on_disk,
)

STATE = EngineState({"model": "m", "n_ctx": 64}, (1, 2, 3, 4), ((0, 3), (3, 1)), b"\x07" * 4096)


def written(path: Path, state: EngineState = STATE) -> Path:
    """`state` written to `path` in the file format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        write_to(handle, state)
    return path


def test_a_state_reads_back_as_written(tmp_path: Path) -> None:
    assert read_state(written(tmp_path / "s"), 1 << 20) == STATE


def test_every_truncation_and_every_flipped_byte_is_refused(tmp_path: Path) -> None:
    good = written(tmp_path / "s").read_bytes()
    bad = tmp_path / "bad"
    for cut in range(0, len(good), 97):
        bad.write_bytes(good[:cut])
        with pytest.raises(SavedStateError):
            read_state(bad, 1 << 20)
    for at in range(0, len(good), 53):
        flipped = bytearray(good)
        flipped[at] ^= 0x40
        bad.write_bytes(bytes(flipped))
        with pytest.raises(SavedStateError):
            read_state(bad, 1 << 20)
    bad.write_bytes(good)  # positive control: the same path with the good bytes loads
    assert read_state(bad, 1 << 20) == STATE


def test_a_file_over_the_cap_or_behind_a_link_is_not_read(tmp_path: Path) -> None:
    path = written(tmp_path / "s")
    with pytest.raises(SavedStateError, match="larger than the cap"):
        read_state(path, 100)
    link = tmp_path / "link"
    link.symlink_to(path)
    with pytest.raises(OSError):
        read_state(link, 1 << 20)
    assert read_state(path, 1 << 20) == STATE


@pytest.mark.parametrize(
    ("tokens", "schedule"),
    [((), ()), ((1, -2), ((0, 2),)), ((1, 2), ((0, 1),)), ((1, 2), ((1, 1), (0, 1)))],
)
def test_a_header_that_does_not_describe_its_tokens_is_refused(
    tmp_path: Path, tokens: tuple[int, ...], schedule: tuple[tuple[int, int], ...]
) -> None:
    path = written(tmp_path / "s", EngineState({}, tokens, schedule, b"x"))
    with pytest.raises(SavedStateError):
        read_state(path, 1 << 20)


def test_the_oldest_states_make_room_and_discard_removes_one(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    files = [written(state_file(sessions / f"s{i}")) for i in range(3)]
    for age, path in enumerate(files):
        os.utime(path, (1000 + age, 1000 + age))
    size = files[0].stat().st_size
    assert states_on_disk(sessions).count == 3
    mine = state_file(sessions / "s9")
    _make_room(sessions, mine, size, 3 * size)
    assert [p.exists() for p in files] == [False, True, True]
    assert discard_state(sessions / "s2") and not files[2].exists()
    assert not discard_state(sessions / "s2")
    assert states_on_disk(sessions).total == size
