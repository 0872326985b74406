"""Benchmark: a well-known terminal agent (aider) on bench/real_model.py's five bug fixes; JSON.

The reference for FrogDesk's own figures: the same tasks, the same model served by an
OpenAI-compatible endpoint (llama-server serving the GGUF), the same verdict. Each task gets a
fresh repository made from its snapshot by the code `frogdesk eval` uses; aider runs once on
it with the task's text (`--message`), every file of the snapshot in its chat, `--yes-always`,
no commits, and the task's own check as its test command (`--auto-test`: it sees the
failures and tries again, as its own benchmark lets it); then the check runs as FrogDesk's
eval runs it, with the tests put back first, so an edited test cannot pass. Per task: solved,
the files the agent changed, its exit, the wall time; then the solve rate and the total.

The agent runs on the host, with no sandbox (aider has none): the tasks are ours and the
repositories throwaway copies, which is the only reason that is acceptable here.

    python bench/terminal_agent.py --endpoint http://127.0.0.1:8080/v1 --aider PATH --json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from real_model import bench_tasks

from frogdesk.evals.repo import make_task_repo
from frogdesk.evals.restore import check_command
from frogdesk.evals.task import EvalTask

AIDER_FLAGS = (
    "--yes-always",
    "--no-auto-commits",
    "--no-dirty-commits",
    "--no-check-update",
    "--analytics-disable",
    "--no-show-model-warnings",
    "--no-pretty",
    "--no-fancy-input",
    "--no-gitignore",
    "--auto-test",
)
"""No question, no commit, no network beyond the endpoint, plain output, tests after edits."""


def _run(
    command: list[str], cwd: Path, seconds: float, log: Path, env: dict[str, str]
) -> tuple[str, float]:
    """Run `command` in its own process group, killed whole after `seconds`; (exit, wall)."""
    started = time.monotonic()
    with log.open("wb") as out:
        child = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        try:
            code = child.wait(timeout=seconds)
            exit_reason = f"exit {code}"
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            exit_reason = "time limit"
    return exit_reason, time.monotonic() - started


def _changed(repo: Path) -> list[str]:
    """The paths the agent changed or added, as git sees them."""
    out = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(line[3:] for line in out.splitlines() if ".aider" not in line)


def run_task(task: EvalTask, aider: Path, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One task: a fresh repository, aider on it, then the check with the tests put back."""
    repo = make_task_repo(task, work / task.name / "repo")
    log = work / task.name / "aider.log"
    command = [
        str(aider),
        "--model",
        f"openai/{args.model_name}",
        "--openai-api-base",
        args.endpoint,
        "--openai-api-key",
        "none",
        "--test-cmd",
        task.check,
        "--message",
        task.text,
        *AIDER_FLAGS,
        *sorted(task.files),
    ]
    if args.temperature is not None:
        settings = work / "model-settings.yml"
        settings.write_text(
            f"- name: openai/{args.model_name}\n  use_temperature: {args.temperature}\n",
            encoding="utf-8",
        )
        command += ["--model-settings-file", str(settings)]
    env = {**os.environ, "AIDER_ANALYTICS": "false", "NO_COLOR": "1"}
    exit_reason, wall = _run(command, repo, args.max_time, log, env)
    changed = _changed(repo)
    check = subprocess.run(
        ["bash", "-c", check_command(task)],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=task.timeout,
    )
    return {
        "task": task.name,
        "solved": check.returncode == 0,
        "files_changed": changed,
        "exit_reason": exit_reason,
        "wall_seconds": round(wall, 1),
        "log": str(log),
    }


def main(argv: list[str] | None = None) -> int:
    """Run aider on each task; print JSON (or a short table)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", required=True, help="the API base, e.g. http://HOST/v1")
    parser.add_argument("--aider", type=Path, required=True, help="the aider executable")
    parser.add_argument("--model-name", default="qwen2.5-coder-1.5b-instruct-q4_k_m")
    parser.add_argument("--tasks", default="", help="comma-separated task names (default: five)")
    parser.add_argument("--max-time", type=float, default=900.0, help="seconds per task")
    parser.add_argument(
        "--temperature", type=float, default=None, help="default: aider's own (0 for this model)"
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep repositories and logs here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not os.access(args.aider, os.X_OK):
        raise SystemExit(f"{args.aider} is not an executable (pip install aider-chat)")
    tasks = bench_tasks([t for t in args.tasks.split(",") if t])
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-terminal-agent-"))
    started = time.monotonic()
    rows = [run_task(task, args.aider, args, work) for task in tasks]
    wall = time.monotonic() - started
    solved = sum(row["solved"] for row in rows)
    report = {
        "agent": "aider",
        "agent_version": subprocess.run(
            [str(args.aider), "--version"], capture_output=True, text=True
        ).stdout.strip(),
        "endpoint": args.endpoint,
        "tasks": rows,
        "solved": solved,
        "total": len(rows),
        "solve_rate": round(solved / len(rows), 3) if rows else 0.0,
        "wall_seconds": round(wall, 1),
        "work": str(work),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for row in rows:
            print(f"{row['task']:<20} solved={row['solved']} {row['wall_seconds']}s")
        print(f"solved {solved}/{len(rows)} in {wall:.0f}s", file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
