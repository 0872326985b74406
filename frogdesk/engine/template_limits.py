"""Bounds on an untrusted chat template's rendering: a deadline, and caps on sizes and output."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jinja2.runtime import Context
from jinja2.sandbox import MAX_RANGE, ImmutableSandboxedEnvironment

RENDER_SECONDS = 10.0
"""Longest a chat template may render; real templates take milliseconds."""
MAX_OUTPUT_CHARS = 64 * 2**20
"""Most characters one rendering (or one string it builds with `*`) may have."""
MAX_EXPONENT = 256
"""Largest exponent `**` may take on integers (a big power is a memory bomb)."""


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


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox plus time and size bounds.

    Every loop over `range`, every call, attribute and item access and every `*` or `**`
    checks the deadline, so a template of nested empty loops stops too; `*` and `**`
    refuse results above the caps before computing them.
    """

    intercepted_binops = frozenset({"*", "**"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._local = threading.local()
        self.globals["range"] = self._range

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

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        """Every call the template makes first checks the deadline."""
        __self._tick()
        return super().call(__context, __obj, *args, **kwargs)

    def getattr(self, obj: Any, attribute: str) -> Any:
        """Attribute access checks the deadline (the sandbox's rules still apply)."""
        self._tick()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        """Item access checks the deadline (the sandbox's rules still apply)."""
        self._tick()
        return super().getitem(obj, argument)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """`*` and `**` within the caps, checked before the result is built."""
        self._tick()
        budget: RenderBudget | None = getattr(self._local, "budget", None)
        limit = budget.max_chars if budget is not None else MAX_OUTPUT_CHARS
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                sized = isinstance(seq, (str, list, tuple)) and isinstance(times, int)
                if sized and len(seq) * times > limit:
                    raise RenderLimitExceeded(
                        f"built a sequence of {len(seq) * times} items with `*`"
                    )
        powers = operator == "**" and isinstance(right, int) and isinstance(left, int)
        if powers and right > MAX_EXPONENT and abs(left) > 1:
            raise RenderLimitExceeded(f"raised a number to the power {right}")
        return super().call_binop(context, operator, left, right)
