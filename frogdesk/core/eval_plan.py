"""What an eval command works on, found before anything loads: the suite, each model it
runs (identified by its file's sha256, or its script's or endpoint's), the store and the
runs it resumes; and the store's other operations (runs, compare, export)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frogdesk.config import Settings
from frogdesk.core.evaluating import check_resumable, file_sha256, gguf_quant
from frogdesk.evals.compare import compare, describe
from frogdesk.evals.errors import EvalError
from frogdesk.evals.export import predictions_jsonl
from frogdesk.evals.results import RunResult
from frogdesk.evals.store import EvalStore
from frogdesk.evals.suites import Suite, load_suite, select, skip_missing_tools
from frogdesk.evals.task import EvalTask
from frogdesk.paths import AppPaths
from frogdesk.sessions.parts import resolve_model_path


@dataclass(frozen=True)
class ModelRun:
    """One model of the command: what it is given as, and what its results are stored under."""

    given: str
    """The --model (or --script) value, as it is given again to resume."""
    kind: str
    name: str
    sha256: str
    quant: str = ""
    path: Path | None = None
    """The .gguf to load (llama)."""
    script: Path | None = None
    endpoint: str = ""
    model: str = ""


@dataclass
class EvalPlan:
    """A suite, the models to run on it and where their results go, before anything runs."""

    suite: Suite
    models: list[ModelRun]
    store: EvalStore
    recorded: dict[str, Any]
    """The settings recorded with each run (the first model's backend kind)."""
    resumed: dict[str, RunResult] = field(default_factory=dict)
    """The stored runs being continued, by the sha256 of the model each continues."""

    def todo(self) -> int:
        """The tasks left to run over every model (a resumed run's done tasks left out)."""
        total = 0
        for model in self.models:
            run = self.resumed.get(model.sha256)
            done = {r.task for r in run.tasks} if run is not None else set()
            total += len([t for t in self.suite.tasks if t.name not in done])
        return total


def eval_store(paths: AppPaths) -> EvalStore:
    """The stored eval runs under the data folder."""
    return EvalStore(paths.data_dir / "evals")


def open_suite(
    spec: str, patterns: list[str], *, check: str = "", timeout: float | None = None
) -> Suite:
    """The suite `spec` names, only the tasks matching `patterns` (all when none), a task
    whose tools this machine lacks kept as a problem; raises EvalError for one that cannot
    be used."""
    return skip_missing_tools(select(load_suite(spec, check=check, timeout=timeout), patterns))


def tree_sha(path: Path) -> str:
    """The sha256 of a file, or of a folder's files with their names."""
    if path.is_file():
        return file_sha256(path)
    digest = hashlib.sha256()
    for item in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(item.relative_to(path).as_posix().encode() + b"\0")
        digest.update(item.read_bytes())
    return digest.hexdigest()


def script_models(kind: str, scripts: list[Path]) -> list[ModelRun]:
    """Each script (a file or a folder of TASK[.N].jsonl) standing for a model."""
    if not scripts or any(not s.exists() for s in scripts):
        raise EvalError("the script backend needs --script FILE or FOLDER that exists")
    out = []
    for given in scripts:
        script = given.expanduser().resolve()
        out.append(ModelRun(str(given), kind, script.name, tree_sha(script), script=script))
    return out


def endpoint_models(kind: str, endpoint: str, models: list[str]) -> list[ModelRun]:
    """Each model an endpoint serves, identified by the endpoint and the model's name."""
    runs = []
    for model in models:
        sha = hashlib.sha256(f"{endpoint}|{model}".encode()).hexdigest()
        runs.append(ModelRun(model, kind, model or endpoint, sha, endpoint=endpoint, model=model))
    return runs


def local_models(kind: str, specs: list[str], settings: Settings) -> list[ModelRun]:
    """Each local model by its file's sha256 and recorded quant; a spec not on this machine
    raises ModelError saying how to get it."""
    runs = []
    for spec in specs:
        path = resolve_model_path(spec, settings)
        runs.append(ModelRun(spec, kind, path.name, file_sha256(path), gguf_quant(path), path=path))
    return runs


def scripts_for(path: Path) -> Callable[[EvalTask, int], tuple[str, ...]]:
    """The script of each attempt of a task, from one file or a folder of TASK[.N].jsonl."""

    def pick(task: EvalTask, attempts: int) -> tuple[str, ...]:
        if path.is_file():
            return (str(path),)
        per = [path / f"{task.name}.{i}.jsonl" for i in range(1, attempts + 1)]
        if attempts > 1 and all(p.is_file() for p in per):
            return tuple(str(p) for p in per)
        one = path / f"{task.name}.jsonl"
        if one.is_file():
            return (str(one),)
        raise EvalError(f"no script for this task ({one.name} in {path})")

    return pick


def plan_eval(
    paths: AppPaths,
    suite: Suite,
    models: list[ModelRun],
    recorded: dict[str, Any],
    resume: list[str],
) -> EvalPlan:
    """The plan, each `--resume` run loaded and checked against its model, suite and settings."""
    plan = EvalPlan(suite, models, eval_store(paths), recorded)
    for ref in resume:
        run = plan.store.load(ref)
        if not any(m.sha256 == run.model_sha256 for m in models):
            raise EvalError(f"run {run.run_id} was made with another model file")
        check_resumable(run, suite, recorded, run.model_sha256)
        plan.resumed[run.model_sha256] = run
    return plan


def compare_stored(paths: AppPaths, a: str, b: str) -> tuple[dict[str, Any], list[str]]:
    """Two stored runs compared task by task: the figures as JSON, and in words."""
    store = eval_store(paths)
    result = compare(store.load(a), store.load(b))
    return result.to_json(), describe(result)


def export_stored(paths: AppPaths, ref: str, attempt: int) -> str:
    """A stored run's patches as SWE-bench predictions (JSONL), from attempt `attempt`."""
    return predictions_jsonl(eval_store(paths).load(ref), attempt)


def stored_runs(paths: AppPaths) -> list[dict[str, Any]]:
    """Every stored run's summary, newest first."""
    return eval_store(paths).runs()
