"""The none level's approval question on a real terminal shows a spoofing command as it is.

A command that clears its own line (`ESC[2K`, `ESC[1G`, or a bare `\\r`) and then prints a
harmless one must not read as the harmless one: the question shows every escape and warns.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from frogdesk.inert import COMMAND_WARNING
from tests.support.pty_answer import answer_on_pty
from tests.support.scripted import call, make_repo, write_script

SPOOFS = {
    "erase-line": ("\x1b[2K\x1b[1G", "\\x1b[2K\\x1b[1G"),
    "carriage-return": ("\r", "\\r"),
}


def _ask(tmp_path: Path, hidden: str, answer: str) -> tuple[str, Path]:
    """Run `frogdesk run --sandbox none` on a pseudo-terminal, answer the question, return the screen."""
    repo = make_repo(tmp_path)
    marker = tmp_path / "owned"
    command = f"touch {marker}; #{hidden}  ls -la"
    replies = ["Run.\n</think>\n\n" + call("Bash", command=command), "Done.\n</think>\n\nok"]
    script = write_script(tmp_path / "s.jsonl", replies)
    argv = ["run", "list", "--repo", str(repo), "--script", str(script), "--sandbox", "none"]
    done = answer_on_pty(argv, b"[y/N] ", [answer])
    assert done.asked == 1, done.screen
    return done.screen, marker


@pytest.mark.parametrize("spoof", sorted(SPOOFS))
def test_question_shows_escapes_and_warns_and_no_refuses(tmp_path: Path, spoof: str) -> None:
    hidden, visible = SPOOFS[spoof]
    screen, marker = _ask(tmp_path, hidden, "n")
    # The terminal turns each newline into \r\n; any other \r would be the command's own.
    question = screen.split("[y/N] ")[0].replace("\r\n", "\n")
    assert f"touch {tmp_path / 'owned'}; #{visible}  ls -la" in question
    assert COMMAND_WARNING in question
    assert hidden not in question  # the raw sequence never reached the terminal
    assert not marker.exists()


def test_positive_control_yes_runs_the_command_that_was_shown(tmp_path: Path) -> None:
    """The same command, approved, does run: the refusal above is the user's answer at work."""
    screen, marker = _ask(tmp_path, SPOOFS["erase-line"][0], "y")
    assert COMMAND_WARNING in screen
    assert marker.exists()
