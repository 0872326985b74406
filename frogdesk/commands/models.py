"""`frogdesk models`: list, pull, inspect, remove and import GGUF models."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path
from typing import Any

from frogdesk.commands.common import config_path, load_settings
from frogdesk.commands.errors import UserError
from frogdesk.commands.quantcheck import add_check_arguments, run_check
from frogdesk.config import Settings
from frogdesk.core.chooser import drift_words, hub_choices
from frogdesk.core.eval_summary import eval_lines
from frogdesk.core.model_ops import drift_result, fit_context, progress_line
from frogdesk.core.model_shelf import (
    disk_rows,
    estimate_line,
    import_file,
    inspect_model,
    load_options,
    plan_spec_pull,
    remember_license_notice,
    remove,
)
from frogdesk.inert import inert_line
from frogdesk.models.catalog_row import CatalogRow
from frogdesk.models.errors import ModelError
from frogdesk.models.listing import source_line
from frogdesk.models.progress import Progress
from frogdesk.models.retry import RetryPolicy
from frogdesk.models.spec import parse_spec
from frogdesk.models.warning import LICENSE_AMBIGUOUS, ModelWarning
from frogdesk.paths import AppPaths
from frogdesk.sizes import human_bytes, memory_size


def _context(args: argparse.Namespace, settings: Settings) -> int:
    explicit: int | None = getattr(args, "context", None)
    return fit_context(settings, explicit)


def _show_warnings(
    warnings: list[ModelWarning], settings: Settings, model: str, config_file: Path
) -> None:
    """Print warnings on stderr; remember the once-per-model license notice."""
    for warning in warnings:
        print(inert_line(f"{warning.level}: {warning.text} [{warning.id}]"), file=sys.stderr)
    remember_license_notice(settings, config_file, warnings, model)


def _table(rows: list[CatalogRow], paths: AppPaths) -> str:
    header = ("FILE", "QUANT", "BITS", "SIZE", "ON DISK", "FIT", "WARNINGS", "DRIFT (quant check)")
    lines = [header]
    for row in rows:
        quant = ("i1-" if row.name.imatrix else "") + (row.name.quant or "?")
        if row.name.mmproj:
            quant = "mmproj"
        lines.append(
            (
                inert_line(row.label),
                inert_line(quant),
                f"{row.name.bits:g}" if row.name.bits else "-",
                human_bytes(row.size),
                "yes" if row.local_path else "no",
                row.fit,
                ",".join(w.id for w in row.warnings) or "-",
                inert_line(drift_words(row, paths.data_dir)),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )


def cmd_list(args: argparse.Namespace) -> int:
    """List a repo's quants (from the Hub or its saved listing) or the models on disk."""
    settings = load_settings(args)
    paths = AppPaths.default()
    context = _context(args, settings)
    if args.repo:
        spec = parse_spec(args.repo, settings.aliases)
        if spec.kind != "repo":
            raise UserError(
                f"{args.repo}: `models list` takes a repo; use `models info` for a file"
            )
        try:
            chosen = hub_choices(
                spec,
                settings,
                paths,
                endpoint=args.endpoint,
                retry=_retry(),
                context=context,
            )
        except KeyboardInterrupt:
            raise UserError("cancelled while waiting for the Hub", 130) from None
        _say(chosen.notes)
        rows = chosen.rows
        source = source_line(chosen.listing)
    else:
        rows = disk_rows(settings, paths, context)
        source = "this machine"
    if args.json:
        print(
            json.dumps(
                {
                    "source": source,
                    "context": context,
                    "models": [
                        {**r.to_dict(), "quant_check": drift_result(r, paths.data_dir)}
                        for r in rows
                    ],
                },
                indent=2,
            )
        )
        return 0
    if not rows:
        print(
            "no models found" + ("" if args.repo else "; pull one with `frogdesk models pull SPEC`")
        )
        return 0
    print(_table(rows, paths))
    for line in eval_lines([str(r.local_path) for r in rows if r.local_path], paths.data_dir):
        print(inert_line(line))  # stored `frogdesk eval` results beside the drift
    note = f"\nfrom {inert_line(source)}; fit at {context:,} tokens of context (or the model's own maximum)"
    if any(r.fit.endswith("~") for r in rows):
        note += "; FIT~ is judged from the file size alone (pull any quant of the repo for its KV cache)"
    print(note, file=sys.stderr)
    return 0


def print_progress(p: Progress) -> None:
    """A download's progress line on stderr, rewritten in place."""
    print(
        f"\r{inert_line(progress_line(p))}   ",
        end="" if p.done < p.total else "\n",
        file=sys.stderr,
        flush=True,
    )


def print_countdown(seconds: int, attempt: int, reason: str) -> None:
    """The wait before the Hub is asked again, on stderr, rewritten in place."""
    print(
        f"\r{inert_line(reason)}; trying again in {seconds} s (try {attempt}), Ctrl+C cancels ",
        end="",
        file=sys.stderr,
        flush=True,
    )


def _retry() -> RetryPolicy:
    """Transient Hub failures retried with a countdown on stderr (Ctrl+C cancels)."""
    return RetryPolicy(on_wait=print_countdown)


def _say(notes: list[str]) -> None:
    for line in notes:
        print(inert_line(line), file=sys.stderr)


def cmd_pull(args: argparse.Namespace) -> int:
    """Download (or resume) a model; verified against the Hub's sha256 before it is used."""
    settings = load_settings(args)
    paths = AppPaths.default()
    spec = parse_spec(args.spec or settings.model, settings.aliases)
    if spec.kind != "repo":
        raise UserError(f"{spec} is a local file; use `frogdesk models import {spec}`")
    try:
        planned = plan_spec_pull(spec, settings, paths, endpoint=args.endpoint, retry=_retry())
    except KeyboardInterrupt:
        raise UserError("cancelled while waiting for the Hub", 130) from None
    _say(planned.notes)
    _show_warnings(planned.warnings, settings, spec.repo, config_path(args))
    print(
        f"pulling {inert_line(planned.label)} ({human_bytes(planned.total_bytes)}) "
        f"from {planned.listing.endpoint} into {planned.cache}",
        file=sys.stderr,
    )
    cancel = threading.Event()
    try:
        files = planned.run(settings, progress=print_progress, cancel=cancel)
    except KeyboardInterrupt:
        cancel.set()
        raise UserError(
            "interrupted; the partial download is kept, run the same command to resume", 130
        ) from None
    print(inert_line(str(files[0])))
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """Metadata, memory estimate, offload plan and warnings of a local model."""
    settings = load_settings(args)
    report = inspect_model(args.spec, settings, getattr(args, "context", None))
    path, info, chosen, memory = report.path, report.info, report.plan, report.memory
    top, warnings, key, dialect = (
        report.largest_context,
        report.warnings,
        report.license_model,
        report.dialect,
    )
    if args.json:
        est = chosen.estimate
        out: dict[str, Any] = {
            "metadata": info.to_dict(),
            "tool_call_dialect": dialect,
            "estimate": {**est.__dict__, "total": est.total},
            "plan": {
                "offload": chosen.offload,
                "gpu_layers": chosen.gpu_layers,
                "fits": chosen.fits,
                "note": chosen.note,
            },
            "load": load_options(settings, info),
            "largest_context": top,
            "memory": memory.__dict__,
            "warnings": [w.__dict__ for w in warnings],
        }
        print(json.dumps(out, indent=2, default=str))
        _show_warnings(
            [w for w in warnings if w.id == LICENSE_AMBIGUOUS], settings, key, config_path(args)
        )
        return 0
    est = chosen.estimate
    kv = f"{info.full_attention_layers} of {info.block_count} layers, {info.head_count_kv} KV heads x {info.key_length}"
    rows = [
        ("file", str(path) + (f" (+{len(info.parts) - 1} parts)" if len(info.parts) > 1 else "")),
        ("architecture", info.architecture),
        ("name", info.name or "-"),
        ("parameters", f"{info.parameters:,}"),
        ("quant", f"{info.file_type} ({info.bits_per_weight:.2f} bits per weight)"),
        ("context length", f"{info.context_length:,}"),
        (
            "layers",
            f"{info.block_count}" + (f" (+{info.nextn_layers} MTP)" if info.nextn_layers else ""),
        ),
        ("full attention", kv + f", interval {info.full_attention_interval}"),
        (
            "recurrent",
            f"{info.recurrent_layers} layers, state {info.ssm_state_size}, inner {info.ssm_inner_size}"
            if info.recurrent_layers
            else "none",
        ),
        ("chat template", "yes" if info.chat_template else "no"),
        ("tool calls", report.dialect_line()),
        (
            "sampling defaults",
            ", ".join(
                f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                for k, v in info.sampling.items()
            )
            or "none in file",
        ),
        ("license field", info.license or "-"),
        (
            "estimate",
            estimate_line(est),
        ),
        (
            "this machine",
            f"{memory_size(memory.ram_free)} RAM free"
            + (
                f", {memory_size(memory.vram_free)} VRAM free ({memory.gpu_name})"
                if memory.vram_free is not None
                else ", no GPU offload"
            ),
        ),
        ("plan", ("fits: " if chosen.fits else "does not fit: ") + chosen.note),
        ("largest context", f"{top:,} tokens" if top else "none fits"),
    ]
    width = max(len(k) for k, _ in rows)
    for key_name, value in rows:
        print(f"{key_name.ljust(width)}  {inert_line(str(value))}")
    _show_warnings(warnings, settings, key, config_path(args))
    return 0


def cmd_rm(args: argparse.Namespace) -> int:
    """Remove a model: from the Hugging Face cache, or FrogDesk's own files (imported links, old pulls)."""
    settings = load_settings(args)
    for line in remove(args.spec, settings, AppPaths.default()):
        print(inert_line(line))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Make a local GGUF known to FrogDesk, linked (or copied with --copy)."""
    target = import_file(Path(args.path), AppPaths.default(), copy=args.copy)
    print(inert_line(str(target)))
    return 0


def _guard(func: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            code: int = func(args)
        except ModelError as exc:
            raise UserError(str(exc)) from None
        return code

    return run


def register(sub: Any) -> None:
    """Add `models` and its subcommands."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "models", help="list, pull, inspect, remove and import GGUF models"
    )
    endpoint_help = (
        "Hub endpoint (default: settings hf_endpoint, HF_ENDPOINT, https://huggingface.co)"
    )
    parser.add_argument("--endpoint", default=None, help=endpoint_help)

    def usage(args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=usage)
    actions = parser.add_subparsers(title="actions", metavar="ACTION")

    def action(name: str, func: Any, help_text: str) -> argparse.ArgumentParser:
        child: argparse.ArgumentParser = actions.add_parser(name, help=help_text)
        child.add_argument("--endpoint", default=argparse.SUPPRESS, help=endpoint_help)
        child.set_defaults(func=_guard(func))
        return child

    p = action(
        "list", cmd_list, "a repo's quants with size, fit and warnings, or the models on disk"
    )
    p.add_argument("repo", nargs="?", help="OWNER/REPO on the Hub (default: the models on disk)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--context", type=int, default=None, help="context size for the fit (default: settings)"
    )
    p = action("pull", cmd_pull, "download a model (resumable, sha256-verified)")
    p.add_argument(
        "spec",
        nargs="?",
        help="REPO or REPO:QUANT, e.g. bartowski/FrogNano-4B-2609-GGUF:Q4_K_M, or an alias "
        "(default: the `model` setting)",
    )
    p = action("info", cmd_info, "metadata, memory estimate and warnings of a model")
    p.add_argument("spec", help="a .gguf path, REPO[:QUANT] already pulled, or an alias")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--context",
        type=int,
        default=None,
        help="context size for the estimate (default: settings)",
    )
    p = action("rm", cmd_rm, "remove a pulled or imported model")
    p.add_argument("spec", help="REPO[:QUANT] or a path inside FrogDesk's models dir")
    p = action("import", cmd_import, "make a local .gguf known to FrogDesk (linked, not copied)")
    p.add_argument("path", help="the .gguf file (any part of a split model)")
    p.add_argument("--copy", action="store_true", help="copy the file instead of linking it")
    p = action("check", run_check, "measure how far quants drift from a reference on a corpus")
    add_check_arguments(p)
