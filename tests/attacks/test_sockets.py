"""Attacks through sockets: datagrams out of the landlock level, kernel and host sockets, Unix sockets."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.attacks.harness import bash, run_attack
from tests.attacks.payloads import PY
from tests.support.e2e import changed_paths, make_user_repo, repo_state

HIGH_BITS_UDP = """
import ctypes, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
fd = libc.syscall(41, ctypes.c_long(0x100000002), ctypes.c_long(socket.SOCK_DGRAM), ctypes.c_long(0))
if fd < 0:
    print("SOCKET-REFUSED", ctypes.get_errno())
    sys.exit(0)
s = socket.socket(fileno=fd)
try:
    s.sendto(b"LEAKED-DATAGRAM", ("127.0.0.1", int(sys.argv[1])))
    print("SENT")
except OSError as exc:
    print("SEND-FAILED", exc.errno)
"""
"""socket() with AF_INET in the low 32 bits and junk above them, then a datagram to a port."""

KERNEL_SOCKETS = """
import socket
tries = {
    "netlink": (socket.AF_NETLINK, socket.SOCK_RAW, 0),
    "vsock": (40, socket.SOCK_STREAM, 0),
    "packet": (socket.AF_PACKET, socket.SOCK_RAW, 0),
    "raw-icmp": (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
}
for name, args in tries.items():
    try:
        socket.socket(*args).close()
        print(name, "OPENED")
    except OSError as exc:
        print(name, "ERRNO", exc.errno)
"""

UNIX_CONNECT = """
import socket, sys
for path in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        print("CONNECTED", path)
    except OSError as exc:
        print("REFUSED", path, exc.errno)
a, b = socket.socketpair()
a.sendall(b"pair")
print("SOCKETPAIR", b.recv(4).decode())
"""


def _py(snippet: str, *args: str) -> str:
    """A Bash command running snippet with the sandbox's Python."""
    quoted = " ".join(f"'{a}'" for a in args)
    return f"{PY} - {quoted} <<'PYEOF'\n{snippet}\nPYEOF"


@pytest.fixture
def udp_listener() -> Iterator[socket.socket]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind(("127.0.0.1", 0))
    listener.setblocking(False)
    yield listener
    listener.close()


def _received(listener: socket.socket) -> list[bytes]:
    got: list[bytes] = []
    while True:
        try:
            got.append(listener.recv(100))
        except BlockingIOError:
            return got


def test_high_bits_socket_sends_no_datagram(
    level: str, tmp_path: Path, udp_listener: socket.socket
) -> None:
    port = str(udp_listener.getsockname()[1])
    # Positive control: run as FrogDesk's user, outside the sandbox, the datagram arrives.
    outside = subprocess.run([PY, "-", port], input=HIGH_BITS_UDP, capture_output=True, text=True)
    assert "SENT" in outside.stdout, outside
    assert _received(udp_listener) == [b"LEAKED-DATAGRAM"]

    repo = make_user_repo(tmp_path)
    run = run_attack(repo, [bash(_py(HIGH_BITS_UDP, port))], tmp_path, level)
    assert run.observations[0].startswith("Exit code: 0"), run.observations
    assert _received(udp_listener) == []
    if level == "landlock":
        assert f"SOCKET-REFUSED {errno.EACCES}" in run.observations[0], run.observations


def test_kernel_and_raw_sockets_are_refused(level: str, tmp_path: Path) -> None:
    outside = subprocess.run([PY, "-"], input=KERNEL_SOCKETS, capture_output=True, text=True)
    assert "netlink OPENED" in outside.stdout, outside  # positive control: the kernel allows it
    repo = make_user_repo(tmp_path)
    run = run_attack(repo, [bash(_py(KERNEL_SOCKETS))], tmp_path, level)
    seen = run.observations[0]
    for name in ("netlink", "vsock", "packet", "raw-icmp"):
        # EACCES is the filter's answer; the kernel would say EAFNOSUPPORT or EPERM.
        assert f"{name} ERRNO {errno.EACCES}" in seen, seen


class _UnixListener:
    """A Unix socket server in a thread, remembering whether anyone connected."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(8)
        self.server.settimeout(0.2)
        self.accepted = 0
        self.connected = threading.Event()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            self.connected.set()
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.server.close()
        self.path.unlink(missing_ok=True)


@pytest.fixture
def host_sockets(outside: Path) -> Iterator[tuple[dict[str, str], list[_UnixListener]]]:
    """Listeners where a desktop keeps its sockets: the runtime dir (D-Bus), the home (agents),
    /run (docker.sock) when this user may write there; and the environment that names them."""
    home = outside / "home"
    runtime = outside / "runtime"
    home.mkdir()
    runtime.mkdir()
    paths = [runtime / "bus", home / "agent.sock"]
    run_sock = Path("/run") / f"frogdesk-attack-{uuid.uuid4().hex[:8]}.sock"
    if os.access("/run", os.W_OK):
        paths.append(run_sock)
    listeners = [_UnixListener(p) for p in paths]
    yield {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}, listeners
    for listener in listeners:
        listener.close()


def test_host_unix_sockets_are_out_of_reach(
    level: str, tmp_path: Path, host_sockets: tuple[dict[str, str], list[_UnixListener]]
) -> None:
    env, listeners = host_sockets
    paths = [str(listener.path) for listener in listeners]
    outside = subprocess.run([PY, "-", *paths], input=UNIX_CONNECT, capture_output=True, text=True)
    assert outside.stdout.count("CONNECTED") == len(paths), outside  # positive control
    for listener in listeners:
        assert listener.connected.wait(60)  # the control's connection is counted before the attack
        listener.accepted = 0

    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    run = run_attack(repo, [bash(_py(UNIX_CONNECT, *paths))], tmp_path, level, env=env)
    seen = run.observations[0]
    assert "CONNECTED" not in seen, seen
    assert "SOCKETPAIR pair" in seen, seen  # what needs no path still works
    assert [listener.accepted for listener in listeners] == [0] * len(listeners)
    assert changed_paths(before, repo_state(repo)) == set()
