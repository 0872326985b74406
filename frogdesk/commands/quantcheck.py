"""`frogdesk models check`: arguments, progress on stderr, a table or JSON on stdout."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from frogdesk.commands.common import load_settings
from frogdesk.commands.errors import UserError
from frogdesk.core.quant_check import check_files
from frogdesk.inert import inert_line, inert_text
from frogdesk.paths import AppPaths
from frogdesk.quantcheck.errors import CheckCancelled
from frogdesk.quantcheck.report import CheckProgress, CheckReport

EXIT_CANCELLED = 130


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `models check`."""
    parser.add_argument("specs", nargs="+", metavar="SPEC", help="GGUF files to check")
    parser.add_argument(
        "--reference",
        metavar="SPEC",
        default=None,
        help="file to compare against (default: the most precise quant of the same model on disk,"
        " BF16 > F16 > Q8_0 > ...)",
    )
    parser.add_argument(
        "--tokens", type=int, default=None, metavar="N", help="score at most N corpus tokens"
    )
    parser.add_argument(
        "--cases",
        type=int,
        default=None,
        metavar="N",
        help="check tool calls on at most N transcript cases (default: all)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--no-cache", action="store_true", help="measure again even when a result is cached"
    )


def _resolve(spec: str) -> Path:
    path = Path(spec).expanduser()
    if path.suffix.lower() != ".gguf" or not path.is_file():
        raise UserError(f"not a local .gguf file: {spec}")
    return path


class _ProgressLine:
    """Tokens done, rate and ETA on one rewritten stderr line (only on a terminal)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._live = stream.isatty()

    def __call__(self, p: CheckProgress) -> None:
        if not self._live:
            return
        unit = "cases" if p.phase == "tool calls" else "tokens"
        eta = "" if p.eta_s is None else f", ETA {p.eta_s:.0f}s"
        line = f"{p.file}: {p.phase} {p.done}/{p.total} {unit} ({p.rate:.0f}/s{eta})"
        self._stream.write("\r" + inert_line(line)[:110].ljust(110))
        if p.done >= p.total:
            self._stream.write("\n")
        self._stream.flush()


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def format_report(report: CheckReport) -> str:
    """The human-readable table, with what the numbers are and are not."""
    against = (
        "the BF16 weights"
        if report.reference_quant == "BF16"
        else f"{report.reference_quant}, not the original BF16 weights"
    )
    lines = [
        f"Reference: {report.reference} ({report.reference_quant}); corpus v{report.corpus_version}",
        f"Local measurements against {against}; not benchmark scores.",
        "",
        f"{'quant':<10} {'mean KL':>9} {'p99 KL':>9} {'top-1':>7} {'ppl':>10} {'ref ppl':>10}"
        f" {'calls':>7} {'exact/recovered/lost':>20} {'tokens':>7}  file",
    ]
    for r in report.results:
        cached = " (cached)" if r.cached else ""
        lines.append(
            f"{r.quant:<10} {r.mean_kl:>9.5f} {r.p99_kl:>9.4f} {_pct(r.top1_agreement):>7}"
            f" {r.ppl:>10.3f} {r.ref_ppl:>10.3f} {_pct(r.tool_call_fidelity):>7}"
            f" {_outcomes(r.tool_calls):>20} {r.tokens:>7}"
            f"  {Path(r.file).name}{cached}"
        )
    return "\n".join(lines)


def _outcomes(counts: dict[str, int]) -> str:
    """`exact/recovered/lost` call counts, or n/a when the result predates them."""
    if not counts:
        return "n/a"
    return f"{counts.get('exact', 0)}/{counts.get('recovered', 0)}/{counts.get('lost', 0)}"


def run_check(args: argparse.Namespace) -> int:
    """Body of `models check`; returns the exit code."""
    if args.tokens is not None and args.tokens < 1:
        raise UserError("--tokens must be at least 1")
    if args.cases is not None and args.cases < 0:
        raise UserError("--cases must not be negative")
    files = [_resolve(spec) for spec in args.specs]
    reference = _resolve(args.reference) if args.reference else None
    settings = load_settings(args)
    try:
        report = check_files(
            files,
            reference,
            settings,
            AppPaths.default(),
            tokens=args.tokens,
            cases=args.cases,
            progress=_ProgressLine(sys.stderr),
            use_cache=not args.no_cache,
        )
    except KeyboardInterrupt:
        print("\ncheck cancelled; nothing was cached for the unfinished file", file=sys.stderr)
        return EXIT_CANCELLED
    except CheckCancelled as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_CANCELLED
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(inert_text(format_report(report)))
    return 0
