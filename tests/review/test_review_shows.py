"""`frogdesk review` shows everything a user approves: lines, symlink targets, modes, binary sizes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.paths import AppPaths
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore
from tests.support.review_helpers import MakeSession


def _session(repo: Path, make_session: MakeSession) -> Path:
    wt = make_session(repo)
    SessionStore(AppPaths.default().sessions_dir).create(
        SessionRecord("show-1", str(repo), str(wt.path), wt.base_commit, task="t", model="m")
    )
    return wt.path


def test_text_review_shows_content_targets_modes_and_sizes(
    user_repo: Path, make_session: MakeSession, capsys: pytest.CaptureFixture[str]
) -> None:
    wt = _session(user_repo, make_session)
    (wt / "b.txt").write_bytes(b"alpha\nBETA \x1b[2J\x1b]0;owned\x07\ngamma\n")
    (wt / "evil_link").symlink_to("/home/user/.bashrc")
    (wt / "src" / "m.py").chmod(0o755)
    (wt / "blob.bin").write_bytes(b"\x00\x01" * 1000)
    assert main(["review", "show-1"]) == 0
    out = capsys.readouterr().out
    assert "      -beta\n" in out
    assert "      +BETA \\x1b[2J\\x1b]0;owned\\x07\n" in out  # the escapes shown, not run
    assert "\x1b" not in out and "\x07" not in out
    assert "      -> /home/user/.bashrc\n" in out
    assert "content: absent => symlink -> /home/user/.bashrc" in out
    assert "      mode 100644 -> 100755\n" in out
    assert "      binary: absent => 2000 bytes\n" in out


def test_json_review_carries_lines_targets_and_sizes(
    user_repo: Path, make_session: MakeSession, capsys: pytest.CaptureFixture[str]
) -> None:
    wt = _session(user_repo, make_session)
    (wt / "b.txt").write_bytes("alpha\nbeta\u009b31m\ngamma\n".encode())
    (wt / "evil_link").symlink_to("../../etc/passwd")
    (wt / "blob.bin").write_bytes(b"\x00" * 10)
    assert main(["review", "show-1", "--json"]) == 0
    raw = capsys.readouterr().out
    assert raw.isascii()  # no C1 control (like \x9b, a CSI) can reach a terminal
    files = {f["path"]: f for f in json.loads(raw)["files"]}
    assert files["b.txt"]["hunks"][0]["lines"] == [" alpha", "-beta", "+beta\x9b31m", " gamma"]
    link = files["evil_link"]["hunks"][0]
    assert (link["new_target"], files["evil_link"]["new_mode"]) == ("../../etc/passwd", "120000")
    assert files["blob.bin"]["binary"] and files["blob.bin"]["hunks"][0]["new_size"] == 10
