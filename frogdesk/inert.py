"""Untrusted text made inert for display: every control character and escape shown, none obeyed.

Text FrogDesk did not write (model output, file names and contents, command output, GGUF
metadata, Hub listings, endpoint replies) reaches a terminal, a log or a Textual widget only
through this module. C0 and C1 control characters, DEL, and the Unicode characters that
reorder or hide text (bidi overrides, zero-width joiners) are replaced by a visible escape
(`\\x1b`, `\\r`, `\\u202e`), so what the user reads is what the bytes are. Tab is kept
where the caller asks (multi-line file content), and so is newline.
"""

from __future__ import annotations

import re

# Named escapes read better than hex for the three a person is most likely to meet.
_NAMED = {"\r": "\\r", "\t": "\\t", "\n": "\\n", "\x1b": "\\x1b"}

# C0 (except what the caller keeps), DEL, C1, and the invisible or reordering code points:
# bidi embeddings/overrides/isolates, zero-width space/joiners, word joiner, BOM, line and
# paragraph separators (a terminal may treat them as line breaks).
_INVISIBLE = "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_UNSAFE_ALL = re.compile(f"[\x00-\x1f\x7f-\x9f{_INVISIBLE}]")
_UNSAFE_KEEP_NL = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")
_UNSAFE_KEEP_NL_TAB = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def inert_line(text: str) -> str:
    """One line of untrusted text with every control character shown as an escape.

    Newlines are escaped too: a name, a command or a title never spans two lines. A
    backslash stays as it is, so `grep 'a\\.b'` reads as typed; where telling a real control
    byte from its spelling matters (a command shown for approval), ask `has_controls`.
    """
    if text.isprintable():
        return text
    return _UNSAFE_ALL.sub(_escape, text)


def inert_text(text: str, *, keep_tabs: bool = True) -> str:
    """Multi-line untrusted text: newlines (and tabs, by default) kept, every other control shown.

    Backslashes are left alone (as in `inert_line`): source code is full of them, and
    `has_controls` tells a real escape byte from the four characters that spell one.
    """
    if text.isprintable():
        return text
    pattern = _UNSAFE_KEEP_NL_TAB if keep_tabs else _UNSAFE_KEEP_NL
    return pattern.sub(_escape, text)


def has_controls(text: str) -> bool:
    """Whether untrusted text holds anything `inert_line` would have to make visible."""
    return _UNSAFE_ALL.search(text) is not None


COMMAND_WARNING = (
    "warning: this command contains control or invisible characters (shown as escapes above); "
    "they can make a terminal show something other than what runs"
)
"""The line shown under a command for approval when `command_warning` finds something."""


def command_warning(command: str) -> str:
    """`COMMAND_WARNING` when a command holds control characters other than newline and tab, else ""."""
    return COMMAND_WARNING if inert_text(command) != command else ""
