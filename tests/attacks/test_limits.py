"""Attacks on the machine's resources: fork bombs, disk fills, memory fills, the OOM killer, tmpfs."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.attacks.harness import Outcome, bash, call, reply, run_attack
from tests.support.e2e import changed_paths, make_user_repo, repo_state

MiB = 1 << 20
SIX_HUNDRED = "for i in $(seq 600); do sleep 30 & done; echo STARTED=$(jobs -p | wc -l)"
BOMB = ":(){ :|:& };:; sleep 100"
"""A fork bomb that keeps its command running (else the command's end would take it along)."""
PROCESS_LINE = "frogdesk: the command was stopped: it tried to run more than 100 processes at once"


def _seen(run: Outcome) -> str:
    return "\n".join(run.observations)


def test_six_hundred_processes_are_refused_past_the_cap(level: str, tmp_path: Path) -> None:
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    replies = [
        bash(SIX_HUNDRED),
        reply("Bomb.", call("Bash", command=BOMB, timeout="120")),
    ]
    run = run_attack(repo, replies, tmp_path, level, env={"FROGDESK_BASH_MAX_PROCESSES": "100"})
    assert PROCESS_LINE in run.observations[0], run.observations[0][-2000:]
    assert "STARTED=600" not in run.observations[0]
    # The fork bomb is stopped at the cap, not left running until its timeout.
    assert PROCESS_LINE in run.observations[1], run.observations[1][-2000:]
    assert not run.observations[1].startswith("Timed out")
    assert f"frogdesk: warning: {PROCESS_LINE[len('frogdesk: ') :]}" in run.done.stderr
    assert run.summary["exit_reason"] == "agent"
    assert changed_paths(before, repo_state(repo)) == set()


def test_six_hundred_processes_start_under_a_raised_cap(level: str, tmp_path: Path) -> None:
    """The positive control: the same command, with room for it, starts all 600."""
    repo = make_user_repo(tmp_path)
    run = run_attack(
        repo, [bash(SIX_HUNDRED)], tmp_path, level, env={"FROGDESK_BASH_MAX_PROCESSES": "2000"}
    )
    assert "STARTED=600" in run.observations[0], run.observations[0][-2000:]
    assert "frogdesk: the command was stopped" not in run.observations[0]


@pytest.fixture
def small_fs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A 64 MiB tmpfs holding FROGDESK_HOME (worktrees, sessions); root only."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    where = tmp_path / "small"
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    monkeypatch.setenv("FROGDESK_HOME", str(where / "frogdesk"))
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


FILL = "for i in $(seq 200); do head -c 1000000 /dev/zero > fill$i || break; done; df -k ."


def _free(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def test_a_disk_fill_stops_at_the_reserve(level: str, tmp_path: Path, small_fs: Path) -> None:
    repo = make_user_repo(tmp_path)
    env = {"FROGDESK_SANDBOX_DISK_RESERVE": str(16 * MiB), "FROGDESK_SESSION_DISK_CAP": "0"}
    replies = [bash(FILL), bash("head -c 40000000 /dev/zero > one-big-file; echo WROTE=$?")]
    run = run_attack(repo, replies, tmp_path, level, env=env)
    line = "frogdesk: the command was stopped: the file system of"
    for seen in run.observations:
        assert line in seen and "(sandbox_disk_reserve)" in seen, seen[-2000:]
        assert "No space left on device" not in seen
    assert "WROTE=0" not in run.observations[1]
    # FrogDesk's own writes (the transcript, every step of it) still had room.
    assert run.summary["exit_reason"] == "agent", run.done.stderr
    assert _free(small_fs) > 8 * MiB


def test_without_the_reserve_the_disk_fills(level: str, tmp_path: Path, small_fs: Path) -> None:
    """The control: no reserve, no cap, and the same fill runs the file system out of space
    (it deletes its files again in the same command, so FrogDesk can go on writing)."""
    repo = make_user_repo(tmp_path)
    env = {"FROGDESK_SANDBOX_DISK_RESERVE": "0", "FROGDESK_SESSION_DISK_CAP": "0"}
    run = run_attack(repo, [bash(f"{FILL}; rm -f fill*")], tmp_path, level, env=env)
    seen = run.observations[0]
    assert "No space left on device" in seen, seen[-2000:]
    assert "frogdesk: the command was stopped" not in seen


CAP_FILL = "for i in $(seq 20); do head -c 1000000 /dev/zero > fill$i || break; done; echo FILLED"


def test_the_session_disk_cap_stops_commands_and_lets_them_delete(
    level: str, tmp_path: Path
) -> None:
    repo = make_user_repo(tmp_path)
    env = {"FROGDESK_SESSION_DISK_CAP": "8000000", "FROGDESK_SANDBOX_DISK_RESERVE": "0"}
    replies = [
        bash(CAP_FILL),
        bash("head -c 50000000 /dev/zero > big; echo WROTE=$?"),
        bash("rm -f fill* big; echo CLEANED"),
        bash("head -c 3000000 /dev/zero > again; echo AGAIN=$?"),
    ]
    run = run_attack(repo, replies, tmp_path, level, env=env)
    line = "frogdesk: the command was stopped: the session's disk cap of 8.00 MB was reached"
    assert line in run.observations[0] and "FILLED" not in run.observations[0]
    # One big file stops at the cap too (RLIMIT_FSIZE: the write fails, nothing overshoots).
    assert line in run.observations[1] and "WROTE=0" not in run.observations[1]
    # At the cap a command may still delete, and then write again.
    assert "CLEANED" in run.observations[2] and line not in run.observations[2]
    assert "AGAIN=0" in run.observations[3], run.observations[3]
    assert f"frogdesk: warning: {line[len('frogdesk: ') :]}" in run.done.stderr


def test_without_a_cap_the_session_writes_on(level: str, tmp_path: Path) -> None:
    """The control: the same fill with no cap writes all its files."""
    repo = make_user_repo(tmp_path)
    env = {"FROGDESK_SESSION_DISK_CAP": "0", "FROGDESK_SANDBOX_DISK_RESERVE": "0"}
    run = run_attack(repo, [bash(CAP_FILL)], tmp_path, level, env=env)
    assert "FILLED" in run.observations[0], run.observations[0]


def _memory_cgroup_or_skip() -> None:
    from frogdesk.sandbox.cgroups import make_group

    group, why = make_group(
        "memory", {1: {"memory.limit_in_bytes": 1 << 30}, 2: {"memory.max": 1 << 30}}
    )
    if group is None:
        pytest.skip(f"no memory cgroup can be made here: {why}")
    group.remove()


PERLS = (
    "for i in $(seq 40); do perl -e '$x = \"x\" x (14 << 20); sleep 2' & done; wait; "
    'perl -e \'$x = "y" x (200 << 20); print "ALLOCATED\\n"\''
)


def test_a_memory_fill_is_killed_inside_its_cap(level: str, tmp_path: Path) -> None:
    _memory_cgroup_or_skip()
    repo = make_user_repo(tmp_path)
    run = run_attack(
        repo, [bash(PERLS)], tmp_path, level, env={"FROGDESK_BASH_MAX_MEMORY": str(64 * MiB)}
    )
    seen = run.observations[0]
    assert "were killed: its memory cap of 64 MiB was reached (bash_max_memory)" in seen, seen[
        -2000:
    ]
    assert "ALLOCATED" not in seen
    assert run.summary["exit_reason"] == "agent"  # FrogDesk itself was not the one killed


def test_a_memory_fill_runs_under_a_larger_cap(level: str, tmp_path: Path) -> None:
    """The control: the same processes fit in 2 GiB."""
    _memory_cgroup_or_skip()
    repo = make_user_repo(tmp_path)
    env = {"FROGDESK_BASH_MAX_MEMORY": str(2048 * MiB)}
    run = run_attack(repo, [bash(PERLS)], tmp_path, level, env=env)
    assert "ALLOCATED" in run.observations[0], run.observations[0][-2000:]
    assert "bash_max_memory" not in run.observations[0]


def test_the_oom_killer_picks_the_command(level: str, tmp_path: Path) -> None:
    repo = make_user_repo(tmp_path)
    command = (
        "echo SELF=$(cat /proc/self/oom_score_adj); sh -c 'echo CHILD=$(cat /proc/$$/oom_score_adj)'; "
        "echo -1000 > /proc/self/oom_score_adj 2>/dev/null; echo AFTER=$(cat /proc/self/oom_score_adj)"
    )
    run = run_attack(repo, [bash(command)], tmp_path, level)
    seen = run.observations[0]
    assert "SELF=1000" in seen and "CHILD=1000" in seen, seen
    if os.geteuid() == 0:
        # Set with CAP_SYS_RESOURCE, 1000 is also the floor the command cannot go under.
        assert "AFTER=1000" in seen, seen
    # Positive control: FrogDesk itself keeps its own score.
    assert Path("/proc/self/oom_score_adj").read_text().strip() != "1000"


def test_bwrap_tmpfs_mounts_are_small(level: str, tmp_path: Path) -> None:
    if level != "bwrap":
        pytest.skip("only the bwrap level mounts in-memory folders")
    repo = make_user_repo(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    home = Path.home().resolve()
    command = (
        f"df -k --output=size,target /dev/shm /run {home} | tail -n +2; "
        "head -c 20000000 /dev/zero > /dev/shm/fill; echo SHM=$?"
    )
    sized = run_attack(
        repo,
        [bash(command)],
        tmp_path / "a",
        level,
        env={"FROGDESK_SANDBOX_TMPFS_SIZE": str(8 * MiB)},
    )
    sizes = _df_sizes(sized.observations[0])
    assert sizes.keys() >= {"/dev/shm", "/run", str(home)}, sized.observations[0]
    assert set(sizes.values()) == {8192}, sized.observations[0]
    assert "SHM=0" not in sized.observations[0]
    # Positive control: unsized, each one shows half of the RAM or so.
    unsized = run_attack(
        repo, [bash(command)], tmp_path / "b", level, env={"FROGDESK_SANDBOX_TMPFS_SIZE": "0"}
    )
    assert min(_df_sizes(unsized.observations[0]).values()) > 100 * 1024, unsized.observations[0]
    assert "SHM=0" in unsized.observations[0]


def _df_sizes(observation: str) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for line in observation.splitlines():
        words = line.split()
        if len(words) == 2 and words[0].isdigit():
            sizes[words[1]] = int(words[0])
    return sizes


def test_every_bwrap_tmpfs_has_a_size_and_dev_is_read_only(tmp_path: Path) -> None:
    from frogdesk.sandbox.limits import CommandLimits
    from frogdesk.sandbox.policy import folder_policy
    from frogdesk.sandbox.shells.bwrap import bwrap_argv

    limits = CommandLimits(tmpfs_size=8 * MiB)
    policy = folder_policy(tmp_path / "work", tmp_path / "private", limits=limits)
    argv = bwrap_argv(Path("/usr/bin/bwrap"), policy, policy.workdir_root, "true")
    mounts = [i for i, word in enumerate(argv) if word == "--tmpfs"]
    assert len(mounts) >= 2  # /dev/shm and at least the hidden home
    assert all(argv[i - 2] == "--size" and int(argv[i - 1]) > 0 for i in mounts), argv
    assert argv[argv.index("--remount-ro") + 1] == "/dev"
