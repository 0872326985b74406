"""What `frogdesk run` refuses at start, in words and before any model is looked at: a folder
that is no git repository (with the command that makes it one), a model path or quant that
cannot exist; and a model that fails to load leaves no session behind."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from frogdesk import cli
from frogdesk.commands import run as run_command
from frogdesk.core import model_ops
from frogdesk.core.repo_setup import init_repository
from frogdesk.paths import AppPaths
from tests.support.scripted import frogdesk, git, make_repo, write_script


def _plain_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n", encoding="utf-8")
    (folder / "src").mkdir()
    (folder / "src" / "main.py").write_text("print('hi')\n", encoding="utf-8")
    return folder


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    assert lines[0].startswith("frogdesk: "), stderr
    return lines[0]


def test_a_plain_folder_is_refused_before_the_model_is_looked_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _plain_folder(tmp_path)
    looked: list[Any] = []
    monkeypatch.setattr(run_command, "model_file", lambda *a: looked.append(a))
    monkeypatch.setattr(model_ops, "resolve_model_path", lambda *a: looked.append(a))
    monkeypatch.setattr(model_ops, "default_backend", lambda *a, **k: looked.append(a))
    missing = tmp_path / "nowhere" / "typo.gguf"
    code = cli.main(
        ["run", "fix it", "--repo", str(folder), "--backend", "llama", "--model", str(missing)]
    )
    assert code == 2
    line = _one_line(capsys.readouterr().err)
    assert "is not inside a git repository" in line and "NotAGitRepository" not in line
    assert str(missing) not in line and looked == []  # the model was never even resolved
    # the line names the exact command; running it makes the folder a repository
    command = line.split("To make it one, run: ", 1)[1]
    assert command.startswith(f"cd {shlex.quote(str(folder.resolve()))} && git init")
    ident = {
        f"GIT_{who}_{part}": "t@t" for who in ("AUTHOR", "COMMITTER") for part in ("NAME", "EMAIL")
    }
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **ident}
    subprocess.run(command, shell=True, check=True, env=env, capture_output=True)
    assert git(folder, "ls-files").split() == ["notes.txt", "src/main.py"]


def test_git_init_from_frogdesk_makes_a_repository_a_run_then_works_on(tmp_path: Path) -> None:
    folder = _plain_folder(tmp_path)
    line = init_repository(folder)
    assert "2 files" in line
    assert git(folder, "status", "--porcelain") == ""
    assert git(folder, "log", "--format=%s").strip().startswith("First commit")
    script = write_script(tmp_path / "s.jsonl", ["Nothing to do.\n</think>\n\nAll fine."])
    done = frogdesk("run", "look", "--repo", str(folder), "--script", str(script), "--json")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("{tmp}/models/typo.gguf", "no such model file: {tmp}/models/typo.gguf"),
        ("{tmp}/models", "{tmp}/models is a folder, not a model file. The .gguf files in it: "
                         "a-Q4_K_M.gguf, b-Q8_0.gguf."),
        ("{tmp}/empty", "{tmp}/empty is a folder, not a model file. It holds no .gguf file."),
        ("bartowski/FrogNano-4B-2609-GGUF:Q4_K_N",
         "no quant Q4_K_N in bartowski/FrogNano-4B-2609-GGUF; did you mean Q4_K_M"),
    ],
)  # fmt: skip
def test_a_model_that_cannot_exist_is_named_in_one_line(
    tmp_path: Path, model: str, says: str
) -> None:
    repo = make_repo(tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "empty").mkdir()
    for name in ("b-Q8_0.gguf", "a-Q4_K_M.gguf", "readme.txt"):
        (tmp_path / "models" / name).write_bytes(b"GGUF")
    spec = model.format(tmp=tmp_path)
    run = ("run", "x", "--repo", str(repo), "--backend", "llama", "--model", spec)
    for args in (run, ("models", "info", spec)):
        done = frogdesk(*args)
        assert done.returncode == 2, done.stderr
        line = _one_line(done.stderr)
        assert says.format(tmp=tmp_path) in line, line
        assert "huggingface" not in line and "Offline" not in line
    assert not AppPaths.default().sessions_dir.exists() or not any(
        AppPaths.default().sessions_dir.iterdir()
    )


def test_a_model_that_fails_to_load_leaves_no_session_row(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    model = tmp_path / "cut.gguf"
    model.write_bytes(b"GGUF\x03\x00")
    done = frogdesk("run", "x", "--repo", str(repo), "--backend", "llama", "--model", str(model))
    assert done.returncode == 2, done.stderr
    listed = frogdesk("sessions", "list")
    assert listed.returncode == 0 and "discarded" not in listed.stdout, listed.stdout
    assert listed.stdout.strip() == "no sessions"
    paths = AppPaths.default()
    assert not any(paths.sessions_dir.iterdir())
    assert not paths.worktrees_dir.exists() or not any(paths.worktrees_dir.iterdir())
    assert git(repo, "worktree", "list").count("\n") == 1  # only the repository itself


def test_the_app_refuses_a_model_path_that_does_not_exist_before_it_opens(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    missing = tmp_path / "typo.gguf"
    done = frogdesk("--repo", str(repo), "--model", str(missing), stdin="", timeout=60)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line == f"frogdesk: no such model file: {missing}"
