"""Bounds on an untrusted chat template's rendering: a deadline, and caps on sizes and output."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from dataclasses import dataclass
from functools import update_wrapper
from typing import Any

from jinja2 import nodes, pass_context
from jinja2.compiler import CodeGenerator, Frame
from jinja2.runtime import Context, markup_join, str_join
from jinja2.sandbox import (
    MAX_RANGE,
    ImmutableSandboxedEnvironment,
    SandboxedEscapeFormatter,
    SandboxedFormatter,
)
from markupsafe import Markup

from frogdesk.engine.template_sizes import (
    FILTER_ITEMS,
    FILTER_SIZES,
    LISTED_FIRST,
    TEXT_METHODS,
    TEXT_SPLITS,
    WALKING,
    joined_size,
    nothing,
    printf_size,
    text_size,
    widest,
)

RENDER_SECONDS = 10.0
"""Longest a chat template may render; real templates take milliseconds."""
MAX_OUTPUT_CHARS = 64 * 2**20
"""Most characters one rendering, or any one text it builds on the way, may have."""
MAX_EXPONENT = 256
"""Largest exponent `**` may take on integers (a big power is a memory bomb)."""
MAX_INT_BITS = 2**16
"""Largest integer `*` and `**` may build, in bits (a number squared in a loop is a bomb too)."""
MAX_ITEMS = 2**20
"""Most items a list the template builds may hold, and most items (or letters) a filter that
works through them one by one in Python may take: each costs time no deadline check sees."""

_SEQUENCES = (str, bytes, list, tuple)
_JINJA_KWARGS = {"_loop_vars", "_block_vars"}
"""What Jinja adds to a call's keywords for its own use (Context.call drops them)."""


class RenderLimitExceeded(Exception):
    """The template broke a rendering bound; the message says which."""


@dataclass
class RenderBudget:
    """One rendering's deadline and output cap."""

    seconds: float
    max_chars: int
    deadline: float = 0.0

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.seconds

    def check(self) -> None:
        """Stop the rendering once it is past its deadline."""
        if time.monotonic() > self.deadline:
            raise RenderLimitExceeded(f"ran longer than {self.seconds:g} s")


class _BoundedFormatter(SandboxedFormatter):
    """str.format in the sandbox, each field's width and text counted before it is written."""

    def __init__(self, env: BoundedSandbox, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self._bounds = env
        self._built = 0

    def vformat(self, format_string: str, args: Any, kwargs: Any) -> str:
        self._built = len(format_string)
        return super().vformat(format_string, args, kwargs)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion in ("r", "a"):
            size = text_size(value, self._bounds.limit(), quoted=True)
            self._bounds.fit(size * (10 if conversion == "a" else 1), "str.format")
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        limit = self._bounds.limit()
        self._built += widest(format_spec) + text_size(value, limit) + 330
        self._bounds.fit(
            self._built * (6 if isinstance(self, SandboxedEscapeFormatter) else 1), "str.format"
        )
        return super().format_field(value, format_spec)


class _BoundedEscapeFormatter(_BoundedFormatter, SandboxedEscapeFormatter):
    """The same for Markup.format, which escapes each field."""


class _BoundedCodeGenerator(CodeGenerator):
    """Jinja's code generator with `~` joined through the environment, which measures first,
    and every for loop's items passed through the environment, which checks the deadline."""

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        ticking = nodes.EnvironmentAttribute("ticking", lineno=node.lineno)
        node.iter = nodes.Call(ticking, [node.iter], [], None, None, lineno=node.lineno)
        super().visit_For(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.join_text((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("), context.eval_ctx.autoescape)")


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox plus time and size bounds.

    Every loop over `range`, every call, attribute and item access and every operator
    checks the deadline, so a template of nested empty loops stops too. Every text the
    template can build (operators, `~`, filters, text methods, str.format, printed values,
    captured blocks) is measured before it is built and refused above the output cap; the
    `lipsum` global, which writes any amount of text in one step, is removed.
    """

    intercepted_binops = frozenset({"*", "**", "+", "%"})
    code_generator_class = _BoundedCodeGenerator

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._local = threading.local()
        self.globals["range"] = self._range
        self.globals.pop("lipsum", None)
        self.finalize = self._printable
        self._bounded: dict[str, Callable[..., Any]] = {}
        self.bound_filters()

    @contextlib.contextmanager
    def bounded(self, seconds: float, max_chars: int) -> Iterator[RenderBudget]:
        """Apply a budget to the renderings this thread does inside the block."""
        budget = RenderBudget(seconds, max_chars)
        previous = getattr(self._local, "budget", None)
        self._local.budget = budget
        try:
            yield budget
        finally:
            self._local.budget = previous

    def bound_filters(self) -> None:
        """Measure what each text-building filter would write before it runs (again after a
        filter is replaced). The bounded filters take the context, so Jinja never runs them
        while compiling, where no budget applies."""
        for name in FILTER_SIZES.keys() | FILTER_ITEMS.keys() | WALKING:
            current = self.filters.get(name)
            if current is not None and current is not self._bounded.get(name):
                self._bounded[name] = self._bounded_filter(name, current)
                self.filters[name] = self._bounded[name]

    def _bounded_filter(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        what = f"the `{name}` filter"
        size: Callable[..., int] = FILTER_SIZES.get(name, nothing)

        def bounded(context: Context, value: Any, *args: Any, **kwargs: Any) -> Any:
            if name in WALKING and isinstance(value, Sized):
                self.fit_items(len(value), what)
            if name in FILTER_ITEMS:
                self.fit_items(FILTER_ITEMS[name](value, *args, **kwargs), what)
            if name in LISTED_FIRST and not isinstance(value, str):
                value = list(value)
            self.fit(size(self.limit(), value, *args, **kwargs), what)
            call: Callable[..., Any] = context.call  # it passes what the filter asks for
            result = call(original, value, *args, **kwargs)
            if isinstance(result, str):
                self.fit(len(result), what)
            return result

        return pass_context(update_wrapper(bounded, original))

    def limit(self) -> int:
        """The output cap of the rendering under way (MAX_OUTPUT_CHARS outside one)."""
        budget: RenderBudget | None = getattr(self._local, "budget", None)
        return budget.max_chars if budget is not None else MAX_OUTPUT_CHARS

    def fit(self, size: int, what: str) -> None:
        """Refuse to build `size` characters (or items) above the output cap."""
        limit = self.limit()
        if size > limit:
            raise RenderLimitExceeded(f"built more than {limit} characters with {what}")

    def fit_items(self, count: int, what: str) -> None:
        """Refuse to have `what` go through (or build) more than MAX_ITEMS items."""
        if count > MAX_ITEMS:
            raise RenderLimitExceeded(f"made {what} handle {count} items")

    def _tick(self) -> None:
        budget: RenderBudget | None = getattr(self._local, "budget", None)
        if budget is not None:
            budget.check()

    def _range(self, *args: int) -> Iterator[int]:
        numbers = range(*args)
        if len(numbers) > MAX_RANGE:
            raise RenderLimitExceeded(f"asked for a range of {len(numbers)} numbers")
        for number in numbers:
            self._tick()
            yield number

    def ticking(self, items: Iterable[Any]) -> Iterator[Any]:
        """A for loop's items, the deadline checked before each (an empty body checks nothing)."""
        for item in items:
            self._tick()
            yield item

    def _printable(self, value: Any) -> Any:
        """Every `{{ value }}` is measured before it is turned into text."""
        self.fit(text_size(value, self.limit()), "a printed value")
        return value

    def concat(self, pieces: Iterable[str]) -> str:
        """A captured block, macro or caller body, measured before it is joined."""
        parts = list(pieces)
        self.fit(sum(map(len, parts)), "a captured block")
        return "".join(parts)

    def join_text(self, pieces: tuple[Any, ...], autoescape: bool) -> str:
        """`a ~ b`, measured before it is joined."""
        limit = self.limit()
        size = 0
        for piece in pieces:
            size += text_size(piece, limit - size)
        self.fit(size * (6 if autoescape else 1), "`~`")
        return markup_join(pieces) if autoescape else str_join(pieces)

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        """Every call checks the deadline; a text method is measured before it runs."""
        __self._tick()
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str | bytes):
            name = getattr(__obj, "__name__", "")
            given = {k: v for k, v in kwargs.items() if k not in _JINJA_KWARGS}
            if name == "join" and args:
                if isinstance(args[0], Sized):
                    __self.fit_items(len(args[0]), "str.join")
                args = (list(args[0]), *args[1:])
                __self.fit_items(len(args[0]), "str.join")
                __self.fit(joined_size(args[0], owner, __self.limit()), "str.join")
            elif name in TEXT_METHODS:
                __self.fit(TEXT_METHODS[name](owner, *args, **given), f"str.{name}")
            elif name in TEXT_SPLITS:
                __self.fit_items(TEXT_SPLITS[name](owner, *args, **given), f"str.{name}")
        return super().call(__context, __obj, *args, **kwargs)

    def getattr(self, obj: Any, attribute: str) -> Any:
        """Attribute access checks the deadline (the sandbox's rules still apply)."""
        self._tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        """Item access checks the deadline (the sandbox's rules still apply)."""
        self._tick()
        return super().getitem(obj, argument)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """str.format and format_map through a formatter that measures each field first."""
        if super().wrap_str_format(value) is None:
            return None
        text: str = value.__self__
        formatter: _BoundedFormatter = (
            _BoundedEscapeFormatter(self, escape=text.escape)
            if isinstance(text, Markup)
            else _BoundedFormatter(self)
        )
        is_map = value.__name__ == "format_map"

        def bounded(*args: Any, **kwargs: Any) -> str:
            if is_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument")
                kwargs, args = args[0], ()
            return type(text)(formatter.vformat(text, args, kwargs))

        return update_wrapper(bounded, value)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """`*`, `**`, `+` and `%` within the caps, checked before the result is built."""
        self._tick()
        limit = self.limit()
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                sized = isinstance(seq, str | bytes | list | tuple) and isinstance(times, int)
                cap = limit if isinstance(seq, str | bytes) else min(limit, MAX_ITEMS)
                if sized and len(seq) * times > cap:
                    raise RenderLimitExceeded(
                        f"built a sequence of {len(seq) * times} items with `*`"
                    )
            if isinstance(left, int) and isinstance(right, int):
                self._fit_bits(left.bit_length() + right.bit_length())
        if operator == "**" and isinstance(right, int) and isinstance(left, int) and abs(left) > 1:
            if right > MAX_EXPONENT:
                raise RenderLimitExceeded(f"raised a number to the power {right}")
            self._fit_bits(left.bit_length() * max(right, 0))
        if operator == "+" and isinstance(left, _SEQUENCES) and isinstance(right, _SEQUENCES):
            escaping = 6 if isinstance(left, Markup) or isinstance(right, Markup) else 1
            self.fit((len(left) + len(right)) * escaping, "`+`")
            if isinstance(left, list | tuple) and len(left) + len(right) > MAX_ITEMS:
                raise RenderLimitExceeded(
                    f"built a sequence of {len(left) + len(right)} items with `+`"
                )
        if operator == "%" and isinstance(left, str | bytes):
            escaping = 6 if isinstance(left, Markup) else 1
            self.fit(printf_size(left, right, limit) * escaping, "`%`")
        return super().call_binop(context, operator, left, right)

    def _fit_bits(self, bits: int) -> None:
        if bits > MAX_INT_BITS:
            raise RenderLimitExceeded(f"built a number of more than {MAX_INT_BITS} bits")
