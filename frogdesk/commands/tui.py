"""`frogdesk` with no subcommand: open the TUI (Textual is imported only here, lazily)."""

from __future__ import annotations

import argparse
from pathlib import Path

from frogdesk.commands.backend_flags import BACKENDS, check_endpoint, chosen_backend
from frogdesk.commands.common import config_path, load_settings
from frogdesk.commands.errors import UserError


def add_tui_options(parser: argparse.ArgumentParser) -> None:
    """Options of the TUI (the top-level command)."""
    parser.add_argument(
        "--repo",
        type=Path,
        default=None,
        help="repository to work on (default: the current directory)",
    )
    parser.add_argument(
        "--model", default=None, help="model spec: a .gguf path, REPO, REPO:QUANT or an alias"
    )
    parser.add_argument(
        "--backend", choices=BACKENDS, default=None, help="engine backend (as for `run`)"
    )
    parser.add_argument(
        "--endpoint",
        default=None,
        help="OpenAI-compatible base URL (implies --backend openai)",
    )
    parser.add_argument(
        "--script", type=Path, default=None, help=argparse.SUPPRESS
    )  # replay recorded replies (demos, tests)


def main(args: argparse.Namespace) -> int:
    """Open the TUI on the repository; a model not on disk opens the model picker first."""
    endpoint: str | None = getattr(args, "endpoint", None)
    backend = chosen_backend(getattr(args, "backend", None), endpoint)
    overrides = {"model": getattr(args, "model", None), "backend": backend}
    settings = load_settings(args, overrides | {"openai_endpoint": endpoint})
    script: Path | None = getattr(args, "script", None)
    if script is not None:
        settings = settings.replaced(backend="script")
    check_endpoint(settings.engine.backend, settings.engine.openai_endpoint)
    repo = (getattr(args, "repo", None) or Path.cwd()).resolve()
    if not repo.is_dir():
        raise UserError(f"{repo}: no such directory")
    from frogdesk.tui.launch import run_tui  # loads textual: only when the TUI opens

    given = getattr(args, "model", None) is not None
    return run_tui(repo, settings, config_path(args), script=script, model_given=given)
