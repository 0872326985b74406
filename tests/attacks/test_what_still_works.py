"""What a real test suite can still do inside each level (the price of the socket and /dev/shm rules)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.attacks.harness import bash, run_attack
from tests.attacks.payloads import PY
from tests.support.e2e import git

SUITE = """
import asyncio, multiprocessing, socket, sqlite3, subprocess, tempfile, threading, unittest


def square(x):
    return x * x


class Everyday(unittest.TestCase):
    def test_files_in_tmp(self):
        with tempfile.NamedTemporaryFile("w+") as fh:
            fh.write("data"); fh.seek(0)
            self.assertEqual(fh.read(), "data")

    def test_subprocess(self):
        self.assertEqual(subprocess.run(["echo", "hi"], capture_output=True, text=True).stdout, "hi\\n")

    def test_threads(self):
        out = []
        t = threading.Thread(target=out.append, args=(1,)); t.start(); t.join()
        self.assertEqual(out, [1])

    def test_asyncio(self):
        async def main():
            await asyncio.sleep(0)
            return 7
        self.assertEqual(asyncio.run(main()), 7)

    def test_sqlite(self):
        db = sqlite3.connect(":memory:")
        self.assertEqual(db.execute("select 1+1").fetchone(), (2,))

    def test_socketpair(self):
        a, b = socket.socketpair(); a.sendall(b"x")
        self.assertEqual(b.recv(1), b"x")


class NeedsMore(unittest.TestCase):
    def test_multiprocessing_pool(self):
        with multiprocessing.Pool(2) as pool:
            self.assertEqual(pool.map(square, [1, 2, 3]), [1, 4, 9])

    def test_localhost_tcp(self):
        server = socket.create_server(("127.0.0.1", 0))
        client = socket.create_connection(server.getsockname())
        conn, _ = server.accept(); client.sendall(b"y")
        self.assertEqual(conn.recv(1), b"y")

    def test_unix_socket_in_tmp(self):
        path = tempfile.mktemp(suffix=".sock", dir="/tmp")  # short: Unix socket paths are limited
        server = socket.socket(socket.AF_UNIX); server.bind(path); server.listen(1)
        client = socket.socket(socket.AF_UNIX); client.connect(path)
"""

EXPECTED_FAILURES = {
    "bwrap": set(),
    # no /dev/shm for semaphores; no socket() of any family
    "landlock": {"test_multiprocessing_pool", "test_localhost_tcp", "test_unix_socket_in_tmp"},
}


def test_a_real_test_suite_runs_inside(level: str, tmp_path: Path) -> None:
    repo = tmp_path / "project"
    repo.mkdir()
    (repo / "test_everyday.py").write_text(SUITE, encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "suite")
    command = f"{PY} -B -W ignore -m unittest -v test_everyday 2>&1 | grep -E ' \\.\\.\\. '"
    run = run_attack(repo, [bash(command)], tmp_path, level)
    results = dict(re.findall(r"^(test_\w+) \(.*\) \.\.\. (\w+)", run.observations[0], re.M))
    assert len(results) == 9, run.observations[0]
    failed = {name for name, verdict in results.items() if verdict != "ok"}
    assert failed == EXPECTED_FAILURES[level], run.observations[0]
