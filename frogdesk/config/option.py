"""How a setting is declared: its default, its bound and the name it goes by outside."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import field
from typing import Any


def option(
    default: Any = dataclasses.MISSING,
    *,
    name: str | None = None,
    minimum: float | None = None,
    factory: Callable[[], Any] | None = None,
) -> Any:
    """A setting's default and smallest sensible value. `name`: the option's name in the
    environment (`FROGDESK_<NAME>`), on the command line and in the old flat file layout,
    when it is not the field's own (`[sandbox] level` is the option `sandbox`)."""
    metadata = {"name": name, "minimum": minimum}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)
