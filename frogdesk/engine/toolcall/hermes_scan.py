"""Reading one Hermes tool call (a JSON object) from streamed text, decided the same way whole or streamed.

A call's JSON object ends where its braces balance outside strings (escapes followed), so a
value may hold `</tool_call>`, braces or fences. Each call is decided from the text up to
that end and what follows it, never from where a chunk happened to end. The scan keeps its
place between chunks, so a long call costs one pass, and counts nesting without recursion,
so deep nesting reaches `json.loads` (whose refusal is a malformed call, not a crash).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from frogdesk.engine.toolcall.values import NotJson, ToolSpec, load_json

CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
FENCE = "```"
_FENCE_OPEN = re.compile(r"```[A-Za-z0-9_+-]{0,20}[ \t]*\n")
_FENCE_PREFIX = re.compile(r"`{1,3}[A-Za-z0-9_+-]{0,20}[ \t]*")
WRAPPER_TAGS = ("<tool>", "<tools>", "<response>", "<json>", "<JSON>", "<xml>", "<function_call>")
"""Tags some models put around a Hermes object instead of `<tool_call>` (llama.cpp reads them too)."""
HEAD_LIMIT = 256
"""A loose call's openers and first key must come within this many characters of its line start."""
_STRUCT = re.compile(r'[{}\[\]"]')
_IN_STRING = re.compile(r'["\\]')
_CALL_HEAD = re.compile(r'\{\s*"name"\s*:\s*"([^"\\\n]{1,256})"')
_SPACE = re.compile(r"\s*")


class HermesDrift:
    """The Hermes recoveries, by the name recorded in trajectories and stats."""

    FENCED_JSON = "fenced_json"
    """A call object in a ``` fence (```json, ```xml or bare) instead of `<tool_call>`."""
    WRAPPER_TAG = "wrapper_tag"
    """A call object in `<tool>`, `<response>`, `<json>` or a like tag instead of `<tool_call>`."""
    BARE_JSON = "bare_json"
    """A call object with `name` and `arguments` at the start of a line, with no wrapper."""
    ARGUMENTS_AS_STRING = "arguments_as_string"
    """`arguments` given as a string holding a JSON object."""
    CALL_CLOSE_MISSING = "call_close_missing"
    """No `</tool_call>` after the object: the reply ended, or other text followed."""


def skip_space(text: str, pos: int) -> int:
    """The first offset at or after `pos` that is not whitespace."""
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


class ObjectScan:
    """Where a JSON object that opens at `start` closes, followed as its text grows."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.end = -1
        """Offset just past the closing brace (-1 while open)."""
        self._pos = start
        self._depth = 0
        self._in_string = False
        self._escape = False

    def advance(self, text: str) -> bool:
        """Scan the text added since the last call; True once the object has closed."""
        if self.end != -1:
            return True
        i, n = self._pos, len(text)
        while i < n:
            if self._escape:
                i += 1
                self._escape = False
                continue
            if self._in_string:
                found = _IN_STRING.search(text, i)
                if found is None:
                    i = n
                    break
                i = found.end()
                if found.group() == "\\":
                    self._escape = True
                else:
                    self._in_string = False
                continue
            found = _STRUCT.search(text, i)
            if found is None:
                i = n
                break
            i = found.end()
            char = found.group()
            if char == '"':
                self._in_string = True
            elif char in "{[":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth <= 0:
                    self.end = i
                    self._pos = i
                    return True
        self._pos = i
        return False


class Verdict(Enum):
    """What the text of a candidate call came to."""

    CALL = "call"
    ERROR = "error"
    CONTENT = "content"
    """Not a call after all: the text is content."""


@dataclass
class Outcome:
    """A decided candidate: the call's name and arguments, or its problem; where it ended."""

    verdict: Verdict
    end: int
    """Offset in the candidate's text just past its last character."""
    name: str = ""
    arguments: Any = None
    drifts: list[str] = field(default_factory=list)
    problem: str = ""


def read_object(
    text: str,
    end: int,
    drifts: list[str],
    *,
    loose: bool,
    specs: Mapping[str, ToolSpec],
    start: int,
) -> Outcome:
    """Judge the JSON object `text[start:end]` as a call ending at `end`."""
    try:
        data = load_json(text[start:end])
    except NotJson as exc:
        return _not_a_call(text, start, end, specs, loose, f"the call is not valid JSON ({exc})")
    if not isinstance(data, dict):
        return _not_a_call(text, start, end, specs, loose, "the call must be a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        return _not_a_call(text, start, end, specs, loose, 'the call has no "name" string')
    if loose and "arguments" not in data:
        return _not_a_call(text, start, end, specs, loose, 'the call has no "arguments"')
    arguments = data.get("arguments")
    if isinstance(arguments, str):
        try:
            inner = load_json(arguments)
        except NotJson:
            inner = None
        if isinstance(inner, dict):
            arguments = inner
            drifts.append(HermesDrift.ARGUMENTS_AS_STRING)
    if loose and not isinstance(arguments, dict):
        return _not_a_call(text, start, end, specs, loose, '"arguments" must be a JSON object')
    return Outcome(Verdict.CALL, end, name=name.strip(), arguments=arguments, drifts=drifts)


def _not_a_call(
    text: str, start: int, end: int, specs: Mapping[str, ToolSpec], loose: bool, problem: str
) -> Outcome:
    """A wrapped object that is no call is an error; a loose one only when it names a tool."""
    if loose and not names_offered_tool(text, start, specs):
        return Outcome(Verdict.CONTENT, end)
    head = _CALL_HEAD.match(text, start)
    return Outcome(Verdict.ERROR, end, name=head.group(1) if head else "", problem=problem)


def names_offered_tool(text: str, start: int, specs: Mapping[str, ToolSpec]) -> bool:
    """Whether the object at `start` opens with `{"name": "TOOL"` for an offered tool."""
    head = _CALL_HEAD.match(text, start)
    return head is not None and head.group(1) in specs


class WrappedCall:
    """The text after one `<tool_call>`, fed as it streams, until the call is decided."""

    def __init__(self, specs: Mapping[str, ToolSpec]) -> None:
        self.text = ""
        self._specs = specs
        self._scan: ObjectScan | None = None
        self._search = 0

    def feed(self, text: str) -> Outcome | None:
        """Append text; the outcome once the object and its `</tool_call>` decide the call."""
        self.text += text
        if self._scan is None:
            pos = skip_space(self.text, 0)
            if pos == len(self.text):
                return None
            if self.text[pos] != "{":
                return self._not_json()
            self._scan = ObjectScan(pos)
        if not self._scan.advance(self.text):
            return None
        return self._closed(final=False)

    def _not_json(self) -> Outcome | None:
        close = self.text.find(CALL_CLOSE, self._search)
        if close == -1:
            self._search = max(0, len(self.text) - len(CALL_CLOSE) + 1)
            return None
        return Outcome(
            Verdict.ERROR,
            close + len(CALL_CLOSE),
            problem="expected a JSON object after <tool_call>",
        )

    def _closed(self, *, final: bool) -> Outcome | None:
        assert self._scan is not None
        end = self._scan.end
        after = skip_space(self.text, end)
        rest = self.text[after:]
        drifts: list[str] = []
        if rest.startswith(CALL_CLOSE):
            stop = after + len(CALL_CLOSE)
        elif not final and CALL_CLOSE.startswith(rest[: len(CALL_CLOSE)]):
            return None
        else:
            stop = end
            drifts.append(HermesDrift.CALL_CLOSE_MISSING)
        outcome = read_object(
            self.text, end, drifts, loose=False, specs=self._specs, start=self._scan.start
        )
        outcome.end = stop
        return outcome

    def finish(self) -> Outcome:
        """The reply ended: the call if its object closed, else what is missing."""
        if self._scan is None:
            if not self.text.strip():
                return Outcome(
                    Verdict.ERROR, len(self.text), problem="the reply ended after <tool_call>"
                )
            decided = self._not_json()
            if decided is not None:
                return decided
            return Outcome(
                Verdict.ERROR,
                len(self.text),
                problem="expected a JSON object after <tool_call>, and the reply ended before </tool_call>",
            )
        if self._scan.end == -1:
            close = self.text.find(CALL_CLOSE, self._scan.start)
            if close != -1:
                return Outcome(
                    Verdict.ERROR,
                    close + len(CALL_CLOSE),
                    name=_head_name(self.text, self._scan.start),
                    problem="the call's JSON object is not closed before </tool_call>",
                )
            return Outcome(
                Verdict.ERROR,
                len(self.text),
                name=_head_name(self.text, self._scan.start),
                problem="the reply ended before the call's JSON object closed",
            )
        decided = self._closed(final=True)
        assert decided is not None
        return decided


def _head_name(text: str, start: int) -> str:
    head = _CALL_HEAD.match(text, start)
    return head.group(1) if head else ""


class Head(Enum):
    """What the start of a line says about a loose call."""

    WAIT = "wait"
    NO = "no"
    YES = "yes"


@dataclass(frozen=True)
class LooseHead:
    """A line that opens like a call: where its object starts and the closers it expects."""

    state: Head
    start: int = 0
    closers: tuple[str, ...] = ()
    drifts: tuple[str, ...] = ()


def read_head(text: str, pos: int, *, final: bool) -> LooseHead:
    """Whether the line at `pos` opens a loose call: openers, then `{` and a first key of
    `name` or `arguments`, within HEAD_LIMIT characters (WAIT: the text ends too soon)."""
    limit = pos + HEAD_LIMIT
    closers: list[str] = []
    drifts: list[str] = []
    while True:
        pos = skip_space(text, pos) if closers else _skip_blank(text, pos)
        if pos >= limit:
            return LooseHead(Head.NO)
        rest = text[pos:limit]
        if not rest:
            return LooseHead(Head.NO if final else Head.WAIT)
        if rest.startswith("{"):
            key = _first_key(text, pos, limit, final=final)
            if key is None:
                return LooseHead(Head.WAIT)
            if key not in ("name", "arguments"):
                return LooseHead(Head.NO)
            return LooseHead(Head.YES, pos, tuple(reversed(closers)), tuple(dict.fromkeys(drifts)))
        if len(closers) >= 2:
            return LooseHead(Head.NO)
        fence = _FENCE_OPEN.match(text, pos)
        if fence is not None and fence.end() <= limit:
            closers.append(FENCE)
            drifts.append(HermesDrift.FENCED_JSON)
            pos = fence.end()
            continue
        tag = next((t for t in WRAPPER_TAGS if rest.startswith(t)), None)
        if tag is not None:
            closers.append("</" + tag[1:])
            drifts.append(HermesDrift.WRAPPER_TAG)
            pos += len(tag)
            continue
        if not final and _could_open(rest) and pos + len(rest) == len(text):
            return LooseHead(Head.WAIT)
        return LooseHead(Head.NO)


def _first_key(text: str, brace: int, limit: int, *, final: bool) -> str | None:
    """The first key of the object at `brace` ("" when it has none that fits; None: wait)."""
    pos = skip_space(text, brace + 1)
    if pos >= limit:
        return ""
    if pos == len(text):
        return "" if final else None
    if text[pos] != '"':
        return ""
    close = text.find('"', pos + 1, min(limit, pos + 34))
    if close == -1:
        ended = len(text) < min(limit, pos + 34)
        return None if ended and not final else ""
    key = text[pos + 1 : close]
    return "" if "\\" in key else key


def _skip_blank(text: str, pos: int) -> int:
    """Skip spaces and tabs (a loose call's line may be indented)."""
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _could_open(rest: str) -> bool:
    """Whether the text could still grow into an opener (a fence or a wrapper tag)."""
    if _FENCE_PREFIX.fullmatch(rest):
        return True
    return any(tag.startswith(rest) for tag in WRAPPER_TAGS)


class LooseCall:
    """A call object at the start of a line, with optional fence or tag openers, fed as it streams."""

    def __init__(self, text: str, head: LooseHead, specs: Mapping[str, ToolSpec]) -> None:
        self.text = ""
        self._first = text
        self._head = head
        self._specs = specs
        self._scan = ObjectScan(head.start)

    def feed(self, text: str) -> Outcome | None:
        """Append text; the outcome once the object and its closers decide the call."""
        self.text += self._first + text
        self._first = ""
        if not self._scan.advance(self.text):
            return None
        return self._closed(final=False)

    def _closed(self, *, final: bool) -> Outcome | None:
        pos = self._scan.end
        # A stray `</tool_call>` after the closers belongs to the call too.
        for closer in (*self._head.closers, CALL_CLOSE):
            after = skip_space(self.text, pos)
            rest = self.text[after:]
            if rest.startswith(closer):
                pos = after + len(closer)
            elif not final and closer.startswith(rest[: len(closer)]):
                return None
            elif closer != CALL_CLOSE:
                break
        outcome = read_object(
            self.text,
            self._scan.end,
            list(self._head.drifts) or [HermesDrift.BARE_JSON],
            loose=True,
            specs=self._specs,
            start=self._scan.start,
        )
        if outcome.verdict is not Verdict.CONTENT:
            outcome.end = pos
        return outcome

    def finish(self) -> Outcome:
        """The reply ended: the call if its object closed; an error if it names a tool, else content."""
        self.text += self._first
        self._first = ""
        if self._scan.advance(self.text):
            decided = self._closed(final=True)
            assert decided is not None
            return decided
        if names_offered_tool(self.text, self._scan.start, self._specs):
            return Outcome(
                Verdict.ERROR,
                len(self.text),
                name=_head_name(self.text, self._scan.start),
                problem="the reply ended before the call's JSON object closed",
            )
        return Outcome(Verdict.CONTENT, len(self.text))
