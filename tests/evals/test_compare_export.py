"""`frogdesk eval compare` pairs two stored runs task by task; `export` writes SWE-bench JSONL."""

from __future__ import annotations

import json
from pathlib import Path

from frogdesk.evals.compare import bootstrap_interval, mcnemar_exact
from tests.evals.helpers import FIX, NOTHING, eval_json, frogdesk_eval, scripts, task_folder


def test_mcnemar_and_bootstrap_on_known_numbers() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 0) == 2 / 32  # all five discordant tasks one way
    assert abs(mcnemar_exact(3, 1) - 0.625) < 1e-12
    assert bootstrap_interval([0.0] * 10) == (0.0, 0.0)
    low, high = bootstrap_interval([1.0] * 5 + [0.0] * 5)
    assert 0.0 <= low < 0.5 < high <= 1.0
    assert bootstrap_interval([1.0, 0.0, 1.0]) == bootstrap_interval([1.0, 0.0, 1.0])


def test_compare_pairs_tasks_and_export_has_the_predictions_shape(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    for name in ("one", "two", "three"):
        task_folder(suite, name)
    a = eval_json(
        str(suite),
        "--no-precheck",
        "--script",
        str(scripts(tmp_path / "a", {"one": FIX, "two": FIX, "three": NOTHING})),
    )
    b = eval_json(
        str(suite),
        "--no-precheck",
        "--script",
        str(scripts(tmp_path / "b", {"one": FIX, "two": NOTHING, "three": FIX})),
    )
    done = frogdesk_eval("compare", a["run_id"], b["run_id"], "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["paired_tasks"] == 3
    assert result["gained"] == ["three"] and result["lost"] == ["two"]
    assert result["difference"] == 0.0 and result["mcnemar_p"] == 1.0
    low, high = result["interval_95"]
    assert low < 0 < high
    text = frogdesk_eval("compare", a["run_id"], b["run_id"])
    assert "gained by B (1): three" in text.stdout and "lost by B (1): two" in text.stdout
    out = tmp_path / "preds.jsonl"
    exported = frogdesk_eval("export", a["run_id"], "--output", str(out))
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(p["instance_id"] for p in lines) == ["one", "three", "two"]
    for prediction in lines:
        assert set(prediction) == {"instance_id", "model_name_or_path", "model_patch"}
        assert prediction["model_name_or_path"] == a["model"]
    patches = {p["instance_id"]: p["model_patch"] for p in lines}
    assert "+    return a + b" in patches["one"] and patches["three"] == ""
    runs = frogdesk_eval("runs", "--json")
    assert {r["run_id"] for r in json.loads(runs.stdout)} == {a["run_id"], b["run_id"]}


def test_compare_of_an_unknown_run_says_so(tmp_path: Path) -> None:
    done = frogdesk_eval("compare", "20260101-000000-abcdef", str(tmp_path))
    assert done.returncode == 2 and "no stored eval run" in done.stderr
    assert "Traceback" not in done.stderr


def test_models_list_shows_the_newest_finished_run_of_a_file(tmp_path: Path) -> None:
    from frogdesk.core.eval_summary import eval_lines
    from frogdesk.evals.results import AttemptRecord, RunResult, TaskResult
    from frogdesk.evals.store import EvalStore

    store = EvalStore(tmp_path / "evals")
    run = RunResult(
        "20260101-000000-aaaaaa", "starter", "starter", "m-Q4_K_M.gguf", "ab" * 32, "Q4_K_M",
        "llama", 1, {}, "0", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z",
        [TaskResult("t1", attempts=[AttemptRecord(0, True)]), TaskResult("t2", attempts=[AttemptRecord(0, False)])],
    )  # fmt: skip
    store.save_run(run)
    for task in run.tasks:
        store.save_task(run, task)
    assert eval_lines(["/models/m-Q4_K_M.gguf", "/models/other.gguf"], tmp_path) == [
        "eval: m-Q4_K_M.gguf: solved 1/2 of starter (run 20260101-000000-aaaaaa)"
    ]
