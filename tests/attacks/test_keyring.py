"""Attacks on the user's kernel keyring: a key the user added must not be readable from Bash."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.attacks.harness import bash, run_attack
from tests.attacks.payloads import PY
from tests.support.e2e import changed_paths, make_user_repo, repo_state

NR = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}
"""add_key, request_key, keyctl, by machine."""
KEY_SPEC_USER_KEYRING = -4
KEYCTL_SETPERM = 5
KEYCTL_SEARCH = 10
KEYCTL_INVALIDATE = 21
# Possessor: everything; the user: view, read, search. Readable by any process of the
# user whether or not it possesses the key, so only the sandbox can stand in the way.
KEY_PERM = 0x3F0B0000

READ_KEY = """
import ctypes, platform, sys
NR = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
desc = sys.argv[1].encode()
found = libc.syscall(NR[2], 10, ctypes.c_long(-4), b"user", desc, ctypes.c_long(0))  # SEARCH @u
if found < 0:
    print("SEARCH-REFUSED", ctypes.get_errno())
else:
    buf = ctypes.create_string_buffer(4096)
    n = libc.syscall(NR[2], 11, ctypes.c_long(found), buf, ctypes.c_size_t(4096))  # READ
    print("PAYLOAD", buf.raw[:n].decode()) if n >= 0 else print("READ-REFUSED", ctypes.get_errno())
asked = libc.syscall(NR[1], b"user", desc, None, ctypes.c_long(0))  # request_key
print("REQUEST", asked if asked < 0 else "FOUND", ctypes.get_errno() if asked < 0 else "")
added = libc.syscall(NR[0], b"user", sys.argv[2].encode(), b"x", ctypes.c_size_t(1), ctypes.c_long(-4))
print("ADD", "REFUSED" if added < 0 else "ADDED", ctypes.get_errno() if added < 0 else "")
"""
"""Search @u for the key by name, read its payload; then request_key, and add_key of argv[2]."""


def _read_key_command(description: str, planted: str) -> str:
    return f"{PY} - '{description}' '{planted}' <<'PYEOF'\n{READ_KEY}\nPYEOF"


def _keyctl(*args: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return int(libc.syscall(NR[platform.machine()][2], *(ctypes.c_long(a) for a in args)))


def _in_user_keyring(description: str) -> bool:
    """Whether @u holds a `user` key of this name (KEYCTL_SEARCH from outside the sandbox)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    found = libc.syscall(
        NR[platform.machine()][2], ctypes.c_long(KEYCTL_SEARCH),
        ctypes.c_long(KEY_SPEC_USER_KEYRING), b"user", description.encode(), ctypes.c_long(0),
    )  # fmt: skip
    if found >= 0:
        _keyctl(KEYCTL_INVALIDATE, found)
    return bool(found >= 0)


@pytest.fixture
def user_key() -> Iterator[tuple[str, str]]:
    """A `user` key in the user keyring (@u), as `keyctl add user NAME SECRET @u` makes it."""
    if platform.machine() not in NR:
        pytest.skip(f"no syscall numbers for {platform.machine()}")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    description = f"frogdesk-attack-{uuid.uuid4().hex[:8]}"
    secret = f"krb5-ticket-{uuid.uuid4().hex}"
    key = libc.syscall(
        NR[platform.machine()][0], b"user", description.encode(), secret.encode(),
        ctypes.c_size_t(len(secret)), ctypes.c_long(KEY_SPEC_USER_KEYRING),
    )  # fmt: skip
    if key < 0:
        pytest.skip(f"add_key is refused here: {os.strerror(ctypes.get_errno())}")
    assert _keyctl(KEYCTL_SETPERM, key, KEY_PERM) == 0
    yield description, secret
    _keyctl(KEYCTL_INVALIDATE, key)


def test_user_keyring_is_out_of_reach(
    level: str, tmp_path: Path, user_key: tuple[str, str]
) -> None:
    description, secret = user_key
    # Positive control: the same code as FrogDesk's user, outside the sandbox, reads it.
    planted = f"frogdesk-planted-{uuid.uuid4().hex[:8]}"
    outside = subprocess.run(
        ["/bin/bash", "-c", _read_key_command(description, planted)],
        capture_output=True,
        text=True,
    )
    assert f"PAYLOAD {secret}" in outside.stdout, outside
    assert _in_user_keyring(planted)  # and its add_key lands in the user's keyring

    planted = f"frogdesk-planted-{uuid.uuid4().hex[:8]}"
    repo = make_user_repo(tmp_path)
    before = repo_state(repo)
    run = run_attack(repo, [bash(_read_key_command(description, planted))], tmp_path, level)
    seen = run.observations[0]
    assert seen.startswith("Exit code: 0"), seen
    assert secret not in seen
    assert "PAYLOAD" not in seen, seen
    assert not _in_user_keyring(planted)  # bwrap may add one, to its own namespace's keyring
    if level == "landlock":
        # ENOSYS is the filter's answer; the kernel would have found the key.
        assert f"SEARCH-REFUSED {errno.ENOSYS}" in seen, seen
        assert f"REQUEST -1 {errno.ENOSYS}" in seen, seen
        assert f"ADD REFUSED {errno.ENOSYS}" in seen, seen
    assert changed_paths(before, repo_state(repo)) == set()


def test_none_level_reads_the_keyring(tmp_path: Path, user_key: tuple[str, str]) -> None:
    """What `none` does: no sandbox, so an approved command reads the key like any of yours."""
    from frogdesk.sandbox.levels import confined_shell

    description, secret = user_key
    folder = tmp_path / "work"
    folder.mkdir()
    choice = confined_shell("none", folder, private_dir=tmp_path / "private")
    result = choice.shell.run(_read_key_command(description, "frogdesk-none-level"), folder, 60)
    assert f"PAYLOAD {secret}" in result.stdout, result
    assert _in_user_keyring("frogdesk-none-level")
