"""`frogdesk eval SUITE --model A --model B`: each model's run stored apart, loaded once for all
its tasks (counted on real llama.cpp), and the JSON and table per model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from frogdesk.evals.store import EvalStore
from frogdesk.paths import AppPaths
from tests.evals.helpers import FIX, NOTHING, eval_json, frogdesk_eval, scripts, task_folder

LOADED = "loaded the model in"
"""The line each load of a llama model ends with (the eval's own and any session's reload)."""


def _suite(root: Path) -> Path:
    suite = root / "suite"
    task_folder(suite, "a-calc")
    task_folder(suite, "b-calc")
    return suite


def test_two_scripted_models_run_one_after_another(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    good = scripts(tmp_path / "good", {"a-calc": FIX, "b-calc": FIX})
    idle = scripts(tmp_path / "idle", {"a-calc": NOTHING, "b-calc": NOTHING})
    data = eval_json(str(suite), "--script", str(good), "--script", str(idle), "--no-precheck")
    assert [r["model"] for r in data["runs"]] == ["good", "idle"]
    assert [(r["solved"], r["total"]) for r in data["runs"]] == [(2, 2), (0, 2)]
    assert all([t["task"] for t in r["tasks"]] == ["a-calc", "b-calc"] for r in data["runs"])
    stored = EvalStore(AppPaths.default().data_dir / "evals").runs()
    ids = {r["run_id"] for r in data["runs"]}
    assert len(ids) == 2 and ids <= {s["run_id"] for s in stored}
    # one model keeps the single-run shape
    one = eval_json(str(suite), "--script", str(good), "--no-precheck")
    assert "runs" not in one and one["solved"] == 2
    table = frogdesk_eval(str(suite), "--script", str(good), "--script", str(idle), "--no-precheck")
    assert table.returncode == 0, table.stderr
    totals = [line for line in table.stdout.splitlines() if line.startswith("solved ")]
    assert len(totals) == 2 and "(good," in totals[0] and "(idle," in totals[1]


def test_each_llama_model_is_loaded_once_for_all_its_tasks(
    tmp_path: Path, smollm2_gguf: Path
) -> None:
    suite = _suite(tmp_path)
    second = tmp_path / "models" / "SmolLM2-copy.Q4_1.gguf"
    second.parent.mkdir()
    shutil.copyfile(smollm2_gguf, second)
    env = os.environ | {"FROGDESK_MAX_TOKENS_PER_TURN": "8", "FROGDESK_CONTEXT_SIZE": "8192"}
    done = subprocess.run(
        [sys.executable, "-m", "frogdesk", "eval", str(suite), "--model", str(smollm2_gguf),
         "--model", str(second), "--max-steps", "1", "--no-precheck", "--json"],
        capture_output=True, text=True, timeout=900, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)["runs"]
    assert [r["model"] for r in runs] == [smollm2_gguf.name, second.name]
    assert all(len(r["tasks"]) == 2 for r in runs)
    lines = done.stderr.splitlines()
    loads = [i for i, line in enumerate(lines) if LOADED in line]
    assert len(loads) == 2, done.stderr  # one load per model, none between tasks
    starts = [i for i, line in enumerate(lines) if line.startswith("eval ")]
    assert loads[0] < starts[0] < loads[1] < starts[1]
