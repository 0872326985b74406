"""`frogdesk sessions`: not built yet."""

from __future__ import annotations

import argparse
from typing import Any

from frogdesk.commands.common import not_built


def register(sub: Any) -> None:
    """Add the subcommand parser."""
    parser: argparse.ArgumentParser = sub.add_parser("sessions", help="(not built yet)")
    parser.set_defaults(func=lambda args: not_built("sessions"))
