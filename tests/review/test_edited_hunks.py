"""`frogdesk review` shows an edited hunk as apply writes it, byte for byte (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogdesk.cli import main
from frogdesk.paths import AppPaths
from frogdesk.review.decisions_store import load_decisions, save_decisions
from frogdesk.review.diff import compute_diff
from frogdesk.review.edited import diff_lines, with_new_side
from frogdesk.review.model import apply_text_hunks
from frogdesk.sessions.record import SessionRecord
from frogdesk.sessions.store import SessionStore
from tests.support.review_helpers import MakeSession


def _new_side(lines: list[str]) -> bytes:
    """The new side a hunk's printed diff lines describe (context and added lines)."""
    out: list[str] = []
    for line in lines:
        if line.startswith("\\"):
            out[-1] = out[-1].removesuffix("\n")  # the line before has no line end
        elif line[:1] in (" ", "+"):
            out.append(line[1:] + "\n")
        elif line[:1] == "-":
            out.append("")  # keeps the `\` mark of a removed last line on its own line
    return "".join(out).encode("utf-8")


@pytest.mark.parametrize("open_end", [False, True])
def test_review_prints_the_edit_that_apply_writes(
    user_repo: Path,
    make_session: MakeSession,
    capsys: pytest.CaptureFixture[str],
    open_end: bool,
) -> None:
    store = SessionStore(AppPaths.default().sessions_dir)
    wt = make_session(user_repo)
    store.create(
        SessionRecord("sess-e", str(user_repo), str(wt.path), wt.base_commit, task="t", model="m")
    )
    (wt.path / "b.txt").write_bytes(b"alpha\nBETA\ngamma\n")
    diff = compute_diff(wt.path, wt.base_commit)
    [(_, hunk)] = list(diff.hunks())
    folder = store.session_dir("sess-e")
    decisions = load_decisions(folder)
    edit = "alpha\nBeta, edited\nand one more\ngamma" + ("" if open_end else "\n")
    decisions.edit(diff, hunk.id, edit)
    save_decisions(folder, decisions)
    assert main(["review", "sess-e", "--json"]) == 0
    [shown] = json.loads(capsys.readouterr().out)["files"][0]["hunks"]
    assert shown["edited"] is True and shown["decision"] == "approved"
    # Control: the model's line is not what is shown any more.
    assert "+BETA" not in shown["lines"] and "+Beta, edited" in shown["lines"]
    # An edit without its last line end gets one back (more lines follow the hunk), both in
    # what is shown and in what is written.
    assert (shown["added"], shown["removed"]) == (2, 1)
    assert main(["review", "sess-e"]) == 0
    text = capsys.readouterr().out
    assert "(edited)" in text and "+Beta, edited" in text and "+BETA" not in text
    assert main(["apply", "sess-e", "--hunks", hunk.id]) == 0
    capsys.readouterr()
    assert (user_repo / "b.txt").read_bytes() == _new_side(shown["lines"])


def test_with_new_side_matches_apply() -> None:
    from frogdesk.review.model import Hunk

    old = (b"a\n", b"b\n", b"c")
    hunk = Hunk("h1", "text", "@@ -1,3 +1,3 @@ def f():", 1, 3, 1, 3, old, old)
    edited = with_new_side(hunk, (b"a\n", b"B\n", b"c\n", b"d"))
    assert edited.header == "@@ -1,3 +1,4 @@ def f():"
    assert edited.lines == (
        b" a", b"-b", b"-c", b"\\ No newline at end of file", b"+B", b"+c", b"+d",
        b"\\ No newline at end of file",
    )  # fmt: skip
    assert (edited.added, edited.removed, edited.id) == (3, 2, "h1")
    assert apply_text_hunks(b"a\nb\nc", [hunk], {"h1": edited.new_lines}) == b"a\nB\nc\nd"
    assert diff_lines([b"x\n"], [b"x\n"]) == (b" x",)
