"""Unix sockets in the user's `.git` (git's fsmonitor--daemon.ipc, a tool's own) are out of reach."""

from __future__ import annotations

import subprocess
from pathlib import Path

from frogdesk.sandbox.policy import SandboxPolicy, git_sockets
from tests.attacks.harness import bash, run_attack
from tests.attacks.payloads import PY
from tests.attacks.test_sockets import UNIX_CONNECT, _py, _UnixListener
from tests.support.e2e import make_user_repo, repo_state


def test_sockets_in_the_users_git_dir_cannot_be_connected(
    level: str, outside: Path, tmp_path: Path
) -> None:
    # A short path: a Unix socket's name must fit in 108 bytes.
    repo = make_user_repo(outside)
    before = repo_state(repo)
    git_dir = repo / ".git"
    (git_dir / "tool").mkdir()
    listeners = [
        _UnixListener(git_dir / "fsmonitor--daemon.ipc"),
        _UnixListener(git_dir / "tool" / "s.sock"),
    ]
    paths = [str(listener.path) for listener in listeners]
    try:
        # Positive control: outside the sandbox, as FrogDesk's user, both connect.
        done = subprocess.run([PY, "-", *paths], input=UNIX_CONNECT, capture_output=True, text=True)
        assert done.stdout.count("CONNECTED") == len(paths), done
        for listener in listeners:
            assert listener.connected.wait(60)
            listener.accepted = 0

        run = run_attack(repo, [bash(_py(UNIX_CONNECT, *paths))], tmp_path, level)
        seen = run.observations[0]
        assert "CONNECTED" not in seen, seen
        assert seen.count("REFUSED") == len(paths), seen
        assert "SOCKETPAIR pair" in seen, seen  # what needs no path still works
        assert [listener.accepted for listener in listeners] == [0, 0]
    finally:
        for listener in listeners:
            listener.close()
    (git_dir / "tool").rmdir()
    assert repo_state(repo) == before  # the masks left nothing behind in the user's .git


def test_a_socket_made_after_the_policy_is_found_for_the_next_command(tmp_path: Path) -> None:
    """The scan runs for each command: a daemon started mid-session is masked from then on."""
    git_dir = tmp_path / "g"
    (git_dir / "worktrees" / "mine").mkdir(parents=True)
    private = tmp_path / "p"
    policy = SandboxPolicy(
        workdir_root=tmp_path / "wt",
        git_readonly=(git_dir,),
        git_writable=(git_dir / "worktrees" / "mine",),
        views=(),
        masked=(),
        home=private / "home",
        tmp=private / "tmp",
    )
    assert git_sockets(policy) == []
    late = _UnixListener(git_dir / "late.ipc")
    own = _UnixListener(git_dir / "worktrees" / "mine" / "own.sock")  # the sandbox's own folder
    (git_dir / "link").symlink_to(tmp_path)  # links are not followed out of the git dir
    try:
        assert git_sockets(policy) == [git_dir / "late.ipc"]
    finally:
        late.close()
        own.close()
