"""Recovered tool-call drifts are counted: per step, in the trajectory, in the session record."""

from __future__ import annotations

import json
from pathlib import Path

from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from tests.support.scripted import call, frogdesk, make_repo, write_script

BARE = "<function=Read>\n<parameter=file_path>\ncalc.py\n</parameter>\n</function>"
NO_FUNCTION_CLOSE = (
    "<tool_call>\n<function=Read>\n<parameter=file_path>\ncalc.py\n</parameter>\n</tool_call>"
)
DRIFTED_CLOSE = "<tool_call>\n<function=Read>\n<parameter=file_path>\ncalc.py\n</parameter1>\n</function>\n</tool_call>"


def test_recoveries_are_counted_by_kind_in_summary_trajectory_and_record(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    replies = [
        f"Look.\n</think>\n\n{BARE}",
        f"Again.\n</think>\n\n{NO_FUNCTION_CLOSE}\n{DRIFTED_CLOSE}",
        f"Exact.\n</think>\n\n{call('Read', file_path='calc.py')}",
        "Done.\n</think>\n\nLooked.",
    ]
    script = write_script(tmp_path / "s.jsonl", replies)
    done = frogdesk("run", "Look.", "--repo", str(repo), "--script", str(script), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    expected = {"bare_function": 1, "function_close_missing": 1, "parameter_close_drifted": 1}
    assert summary["recoveries"] == expected

    [record] = SessionStore(AppPaths.default().sessions_dir).list()
    assert record.recoveries == expected
    trajectory = json.loads(
        (Path(summary["output_dir"]) / "trajectory_seed-0.json").read_text(encoding="utf-8")
    )
    assert trajectory["frogdesk"]["recoveries"] == expected
    assert [s["recoveries"] for s in trajectory["frogdesk"]["steps"]] == [
        ["bare_function"],
        ["function_close_missing", "parameter_close_drifted"],
        [],
        [],
    ]
    # every recovered call ran: its observation is the file, as for the exact call
    reads = [o["observation"] for s in trajectory["steps"] for o in s["observations"]]
    assert len(reads) == 4 and all(r.startswith("calc.py\n1. def add") for r in reads)
