"""Eval results on disk, per model file and settings, one file per finished task.

    DATA_DIR/evals/MODEL-SHA12-SETTINGS8/RUN_ID/run.json        the run's summary
    DATA_DIR/evals/MODEL-SHA12-SETTINGS8/RUN_ID/tasks/NAME.json  one finished task each

Every file is written atomically (frogdesk.durable) the moment its task ends, so a killed
eval loses no finished task and `--resume RUN_ID` runs only the rest.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frogdesk.durable import atomic_write_text
from frogdesk.evals.errors import EvalError
from frogdesk.evals.results import RunResult, TaskResult

RUN_FILE = "run.json"
TASKS_DIR = "tasks"
RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")


def settings_key(settings: dict[str, Any]) -> str:
    """Eight hex digits that change with any setting that changes results."""
    blob = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:8]


def model_key(model: str, sha256: str, settings: dict[str, Any]) -> str:
    """The folder of a model file and settings: a readable name, its hash, the settings'."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(model).name or "model").strip("-")[:60]
    return f"{name or 'model'}-{(sha256 or 'nohash')[:12]}-{settings_key(settings)}"


def new_run_id() -> str:
    """A sortable, unique run id: UTC time and six random hex digits."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class EvalStore:
    """The results folder under the app's data dir."""

    root: Path

    def run_dir(self, run: RunResult) -> Path:
        """Where `run` is kept."""
        return self.root / model_key(run.model, run.model_sha256, run.settings) / run.run_id

    def save_run(self, run: RunResult) -> Path:
        """Write the run's summary (at its start, and again at its end)."""
        folder = self.run_dir(run)
        (folder / TASKS_DIR).mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / RUN_FILE, json.dumps(run.summary(), indent=2) + "\n")
        return folder

    def save_task(self, run: RunResult, result: TaskResult) -> None:
        """Write one finished task's result, durably, before the next task starts."""
        folder = self.run_dir(run) / TASKS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / f"{result.task}.json", json.dumps(result.to_json()) + "\n")

    def find(self, ref: str) -> Path:
        """The folder of run `ref`: a run id, or a path to a run folder or its run.json."""
        path = Path(ref).expanduser()
        if path.name == RUN_FILE:
            path = path.parent
        if (path / RUN_FILE).is_file():
            return path
        if RUN_ID.fullmatch(ref):
            found = sorted(self.root.glob(f"*/{ref}/{RUN_FILE}"))
            if found:
                return found[0].parent
        raise EvalError(f"no stored eval run {ref!r} (see `frogdesk eval runs`)")

    def load(self, ref: str) -> RunResult:
        """A stored run with every task it finished, in the order they finished."""
        folder = self.find(ref)
        try:
            data = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
            tasks: list[tuple[float, TaskResult]] = []
            for item in (folder / TASKS_DIR).glob("*.json"):
                result = TaskResult.from_json(json.loads(item.read_text(encoding="utf-8")))
                tasks.append((item.stat().st_mtime, result))
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise EvalError(f"the eval run in {folder} cannot be read: {exc}") from None
        tasks.sort(key=lambda pair: (pair[0], pair[1].task))
        return RunResult.from_json(data, [t for _, t in tasks])

    def runs(self) -> list[dict[str, Any]]:
        """Every stored run's summary, newest first (unreadable ones left out)."""
        out: list[dict[str, Any]] = []
        for path in self.root.glob(f"*/*/{RUN_FILE}"):
            try:
                out.append(self.load(str(path.parent)).summary())
            except EvalError:
                continue
        out.sort(key=lambda s: str(s.get("run_id", "")), reverse=True)
        return out

    def latest_for(self, model_sha256: str) -> dict[str, Any] | None:
        """The newest finished run of a model file (any settings), for `models list`."""
        for summary in self.runs():
            if summary.get("model_sha256") == model_sha256 and summary.get("finished"):
                return summary
        return None
