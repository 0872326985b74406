"""What every subcommand shares: global options, loading settings, user-facing errors."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from frogdesk import config
from frogdesk.commands.errors import UserError
from frogdesk.paths import AppPaths


def add_global_options(parser: argparse.ArgumentParser) -> None:
    """Options accepted before any subcommand."""
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="settings file (default: config.toml in the user config dir)",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the Python traceback behind an error message",
    )


def config_path(args: argparse.Namespace) -> Path:
    """The settings file this invocation uses."""
    explicit: Path | None = getattr(args, "config", None)
    return explicit if explicit is not None else AppPaths.default().config_file


def load_settings(
    args: argparse.Namespace, overrides: dict[str, Any] | None = None
) -> config.Settings:
    """Settings from the file, the environment and the given flag overrides."""
    try:
        return config.load(config_path(args), overrides=overrides)
    except config.ConfigError as exc:
        raise UserError(str(exc)) from None


def not_built(name: str) -> int:
    """The answer of a subcommand whose body does not exist yet: say so, exit non-zero."""
    print(f"frogdesk {name}: not implemented yet in this version", file=sys.stderr)
    return 3
