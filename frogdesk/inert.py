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

# C0 (except what the caller keeps), DEL, C1, and every code point Unicode calls a format
# character (Cf: bidi marks, embeddings, overrides and isolates, zero-width space and
# joiners, the soft hyphen, the Arabic letter mark, invisible operators, the tag characters
# that can spell hidden text), the line and paragraph separators (a terminal may break a
# line there) and lone surrogates (a file name that is not UTF-8). Python 3.11's Unicode 14
# tables give these ranges; tests/foundation/test_inert.py checks them against
# `unicodedata` code point by code point.
_INVISIBLE = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
)
_UNSAFE_ALL = re.compile(f"[\x00-\x1f\x7f-\x9f{_INVISIBLE}]")
_UNSAFE_KEEP_NL = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")
_UNSAFE_KEEP_NL_TAB = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")

# Spaces other than U+0020 (no-break, en, em, ideographic...): in a command for approval
# one looks like the space that separates two words and is not one.
_ODD_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


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
    "warning: this command contains control or invisible characters or unusual spaces (shown as "
    "escapes above); they can make a terminal show something other than what runs"
)
"""The line shown under a command for approval when `command_warning` finds something."""


def inert_command(command: str) -> str:
    """A command for approval: `inert_text`, and every space other than U+0020 shown as an
    escape too (a no-break space reads as a word break and is not one)."""
    return _ODD_SPACES.sub(_escape, inert_text(command, keep_tabs=False))


def command_warning(command: str) -> str:
    """`COMMAND_WARNING` when a command holds a control character other than newline and tab,
    an invisible character or an unusual space, else ""."""
    hidden = inert_text(command) != command or _ODD_SPACES.search(command) is not None
    return COMMAND_WARNING if hidden else ""
