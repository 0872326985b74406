"""The `frogdesk` command: the TUI by default, and headless subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from frogdesk import __version__
from frogdesk.commands import common


def build_parser() -> argparse.ArgumentParser:
    """The whole command-line surface; each subcommand module adds its own parser."""
    from frogdesk.commands import doctor, models, review, run, sessions, tool, tui

    parser = argparse.ArgumentParser(
        prog="frogdesk",
        description="A local coding agent for FrogNano GGUF quants. Without a subcommand, opens the TUI.",
    )
    parser.add_argument("--version", action="version", version=f"frogdesk {__version__}")
    common.add_global_options(parser)
    tui.add_tui_options(parser)
    parser.set_defaults(func=tui.main)
    sub = parser.add_subparsers(title="subcommands", metavar="COMMAND")
    for module in (run, tool, models, sessions, review, doctor):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and run the chosen command; user errors exit 2 without a traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if not getattr(args, "tolerates_bad_config", False):
            common.load_settings(args)  # a bad config file stops here with one clear line
        code: int = args.func(args)
    except common.UserError as exc:
        print(f"frogdesk: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("frogdesk: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    raise SystemExit(main())
