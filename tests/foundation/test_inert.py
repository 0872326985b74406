"""Untrusted text is shown, never obeyed: every control character becomes a visible escape."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frogdesk.inert import has_controls, inert_line, inert_text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("ls -la", "ls -la"),
        ("touch ~/owned; #\x1b[2K\x1b[1G  ls -la", "touch ~/owned; #\\x1b[2K\\x1b[1G  ls -la"),
        ("rm -rf ~\r ls", "rm -rf ~\\r ls"),
        ("\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07"),
        ("a\nb", "a\\nb"),
        ("evil\u202etxt.exe", "evil\\u202etxt.exe"),
        ("\x9b31m", "\\x9b31m"),
        ("grep 'a\\.b'", "grep 'a\\.b'"),
    ],
)
def test_inert_line_shows_every_control(raw: str, shown: str) -> None:
    assert inert_line(raw) == shown
    assert has_controls(raw) == (raw != shown)


def test_inert_text_keeps_lines_and_tabs_only() -> None:
    assert inert_text("a\tb\nc\\d\x1b[2J\r\n") == "a\tb\nc\\d\\x1b[2J\\r\n"
    assert inert_text("a\tb", keep_tabs=False) == "a\\tb"


@given(st.text())
def test_no_control_survives(raw: str) -> None:
    for out in (inert_line(raw), inert_text(raw)):
        assert not any(0x80 <= ord(c) <= 0x9F or (ord(c) < 0x20 and c not in "\n\t") for c in out)
        assert "\x1b" not in out and "\x7f" not in out
    assert "\n" not in inert_line(raw)


@given(st.text(alphabet=st.characters(exclude_characters="\\")))
def test_inert_line_is_reversible(raw: str) -> None:
    """Without backslashes in the input, two strings never look the same once escaped."""
    out = inert_line(raw)
    assert out.encode("latin-1", "backslashreplace").decode("unicode_escape") == raw


def test_command_warning_only_for_hidden_characters() -> None:
    from frogdesk.inert import COMMAND_WARNING, command_warning

    assert command_warning("ls -la\nmake\ttest") == ""
    assert command_warning("grep 'a\\x1b' f") == ""  # the spelling of an escape is not one
    for hidden in ("\x1b[2K", "\r", "\x9b", "\u202e", "\x00"):
        assert command_warning(f"touch x; #{hidden} ls") == COMMAND_WARNING
