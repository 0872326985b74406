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


def test_every_format_separator_and_surrogate_code_point_is_shown() -> None:
    """Checked against Python's own Unicode tables, code point by code point: a format
    character (bidi marks, tag characters, the soft hyphen...), a line or paragraph separator
    or a lone surrogate never passes, and nothing assigned and printable is touched (the
    Egyptian format controls Unicode 15 added are escaped ahead of the tables)."""
    import sys
    import unicodedata

    hidden = {"Cc", "Cf", "Zl", "Zp", "Cs"}
    missed = []
    touched = []
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        category = unicodedata.category(char)
        if category in hidden and not has_controls(char):
            missed.append(f"U+{code:04X} {category}")
        elif category not in hidden | {"Cn"} and inert_line(char) != char:
            touched.append(f"U+{code:04X} {category}")
    assert missed == []
    assert touched == []


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\u061c", "\\u061c"),
        ("\u00ad", "\\xad"),
        ("\U000e0041", "\\U000e0041"),
        ("\udcff", "\\udcff"),
    ],
)
def test_format_characters_are_escaped_reversibly(raw: str, shown: str) -> None:
    assert inert_line(f"a{raw}b") == f"a{shown}b"
    assert inert_text(f"a{raw}b") == f"a{shown}b"
    assert shown.encode().decode("unicode_escape") == raw


def test_a_command_with_odd_spaces_shows_them_and_warns() -> None:
    """A no-break space reads as the space between two words and is not one."""
    from frogdesk.inert import COMMAND_WARNING, command_warning, inert_command

    assert inert_command("ls\u00a0-la\u3000/") == "ls\\xa0-la\\u3000/"
    assert inert_command("a\tb\nc") == "a\\tb\nc"
    assert command_warning("ls\u00a0-la") == COMMAND_WARNING
    assert command_warning("rm -rf ./b\U000e0020\U000e002f") == COMMAND_WARNING
    assert command_warning("ls -la /") == ""  # the control: an ordinary space is no warning
