"""Every error FrogDesk raises for a user is a `FrogDeskError`, defined in its package's
`errors.py` (or the root's `frogdesk/errors.py`), so a newcomer finds each package's errors
in one file and a face can catch them all by one root."""

from __future__ import annotations

import importlib
import pkgutil
import types
from collections.abc import Iterable

import frogdesk
from frogdesk.errors import FrogDeskError

NOT_ERRORS = {
    # a cancel is no failure: the handlers that report errors in one line must not take it
    "frogdesk.quantcheck.errors.CheckCancelled",
    "frogdesk.engine.openai.backend._Cancelled",
    # signals caught inside their module or its package, never shown to the user as such
    "frogdesk.engine.template_limits.RenderLimitExceeded",
    "frogdesk.engine.openai.backend._RequestFailed",
    "frogdesk.engine.toolcall.values.NotJson",
    "frogdesk.leaf.globwalk.GlobStopped",
    "frogdesk.leaf.loop._Exit",
    "frogdesk.models.gguf_header.HeaderTruncated",
    "frogdesk.models.gguf_header.HeaderCorrupt",
    "frogdesk.models.hub._BadSize",
    # said to the model as Leaf's tool errors, whose builtin type names are part of what the
    # model was trained to read (`ValueError: ...`, `PermissionError: ...`)
    "frogdesk.engine.toolcall.values.BadValue",
    "frogdesk.leaf.approval.CommandDeclined",
    "frogdesk.leaf.textfile.FileTooLarge",
}
"""Exceptions that are not errors for a user, each with why."""


def frogdesk_modules() -> list[types.ModuleType]:
    """Every module of the package, imported (but `__main__`, which runs the program)."""
    names = [
        m.name
        for m in pkgutil.walk_packages(frogdesk.__path__, "frogdesk.")
        if m.name != "frogdesk.__main__"
    ]
    return [importlib.import_module(name) for name in ["frogdesk", *names]]


def misplaced(modules: Iterable[types.ModuleType]) -> list[str]:
    """Exception classes defined in `modules` outside an errors module, or not FrogDeskErrors."""
    out: list[str] = []
    for module in modules:
        for value in vars(module).values():
            if not (isinstance(value, type) and issubclass(value, BaseException)):
                continue
            if value.__module__ != module.__name__:
                continue  # imported here, judged where it is defined
            name = f"{value.__module__}.{value.__qualname__}"
            if name in NOT_ERRORS:
                continue
            if not issubclass(value, FrogDeskError):
                out.append(f"{name} is not a FrogDeskError")
            elif module.__name__.rsplit(".", 1)[-1] != "errors":
                out.append(f"{name} is defined outside an errors module")
    return out


def test_every_error_is_a_frogdesk_error_in_an_errors_module() -> None:
    assert misplaced(frogdesk_modules()) == []


def test_the_rule_finds_an_error_out_of_place() -> None:
    # The positive control: the same check on modules holding what the rule forbids.
    stray = types.ModuleType("frogdesk.sessions.stray")
    exec(
        "from frogdesk.errors import FrogDeskError\n"
        "class StrayError(FrogDeskError):\n    pass\n"
        "class PlainError(ValueError):\n    pass\n",
        stray.__dict__,
    )
    home = types.ModuleType("frogdesk.sessions.errors")
    exec(
        "from frogdesk.errors import FrogDeskError\nclass HomeError(FrogDeskError):\n    pass\n",
        home.__dict__,
    )
    assert misplaced([stray, home]) == [
        "frogdesk.sessions.stray.StrayError is defined outside an errors module",
        "frogdesk.sessions.stray.PlainError is not a FrogDeskError",
    ]
