"""Upper bounds on what a chat template's operations would build, worked out before they run.

Each bound is cheap (lengths and counts, never the text itself) and never below the truth,
so the sandbox (template_limits) can refuse a bomb before a byte of it exists.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, MappingView
from typing import Any

from jinja2.utils import Namespace


def _quoted_size(text: str | bytes, room: int) -> int:
    """An upper bound on the length of repr(text) or its JSON string."""
    rough = 10 * len(text) + 12  # an escape is at most \\U0010ffff
    if rough <= room or not isinstance(text, str) or not text.isprintable():
        return rough
    return len(text) + text.count("\\") + text.count("'") + text.count('"') + 12


def text_size(value: object, limit: int, *, quoted: bool = False, indent: int = 0) -> int:
    """An upper bound on len(str(value)) (repr when `quoted`), counted no further than past limit.

    Containers are walked, never printed: a list holding one long text a thousand times
    prints a thousand copies. `indent` adds what an indented dump (JSON, pprint) puts before
    each item at its depth.
    """
    total = 0
    stack: list[tuple[object, int, bool]] = [(value, 0, quoted)]
    while stack and total <= limit:
        item, depth, inner = stack.pop()
        if isinstance(item, str):
            total += _quoted_size(item, limit - total) if inner else len(item)
        elif isinstance(item, bytes):
            total += _quoted_size(item, limit - total)  # str() of bytes is their repr
        elif isinstance(item, bool) or item is None:
            total += 5
        elif isinstance(item, int):
            total += item.bit_length() // 3 + 2
        elif isinstance(item, float):
            total += 24
        elif isinstance(item, Namespace | Mapping | MappingView | list | tuple | set | frozenset):
            box: Any = item
            if isinstance(item, Namespace):  # its repr is its attributes' dict
                box = object.__getattribute__(item, "_Namespace__attrs")
            pairs = isinstance(box, Mapping)
            total += 16 + len(box) * (2 + (4 if pairs else 0) + (1 + indent * (depth + 1)))
            if total > limit:
                break
            for entry in box.items() if pairs else box:
                stack.extend((part, depth + 1, True) for part in (entry if pairs else (entry,)))
        else:  # an object's repr names its type (and an address)
            total += 200
    return total


_NUMBER = re.compile(r"\d+")


def widest(spec: str) -> int:
    """The largest number written in a format string or spec (a width or a precision)."""
    return max((int(n[:19]) for n in _NUMBER.findall(spec)), default=0)


def printf_size(fmt: str | bytes, args: object, limit: int) -> int:
    """An upper bound on len(fmt % args): no conversion writes more than its widest width
    plus its precision plus its longest argument (or a float's digits)."""
    text = fmt if isinstance(fmt, str) else fmt.decode("latin-1")
    conversions = text.count("%")
    if not conversions:
        return len(text)
    values = list(
        args.values() if isinstance(args, Mapping) else args if isinstance(args, tuple) else (args,)
    )
    stars = max((v for v in values if isinstance(v, int)), default=0)  # `*` takes a width
    longest = max((text_size(v, limit, quoted=True) for v in values), default=0)
    return len(text) + conversions * (2 * widest(text) + stars + longest + 330)


def _width(value: int) -> int:
    if not isinstance(value, int):
        raise TypeError(f"a width must be an integer, not {type(value).__name__}")
    return max(value, 0)


def _expanded(text: str | bytes, tabsize: int = 8) -> int:
    tabs = text.count("\t") if isinstance(text, str) else text.count(b"\t")
    return len(text) + tabs * _width(tabsize)


def _replaced(text: Any, old: Any, new: Any, count: Any, size: int) -> int:
    """An upper bound on len(text.replace(old, new, count)) for a text of this size."""
    found = size + 1  # an empty `old` matches between every two letters
    if old and isinstance(text, str | bytes) and type(old) is type(text):
        haystack: Any = text
        found = haystack.count(old)
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    return size + found * len(new)


def joined_size(items: list[Any], separator: Any, limit: int) -> int:
    """An upper bound on len(separator.join(str(item) for item in items))."""
    total = max(len(items) - 1, 0) * len(separator)
    for item in items:
        if total > limit:
            break
        total += text_size(item, limit)
    return total


def _translated(text: str | bytes, table: Any) -> int:
    if isinstance(table, Mapping):
        longest = max((len(v) for v in table.values() if isinstance(v, str | bytes)), default=1)
        return len(text) * max(longest, 1)
    return len(text)


TEXT_METHODS: dict[str, Callable[..., int]] = {
    "center": lambda s, width, fill=" ": max(len(s), _width(width)),
    "ljust": lambda s, width, fill=" ": max(len(s), _width(width)),
    "rjust": lambda s, width, fill=" ": max(len(s), _width(width)),
    "zfill": lambda s, width: max(len(s), _width(width)),
    "expandtabs": _expanded,
    "replace": lambda s, old, new, count=-1: _replaced(s, old, new, count, len(s)),
    "translate": _translated,
    "upper": lambda s: 3 * len(s),  # a case change writes up to three letters for one
    "lower": lambda s: 3 * len(s),
    "title": lambda s: 3 * len(s),
    "capitalize": lambda s: 3 * len(s),
    "swapcase": lambda s: 3 * len(s),
    "casefold": lambda s: 3 * len(s),
    "encode": lambda s, *args, **kwargs: 4 * len(s),
    "hex": lambda s, *args, **kwargs: 3 * len(s),
}
"""An upper bound on the characters each text method writes: (the text, its arguments)."""


def _split(text: str | bytes, sep: Any = None, maxsplit: int = -1) -> int:
    if sep is None:  # words: each takes a letter and a space at least
        found = len(text) // 2 + 1
    else:
        haystack: Any = text
        found = haystack.count(sep) + 1 if sep else 1
    return min(found, maxsplit + 1) if maxsplit >= 0 else found


def _lines(text: str | bytes, keepends: bool = False) -> int:
    if isinstance(text, bytes):
        return 1 + text.count(b"\n") + text.count(b"\r")
    return 1 + sum(text.count(mark) for mark in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


TEXT_SPLITS: dict[str, Callable[..., int]] = {
    "split": _split,
    "rsplit": _split,
    "splitlines": _lines,
}
"""An upper bound on the number of pieces each splitting text method makes."""


def nothing(limit: int, value: Any, *args: Any, **kwargs: Any) -> int:
    """The size bound of a filter that writes no text (it only goes through items)."""
    return 0


def _cased(limit: int, value: Any, *args: Any, **kwargs: Any) -> int:
    return 3 * text_size(value, limit)  # a case change writes up to three letters for one


def _plain(limit: int, value: Any, *args: Any, **kwargs: Any) -> int:
    return text_size(value, limit)


def _escaped(limit: int, value: Any, *args: Any, **kwargs: Any) -> int:
    return 6 * text_size(value, limit)  # `"` becomes `&#34;`


def _urlencoded(limit: int, value: Any) -> int:
    return 12 * text_size(value, limit)  # four UTF-8 bytes, each written `%XX`


def _urlized(limit: int, value: Any, *args: Any, **kwargs: Any) -> int:
    extra = sum(len(v) for v in (*args, *kwargs.values()) if isinstance(v, str))
    return text_size(value, limit) * (32 + extra)  # each word may become a link


def _center(limit: int, value: Any, width: int = 80) -> int:
    return text_size(value, limit) + _width(width)


def _indent(
    limit: int, s: Any, width: int | str = 4, first: bool = False, blank: bool = False
) -> int:
    size = text_size(s, limit)
    pad = len(width) if isinstance(width, str) else _width(width)
    lines = s.count("\n") + 1 if isinstance(s, str) else size + 1
    return size + lines * pad


def _wordwrap(
    limit: int,
    s: Any,
    width: int = 79,
    break_long_words: bool = True,
    wrapstring: str | None = None,
    break_on_hyphens: bool = True,
) -> int:
    size = text_size(s, limit)
    return size + (size + 1) * len(wrapstring or "\r\n")  # at worst a line per letter


def _truncate(
    limit: int,
    s: Any,
    length: int = 255,
    killwords: bool = False,
    end: str = "...",
    leeway: int | None = None,
) -> int:
    return text_size(s, limit) + len(end)


def _replace(limit: int, s: Any, old: Any, new: Any, count: int | None = None) -> int:
    size = text_size(s, limit)
    return size if size > limit else _replaced(s, old, str(new), count, size)


def _format(limit: int, value: Any, *args: Any, **kwargs: Any) -> int:
    size = text_size(value, limit)
    return size if size > limit else printf_size(str(value), kwargs or args, limit)


def _join(limit: int, value: list[Any], d: str = "", attribute: Any = None) -> int:
    return joined_size(value, d, limit)


def _sum(limit: int, iterable: list[Any], attribute: Any = None, start: Any = 0) -> int:
    """The copying `sum` does: adding each list copies every item before it."""
    held = len(start) if isinstance(start, list | tuple) else 0
    work = 0
    for item in iterable:
        if not isinstance(item, list | tuple) or work > limit:
            break
        held += len(item)
        work += held
    return work


def _pprint(limit: int, value: Any) -> int:
    return text_size(value, limit, quoted=True, indent=1)


def _tojson(
    limit: int,
    value: Any,
    ensure_ascii: bool = False,
    indent: int | str | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> int:
    step = len(indent) if isinstance(indent, str) else _width(indent or 0)
    size = text_size(value, limit, quoted=True, indent=step)
    between = max(1, sum(map(len, separators))) if separators else 1
    return size * between * (12 if ensure_ascii else 1)  # ASCII-only: two \uXXXX for a letter


FILTER_SIZES: dict[str, Callable[..., int]] = {
    "capitalize": _cased,
    "center": _center,
    "e": _escaped,
    "escape": _escaped,
    "forceescape": _escaped,
    "format": _format,
    "indent": _indent,
    "join": _join,
    "lower": _cased,
    "pprint": _pprint,
    "replace": _replace,
    "safe": _plain,
    "string": _plain,
    "striptags": _plain,
    "sum": _sum,
    "title": _cased,
    "tojson": _tojson,
    "trim": _plain,
    "truncate": _truncate,
    "upper": _cased,
    "urlencode": _urlencoded,
    "urlize": _urlized,
    "wordcount": _plain,
    "wordwrap": _wordwrap,
    "xmlattr": _escaped,
}
"""Filters that build text, each with an upper bound on the characters it writes."""
FILTER_ITEMS: dict[str, Callable[..., int]] = {
    "batch": lambda value, linecount, fill_with=None: linecount,
    "slice": lambda value, slices, fill_with=None: slices,
}
"""Filters that build lists of a size they are told, each with the number of items."""
WALKING = {
    "dictsort", "groupby", "join", "list", "map", "max", "min", "reject", "rejectattr",
    "select", "selectattr", "sort", "striptags", "sum", "unique", "urlize", "wordcount",
    "wordwrap",
}  # fmt: skip
"""Filters that go through their input item by item (or word by word) in Python."""
LISTED_FIRST = {"join", "sum"}
"""Filters whose input is read into a list first, so it can be measured and then used."""
