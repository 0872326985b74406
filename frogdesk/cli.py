"""The `frogdesk` command: the TUI by default, and headless subcommands."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import types
from collections.abc import Sequence

from frogdesk import __version__
from frogdesk.commands import common, doctor, models, review, run, sessions, tool, tui
from frogdesk.commands import eval as eval_command
from frogdesk.core.reviewing import recover_interrupted
from frogdesk.errors import FrogDeskError, describe_os_error
from frogdesk.inert import inert_line, inert_text
from frogdesk.logfile import listen_for_notices, route_library_logs
from frogdesk.paths import AppPaths
from frogdesk.scratch import use_scratch

EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: what a shell reports for a command whose reader went away."""


def build_parser() -> argparse.ArgumentParser:
    """The whole command-line surface; each subcommand module adds its own parser."""
    parser = argparse.ArgumentParser(
        prog="frogdesk",
        description="A local coding agent for FrogNano GGUF quants. Without a subcommand, opens the TUI.",
    )
    parser.add_argument("--version", action="version", version=f"frogdesk {__version__}")
    common.add_global_options(parser)
    tui.add_tui_options(parser)
    parser.set_defaults(func=tui.main)
    sub = parser.add_subparsers(title="subcommands", metavar="COMMAND")
    for module in (run, tool, models, sessions, review, doctor, eval_command):
        module.register(sub)
    return parser


def _fail(message: str, debug: bool) -> None:
    """One line on stderr (the traceback before it under --debug)."""
    if debug:
        # the exception's text can quote a file name or a tool argument: shown, never obeyed
        sys.stderr.write(inert_text(traceback.format_exc()))
    print(f"frogdesk: {inert_line(message)}", file=sys.stderr)


def _quiet_broken_pipe() -> int:
    """The reader of stdout went away (`| head`): stop without a word, and keep Python's
    shutdown flush from failing on the same pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return EXIT_BROKEN_PIPE


def _print_bug(
    kind: type[BaseException], exc: BaseException, tb: types.TracebackType | None
) -> None:
    """Python's report of an unexpected exception, with every control character made visible
    (its message may quote outside text)."""
    sys.stderr.write(inert_text("".join(traceback.format_exception(kind, exc, tb))))


def _warn_on_stderr(notice: str) -> None:
    """A library warning that matters, in one line on stderr (the notice is inert already)."""
    print(f"frogdesk: warning: {notice}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and run the chosen command.

    A FrogDeskError (a problem the user can fix) or an OSError from the system prints one
    line on stderr and exits with its code; `--debug` adds the traceback. Anything else is
    a bug and keeps its traceback.
    """
    sys.excepthook = _print_bug
    parser = build_parser()
    args = parser.parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    stop_notices = listen_for_notices(_warn_on_stderr)
    try:
        if not getattr(args, "tolerates_bad_config", False):
            common.load_settings(args)  # a bad config file stops here with one clear line
        route_library_logs(AppPaths.default().log_file)
        with use_scratch():
            _recover_transactions()
            code: int = args.func(args)
            sys.stdout.flush()  # a closed pipe shows here, inside the handler below
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except FrogDeskError as exc:
        _fail(str(exc), debug)
        return exc.exit_code
    except OSError as exc:
        _fail(describe_os_error(exc), debug)
        return 1
    except KeyboardInterrupt:
        print("frogdesk: interrupted", file=sys.stderr)
        return 130
    finally:
        stop_notices()
    return code


def _recover_transactions() -> None:
    """Finish or revert any apply or undo a crash interrupted, saying so in one line each."""
    for line in recover_interrupted(AppPaths.default()):
        print(f"frogdesk: {line}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
