"""`frogdesk` with no subcommand: open the TUI."""

from __future__ import annotations

import argparse
from pathlib import Path

from frogdesk.commands.common import not_built


def add_tui_options(parser: argparse.ArgumentParser) -> None:
    """Options of the TUI (the top-level command)."""
    parser.add_argument("--repo", type=Path, default=None, help="repository to work on (default: the current directory)")
    parser.add_argument("--model", default=None, help="model spec: a .gguf path, REPO, REPO:QUANT or an alias")


def main(args: argparse.Namespace) -> int:
    """Open the TUI."""
    return not_built("(TUI)")
