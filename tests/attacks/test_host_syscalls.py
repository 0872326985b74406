"""Reaching the host through system calls that bwrap's namespaces hide: the landlock level's filter."""

from __future__ import annotations

import errno
import os
import platform
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.attacks.harness import bash, run_attack
from tests.attacks.payloads import PY
from tests.support.e2e import changed_paths, make_user_repo, repo_state

pytestmark = pytest.mark.skipif(
    platform.machine() != "x86_64", reason="the probes use x86-64 system call numbers"
)

PROBES = r"""
import ctypes, os, struct, sys, threading, subprocess
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
victim, fd_no, address, length, secret_file = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
L = ctypes.c_long


def report(name, result, data=b""):
    err = ctypes.get_errno()
    print(name, "ERRNO", err) if result < 0 else print(name, "OK", data.decode(errors="replace"))


def call(nr, *args):
    return libc.syscall(nr, *[a if isinstance(a, (bytes, ctypes.Array)) else L(a) for a in args])


array = struct.pack("IIII", 2, 4, 4, 1) + bytes(56)  # BPF_MAP_TYPE_ARRAY, 4-byte keys and values
report("bpf", call(321, 0, ctypes.create_string_buffer(array, 72), 72))
perf = bytearray(128)
struct.pack_into("IIQ", perf, 0, 1, 128, 0)  # a software cpu-clock counter
struct.pack_into("Q", perf, 40, 0b1100000)  # exclude_kernel, exclude_hv
report("perf_event_open", call(298, ctypes.create_string_buffer(bytes(perf), 128), 0, -1, -1, 0))
report("userfaultfd", call(323, os.O_CLOEXEC))
report("kcmp", call(312, os.getpid(), os.getpid(), 0, 0, 0))
handle = ctypes.create_string_buffer(struct.pack("Ii", 128, 0) + bytes(128), 136)
mount_id = ctypes.c_int()
try:
    os.chdir(os.path.dirname(secret_file))  # open_by_handle_at(AT_FDCWD): on its file system
except OSError:
    pass
got = libc.name_to_handle_at(L(-100), secret_file.encode(), handle, ctypes.byref(mount_id), 0)
opened = call(304, -100, handle, os.O_RDONLY) if got == 0 else -1
report("open_by_handle_at", opened, os.read(opened, 100) if opened >= 0 else b"")
pidfd = call(434, victim, 0)
stolen = call(438, pidfd, fd_no, 0) if pidfd >= 0 else -1
report("pidfd_getfd", stolen, os.pread(stolen, 100, 0) if stolen >= 0 else b"")
buf = ctypes.create_string_buffer(length)
local = struct.pack("QQ", ctypes.addressof(buf), length)
remote = struct.pack("QQ", address, length)
n = call(310, victim, ctypes.create_string_buffer(local, 16), 1, ctypes.create_string_buffer(remote, 16), 1, 0)
report("process_vm_readv", n, buf.raw[:n] if n > 0 else b"")
try:
    report("proc_environ", 0, open(f"/proc/{victim}/environ", "rb").read().replace(b"\0", b" "))
except OSError as exc:
    ctypes.set_errno(exc.errno)
    report("proc_environ", -1)
report("ptrace_seize", call(101, 0x4206, victim, 0, 0))
report("mount", call(165, 0, 0, 0, 0, 0))
report("iopl", call(172, 0))
report("ioperm", call(173, 0, 1, 0))
report("setns", call(308, os.open("/proc/self/ns/uts", os.O_RDONLY), 0x04000000))
clone_args = ctypes.create_string_buffer(struct.pack("QQQQQQQQ", 0, 0, 0, 0, 17, 0, 0, 0), 64)
child = call(435, clone_args, 64)
if child == 0:
    os._exit(0)
report("clone3", child)
if child > 0:
    os.waitpid(child, 0)
child = call(56, 0x10000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWUSER | SIGCHLD)
if child == 0:
    os._exit(0)
report("clone_newuser", child)
if child > 0:
    os.waitpid(child, 0)
# What must keep working: threads (clone3 falls back to clone) and subprocesses.
thread = threading.Thread(target=lambda: print("THREAD works"))
thread.start()
thread.join()
print(subprocess.run(["/bin/sh", "-c", "echo SUBPROCESS works"], capture_output=True, text=True).stdout.strip())
# unshare(CLONE_NEWUSER) in a forked child: a process that still has a second thread gets
# EINVAL (and a joined thread may not have left the kernel yet); a child of fork has one
# thread, inherits the filter, and leaves this process as it is.
readable, writable = os.pipe()
child = os.fork()
if child == 0:
    result = call(272, 0x10000000)
    os.write(writable, f"{result} {ctypes.get_errno()}".encode())
    os._exit(0)
os.close(writable)
result, err = (int(x) for x in os.read(readable, 64).split())
os.waitpid(child, 0)
ctypes.set_errno(err)
report("unshare", result)
"""
"""One line per probe: NAME OK [what it read] or NAME ERRNO n."""

FILTERED = (
    "bpf", "perf_event_open", "userfaultfd", "kcmp", "open_by_handle_at", "pidfd_getfd",
    "mount", "iopl", "ioperm", "clone3",
)  # fmt: skip
"""Refused by the landlock level's filter with ENOSYS."""
PORT_IO = ("iopl", "ioperm")
"""Kernels built without CONFIG_X86_IOPL_IOPERM lack them (ENOSYS outside too)."""
NAMESPACES = ("setns", "clone_newuser", "unshare")
"""Refused by the filter with EPERM."""
LANDLOCK_DOMAIN = {
    "process_vm_readv": errno.EPERM,
    "proc_environ": errno.EACCES,
    "ptrace_seize": errno.EPERM,
}
"""Left to Landlock: a process outside the command's domain cannot be traced or read."""


@dataclass(frozen=True)
class Victim:
    """A process of the user's outside the sandbox: a file open, a secret in memory and env."""

    pid: int
    fd: int
    address: int
    length: int
    secret_file: Path
    secrets: tuple[str, ...]

    def args(self) -> list[str]:
        """The probes' arguments."""
        return [str(a) for a in (self.pid, self.fd, self.address, self.length, self.secret_file)]


VICTIM = """
import ctypes, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
buf = ctypes.create_string_buffer(sys.argv[2].encode())
print(fd, ctypes.addressof(buf), len(sys.argv[2]), flush=True)
time.sleep(600)
"""


@pytest.fixture
def victim(outside: Path) -> Iterator[Victim]:
    """The victim, with its file in a folder the sandbox may not read (the user's home)."""
    home = outside / "home"
    home.mkdir()
    secret_file = home / "secret.txt"
    file_secret, memory_secret, env_secret = (
        f"{k}-{uuid.uuid4().hex}" for k in ("FILE", "MEM", "ENV")
    )
    secret_file.write_text(file_secret)
    proc = subprocess.Popen(
        [sys.executable, "-c", VICTIM, str(secret_file), memory_secret],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "VICTIM_TOKEN": env_secret},
    )
    assert proc.stdout is not None
    fd, address, length = (int(x) for x in proc.stdout.readline().split())
    yield Victim(
        proc.pid, fd, address, length, secret_file, (file_secret, memory_secret, env_secret)
    )
    proc.kill()
    proc.wait()


def _probes(v: Victim) -> str:
    quoted = " ".join(f"'{a}'" for a in v.args())
    return f"{PY} - {quoted} <<'PYEOF'\n{PROBES}\nPYEOF"


def _results(output: str) -> dict[str, str]:
    return {
        line.split()[0]: line for line in output.splitlines() if " OK" in line or " ERRNO " in line
    }


def test_host_reaching_calls_are_refused(level: str, tmp_path: Path, victim: Victim) -> None:
    # Positive control: outside the sandbox every call works (as root; else it exists).
    as_root = os.geteuid() == 0
    outside = subprocess.run(
        ["/bin/bash", "-c", _probes(victim)], capture_output=True, text=True, timeout=60
    )
    seen = _results(outside.stdout)
    absent = {n for n in PORT_IO if seen[n] == f"{n} ERRNO {errno.ENOSYS}"}  # not built in
    for name in (*FILTERED, *NAMESPACES, *LANDLOCK_DOMAIN):
        if name in absent:
            continue
        if name == "mount" or not as_root:  # mount: bad arguments on purpose, so EFAULT
            assert seen[name] != f"{name} ERRNO {errno.ENOSYS}", outside
            continue
        assert seen[name].startswith(f"{name} OK"), outside
    if as_root:  # the file by handle and by pidfd, the memory, the environment
        for secret in victim.secrets:
            assert secret in outside.stdout, outside

    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    env = {"HOME": str(victim.secret_file.parent)}
    run = run_attack(repo, [bash(_probes(victim))], tmp_path, level, env=env)
    inside = run.observations[0]
    for secret in victim.secrets:
        assert secret not in inside, inside
    assert "THREAD works" in inside and "SUBPROCESS works" in inside, inside
    if level == "landlock":
        got = _results(inside)
        for name in set(FILTERED) - absent:
            assert got[name] == f"{name} ERRNO {errno.ENOSYS}", inside  # the filter's answer
        for name in NAMESPACES:
            assert got[name] == f"{name} ERRNO {errno.EPERM}", inside
        for name, err in LANDLOCK_DOMAIN.items():
            assert got[name] == f"{name} ERRNO {err}", inside
    assert changed_paths(before, repo_state(repo)) == set()
