"""Invariant 6: bad input gives a clear message and a way forward; nothing crashes, nothing is lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from frogdesk.paths import AppPaths
from frogdesk.sessions.store import SessionStore
from tests.support.e2e import (
    call,
    changed_paths,
    frogdesk,
    git,
    make_user_repo,
    observations,
    reply,
    repo_state,
    run_script,
    write_script,
)


def one_clear_line(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """A user error: exit 2, no traceback, one `frogdesk:` line on stderr naming `words`."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("frogdesk: ")]
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


BROKEN_REPLIES = [
    # an unclosed call, a call without a function, a parameter never closed
    "Broken.\n</think>\n\n<tool_call>\n<function=Read>\n<parameter=file_path>\napp.py",
    "No function.\n</think>\n\n<tool_call>\n</tool_call>",
    "Unknown.\n</think>\n\n" + call("Grep", pattern="answer"),
    "Bad types.\n</think>\n\n" + call("Read", file_path="app.py", offset="first", limit="all"),
    "Bad timeout.\n</think>\n\n" + call("Bash", command="echo hi", timeout="soon"),
    "Object flag.\n</think>\n\n"
    + call("Edit", file_path="app.py", old_string="42", new_string="43", replace_all='{"x": 1}'),
    "Missing args.\n</think>\n\n" + call("Write", file_path="x.txt"),
    "Empty name.\n</think>\n\n<tool_call>\n<function=>\n</function>\n</tool_call>",
    "Done.\n</think>\n\nI could not do much.",
]


@pytest.mark.slow
def test_malformed_tool_calls_become_observations_and_the_run_finishes(
    tmp_path: Path, sandbox_level: str
) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    done, summary, traj = run_script(repo, BROKEN_REPLIES, tmp_path)
    assert done.returncode == 0, done.stderr
    assert summary["exit_reason"] == "agent" and traj["final_message"] == "I could not do much."
    seen = observations(traj)
    assert "Unknown tool: Grep" in seen
    assert "ValueError: content is required" in seen
    assert any(o.startswith("ValueError: ") and "first" in o for o in seen), seen
    assert any(o.startswith("ValueError: ") and "soon" in o for o in seen), seen
    # No observation is a Python traceback, and the user's repository is untouched.
    assert not any("Traceback" in o for o in seen)
    assert changed_paths(before, repo_state(repo)) == set()


def test_non_git_folder_says_how_to_make_it_one(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine\n", encoding="utf-8")
    script = write_script(tmp_path / "s.jsonl", [reply("x", answer="ok")])
    done = frogdesk("run", "task", "--repo", str(folder), "--script", str(script))
    one_clear_line(done, "not inside a git repository", "git init")
    assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]
    assert SessionStore(AppPaths.default().sessions_dir).list() == []


def test_bare_repository_says_to_use_a_checkout(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    script = write_script(tmp_path / "s.jsonl", [reply("x", answer="ok")])
    done = frogdesk("run", "task", "--repo", str(bare), "--script", str(script))
    one_clear_line(done, "bare")
    assert SessionStore(AppPaths.default().sessions_dir).list() == []


@pytest.fixture
def broken_models(tmp_path: Path, qwen35_gguf: Path) -> dict[str, Path]:
    """A truncated copy of the tiny model, a text file named .gguf, and an empty .gguf."""
    data = qwen35_gguf.read_bytes()
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(data[: len(data) // 3])
    header_only = tmp_path / "header-only.gguf"
    header_only.write_bytes(data[:24])
    text = tmp_path / "notes.gguf"
    text.write_text("this is not a model\n", encoding="utf-8")
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    return {"truncated": truncated, "header": header_only, "text": text, "empty": empty}


@pytest.mark.parametrize("which", ["truncated", "header", "text", "empty"])
def test_broken_gguf_is_refused_before_anything_starts(
    tmp_path: Path, broken_models: dict[str, Path], which: str
) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    model = broken_models[which]
    size = model.stat().st_size
    done = frogdesk("run", "task", "--repo", str(repo), "--backend", "llama", "--model", str(model))
    one_clear_line(done, model.name)
    info = frogdesk("models", "info", str(model))
    one_clear_line(info, model.name)
    assert model.stat().st_size == size  # the file is left for the user to inspect
    assert changed_paths(before, repo_state(repo)) == set()
    # The session that could not start leaves no worktree behind.
    assert not any(AppPaths.default().worktrees_dir.glob("*/*"))


@pytest.mark.parametrize(
    "text",
    [
        "max_steps = \n[[[",
        'max_steps = "many"\n',
        "\x00\x01\x02binary",
        'sandbox = "chroot"\n',  # choices are checked when the file is read
    ],
    ids=["syntax", "type", "binary", "choice"],
)
def test_corrupt_config_is_one_line_and_left_alone(tmp_path: Path, text: str) -> None:
    config = AppPaths.default().config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text, encoding="utf-8")
    listed = frogdesk("sessions", "list")
    one_clear_line(listed, str(config.name))
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    script = write_script(tmp_path / "s.jsonl", [reply("x", answer="ok")])
    run = frogdesk("run", "task", "--repo", str(repo), "--script", str(script))
    one_clear_line(run, str(config.name))
    assert config.read_text(encoding="utf-8") == text
    assert changed_paths(before, repo_state(repo)) == set()


DISK_FULL_BUG = (
    "a full disk while the session writes its transcript ends `frogdesk run` with a "
    "Python traceback instead of a clear message"
)


@pytest.mark.slow
def test_full_disk_mid_session_is_a_clear_message_and_resumable(
    tmp_path: Path, small_disk: Path, sandbox_level: str
) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    replies = [
        reply("Note.", call("Write", file_path="note.txt", content="kept\n")),
        reply("Fill.", call("Bash", command="head -c 8M /dev/zero > fill.bin; echo wrote")),
        reply("Read.", call("Read", file_path="note.txt")),
        reply("Done.", answer="ok"),
    ]
    script = write_script(tmp_path / "s.jsonl", replies)
    env = {**os.environ, "FROGDESK_HOME": str(small_disk)}
    done = subprocess.run(
        [sys.executable, "-m", "frogdesk", "run", "Fill the disk.", "--repo", str(repo),
         "--script", str(script), "--json", "--output", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    assert changed_paths(before, repo_state(repo)) == set()
    store = SessionStore(small_disk / "data" / "sessions")
    [record] = store.list()
    transcript = store.read_transcript(record.id)  # readable: no torn line in the middle
    assert [s.step for s in transcript.steps][:1] == [0]
    assert (Path(record.worktree) / "note.txt").read_text(encoding="utf-8") == "kept\n"
    assert "Traceback" not in done.stderr, done.stderr
    if done.returncode != 0:
        assert "space" in done.stderr.lower(), done.stderr
        (Path(record.worktree) / "fill.bin").unlink()
        resumed = subprocess.run(
            [sys.executable, "-m", "frogdesk", "sessions", "resume", record.id, "--json"],
            capture_output=True, text=True, timeout=300, check=False, env=env,
        )  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout)["exit_reason"] == "agent"


HANG_UNDER_MEMORY_CAP = (
    "with a 400 MB address-space cap, building the llama backend spins in llama.cpp "
    "forever (session left 'created', no message) instead of failing with a clear one"
)


@pytest.mark.llama
@pytest.mark.slow
def test_model_that_does_not_fit_in_memory_is_a_clear_message(
    tmp_path: Path, smollm2_gguf: Path
) -> None:
    import resource

    repo = make_user_repo(tmp_path)
    cap = 400_000_000

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    done = subprocess.run(
        [sys.executable, "-m", "frogdesk", "run", "task", "--repo", str(repo), "--backend",
         "llama", "--model", str(smollm2_gguf), "--max-steps", "1"],
        capture_output=True, text=True, timeout=25, check=False, preexec_fn=limit,
    )  # fmt: skip
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "memory" in done.stderr.lower(), done.stderr


NON_UTF8_TASK_BUG = (
    "a task with bytes that are not UTF-8 (surrogate escapes in argv) ends `frogdesk run` "
    "with a UnicodeEncodeError traceback from the session store and leaves an orphan worktree"
)


def test_task_that_is_not_utf8_is_handled(tmp_path: Path) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    script = write_script(tmp_path / "s.jsonl", [reply("x", answer="ok")])
    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"frogdesk", b"run", b"fix \xff\xfe this",
         b"--repo", bytes(repo), b"--script", bytes(script)],
        capture_output=True, timeout=300, check=False,
    )  # fmt: skip
    stderr = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    assert changed_paths(before, repo_state(repo)) == set()
    store = SessionStore(AppPaths.default().sessions_dir)
    worktrees = {p.name for p in AppPaths.default().worktrees_dir.glob("*") if p.is_dir()}
    # Either a session the user can see (and discard), or nothing left behind.
    assert worktrees <= {r.id for r in store.list()}


FIFO_BUG = (
    "Read, Edit and Write open a FIFO in the workdir (one `mkfifo` away for the model) "
    "and block forever; the loop hangs with no observation"
)


def test_reading_a_fifo_is_an_observation_not_a_hang(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / "pipe")
    done = subprocess.run(
        [sys.executable, "-m", "frogdesk", "tool", "--workdir", str(work)],
        input=json.dumps({"tool": "Read", "args": {"file_path": "pipe"}}),
        capture_output=True, text=True, timeout=20, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stdout.split(":", 1)[0].endswith("Error"), done.stdout
