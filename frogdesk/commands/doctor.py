"""`frogdesk doctor`: report what this machine and install can do."""

from __future__ import annotations

import argparse
import json
from typing import Any

from frogdesk.commands.common import config_path
from frogdesk.core.doctor import collect, format_text
from frogdesk.inert import inert_text


def register(sub: Any) -> None:
    """Add the `doctor` subcommand."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "doctor",
        help="check Python, llama.cpp, memory, GPU, sandbox, paths and the Hub",
        description="Report versions, llama.cpp's GPU support, CPU and memory, GPUs, the shell "
        "sandbox level, the config and data paths, and whether the Hub answers.",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--hub-timeout", type=float, default=3.0, help="seconds to wait for the Hub (default 3)"
    )
    parser.set_defaults(func=run, tolerates_bad_config=True)


def run(args: argparse.Namespace) -> int:
    """Print the report; exit 0 even when offline, 2 when the config file is invalid."""

    report = collect(config_path(args), hub_timeout=args.hub_timeout)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(inert_text(format_text(report)))
    return 0 if report.config.get("valid") else 2
