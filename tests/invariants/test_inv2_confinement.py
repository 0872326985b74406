"""Invariant 2: tools cannot reach outside the session worktree, through the CLI and a whole run."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

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
)

REFUSED = "outside the repository workdir"
"""The words every refused path carries in its observation."""
SECRET = "TOPSECRET-CONTENT\n"
DEEP = "DEEP-CONTENT\n"


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside /tmp (the sandbox gives commands a private /tmp) with a secret in it."""
    base = Path(tempfile.mkdtemp(prefix="frogdesk-outside-", dir="/var/tmp"))
    (base / "secret.txt").write_text(SECRET, encoding="utf-8")
    (base / "sub").mkdir()
    (base / "sub" / "deep.txt").write_text(DEEP, encoding="utf-8")
    yield base
    shutil.rmtree(base, ignore_errors=True)


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry below a folder with its bytes (or link target)."""
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        out[rel] = os.readlink(path) if path.is_symlink() else (
            path.read_bytes() if path.is_file() else "dir"
        )  # fmt: skip
    return out


@pytest.fixture
def workdir(tmp_path: Path, outside: Path) -> Path:
    """A plain folder with links leading out: to a file, to a folder, dangling, chained."""
    work = tmp_path / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "mod.py").write_text("x = 1\n", encoding="utf-8")
    os.symlink(outside / "secret.txt", work / "leak.txt")
    os.symlink(outside, work / "outdir")
    os.symlink(outside / "not-yet.txt", work / "dangling.txt")
    os.symlink("outdir", work / "chain")  # a relative link to a link leading out
    (tmp_path / "work-evil").mkdir()  # a sibling whose name starts like the workdir
    return work


def tool(workdir: Path, name: str, sandbox: str = "auto", **args: object) -> tuple[int, str]:
    """`frogdesk tool --workdir` with one call; (exit code, observation)."""
    done = frogdesk(
        "tool", "--workdir", str(workdir), "--sandbox", sandbox,
        stdin=json.dumps({"tool": name, "args": args}),
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout.rstrip("\n")


def escaping_paths(workdir: Path, outside: Path) -> list[str]:
    """Every way out a model might write as a file_path."""
    return [
        str(outside / "secret.txt"),
        "../work-evil/x.txt",
        "pkg/../../work-evil/x.txt",
        f"{workdir}/../work-evil/x.txt",
        "leak.txt",
        "outdir/secret.txt",
        "outdir/new.txt",
        "outdir/sub/new/deeper.txt",
        "dangling.txt",
        "chain/secret.txt",
        "/proc/self/root" + str(outside / "secret.txt"),
    ]


def test_file_tools_through_the_cli_refuse_every_way_out(workdir: Path, outside: Path) -> None:
    before = snapshot(outside)
    sibling = workdir.parent / "work-evil"
    for raw in escaping_paths(workdir, outside):
        for name, extra in (
            ("Read", {}),
            ("Write", {"content": "pwned\n"}),
            ("Edit", {"old_string": "TOPSECRET", "new_string": "pwned"}),
        ):
            code, observation = tool(workdir, name, file_path=raw, **extra)
            assert code == 1, (name, raw, observation)
            assert observation.startswith("OutsideWorkdirError: ") and REFUSED in observation, (
                name,
                raw,
                observation,
            )
            assert SECRET.strip() not in observation
    assert snapshot(outside) == before
    assert list(sibling.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        {"pattern": "../*"},
        {"pattern": "pkg/../../*"},
        {"pattern": "*", "path": ".."},
        {"pattern": "*", "path": "outdir"},
        {"pattern": "*", "path": "chain"},
        {"pattern": "**/*.txt", "path": "/var/tmp"},
        {"pattern": "/var/tmp/frogdesk-outside-*/*"},
    ],
    ids=["dotdot", "inner-dotdot", "path-up", "path-link", "path-chain", "path-abs", "abs"],
)
def test_glob_through_the_cli_refuses_ways_out(workdir: Path, args: dict[str, str]) -> None:
    code, observation = tool(workdir, "Glob", **args)
    assert code == 1 and REFUSED in observation, observation


def test_glob_lists_links_leading_out_without_entering_them(workdir: Path) -> None:
    code, observation = tool(workdir, "Glob", pattern="**/*")
    assert code == 0, observation
    assert "secret.txt" not in observation and "deep.txt" not in observation
    assert SECRET.strip() not in observation
    assert "pkg/mod.py" in observation.splitlines()
    code, observation = tool(workdir, "Glob", pattern="[.][.]/*")
    assert observation == "No files matched." or REFUSED in observation, observation


@pytest.mark.parametrize("level", ["bwrap", "landlock"])
def test_bash_cannot_write_outside(
    workdir: Path, outside: Path, level: str, sandbox_level: str
) -> None:
    from frogdesk.sandbox.levels import detect

    if detect(level)[0] != level:
        pytest.skip(f"{level} does not work on this machine")
    before = snapshot(outside)
    writes = [
        f"echo pwned > {outside}/secret.txt",
        f"echo pwned > {outside}/new.txt",
        "echo pwned > outdir/new.txt",
        "echo pwned > leak.txt",
        "echo pwned > chain/sub/deep.txt",
        "echo pwned > ../work-evil/x.txt",
        f"rm -rf {outside}/sub",
        f"mv {outside}/secret.txt pkg/moved.txt",
        f"ln {outside}/secret.txt pkg/hard.txt",
    ]
    for command in writes:
        code, observation = tool(workdir, "Bash", level, command=command)
        assert code == 0, observation  # the tool ran; the command itself failed
        assert not observation.startswith("Exit code: 0\n"), (command, observation)
    assert snapshot(outside) == before
    assert list((workdir.parent / "work-evil").iterdir()) == []
    assert not (workdir / "pkg" / "hard.txt").exists()
    code, observation = tool(workdir, "Bash", level, command="echo fine > pkg/ok.txt")
    assert observation.startswith("Exit code: 0\n")
    assert (workdir / "pkg" / "ok.txt").read_text(encoding="utf-8") == "fine\n"


@pytest.mark.slow
def test_a_scripted_run_cannot_reach_the_users_repo_or_anything_else(
    tmp_path: Path, outside: Path, sandbox_level: str
) -> None:
    repo = make_user_repo(tmp_path)
    os.symlink(outside, repo / "linked")  # a committed symlink that leads out of the repository
    os.symlink(outside / "secret.txt", repo / "linked-file.txt")
    git(repo, "add", "linked", "linked-file.txt")
    git(repo, "commit", "-qm", "links")
    before_repo, before_out = repo_state(repo), snapshot(outside)
    target = str(repo / "app.py")
    attempts = [
        call("Write", file_path=target, content="pwned\n"),
        call("Edit", file_path=target, old_string="42", new_string="0"),
        call("Read", file_path="../user-repo/app.py"),
        call("Write", file_path="linked/new.txt", content="pwned\n"),
        call("Edit", file_path="linked-file.txt", old_string="TOP", new_string="pwned"),
        call("Read", file_path="linked/sub/deep.txt"),
        call("Glob", pattern="**/*.txt", path="linked"),
        call("Glob", pattern="../*"),
        call("Write", file_path=".git", content="gitdir: /elsewhere\n"),
    ]
    bash = (
        f"echo pwned > {target}; echo pwned > linked/new.txt; echo pwned > {outside}/x.txt; "
        f"ln -s {outside} escape; echo linked=$?"
    )
    replies = [reply(f"Attempt {i}.", a) for i, a in enumerate(attempts)]
    replies += [
        reply("Shell.", call("Bash", command=bash)),
        reply("Through a link made in the shell.", call("Write", file_path="escape/y.txt", content="x")),
        reply("Give up.", answer="Could not."),
    ]  # fmt: skip
    done, _, traj = run_script(repo, replies, tmp_path)
    assert done.returncode == 0, done.stderr
    seen = observations(traj)
    for index, observation in enumerate(seen[: len(attempts)]):
        assert observation.startswith("OutsideWorkdirError: "), (attempts[index], observation)
        assert SECRET.strip() not in observation and DEEP.strip() not in observation
    assert seen[-2].startswith("Exit code: ") and "linked=0" in seen[-2]
    assert seen[-1].startswith("OutsideWorkdirError: ") and REFUSED in seen[-1]
    assert changed_paths(before_repo, repo_state(repo)) == set()
    assert snapshot(outside) == before_out
