"""Running a command's process tree: output with a deadline, and killing every descendant."""

from __future__ import annotations

import codecs
import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from frogdesk.sandbox.cgroup import CommandCgroup
from frogdesk.sandbox.shells.protocol import ShellResult

MAX_OUTPUT_BYTES = 8 * 1024 * 1024
"""Output kept per stream; the rest is counted and dropped (Leaf cuts far earlier)."""
DRAIN_SECONDS = 0.5
"""How long to keep reading after the main process is gone (an escaped child may hold the pipe)."""
POLL_SECONDS = 0.05


def _parent_pairs() -> Iterator[tuple[int, int]]:
    """(pid, parent pid) of each process in /proc, in the order /proc lists them (by pid)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # exited while we looked
        # The command name is in parentheses and may contain spaces or ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            yield int(entry.name), int(fields[1])


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process visible in /proc."""
    return dict(_parent_pairs())


def descendants(pid: int) -> list[int]:
    """Every living process below pid, parents before children."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    out: list[int] = []
    queue = list(children.get(pid, []))
    while queue:
        current = queue.pop(0)
        out.append(current)
        queue.extend(children.get(current, []))
    return out


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _children(pid: int) -> list[int] | None:
    """pid's children, from each of its threads' /proc lists; None without those lists."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out += [int(child) for child in fh.read().split()]
        except FileNotFoundError:
            if pid == os.getpid():
                return None  # a kernel without CONFIG_PROC_CHILDREN
        except OSError:
            continue  # gone meanwhile
    return out


def kill_descendants(root: int) -> int:
    """SIGKILL every process below root, each the moment it is found; how many were found.

    Walks root's tree through /proc's children lists, killing each process before reading
    its own list: a killed process can never fork again (unlike a stopped one, which any
    SIGCONT restarts), so the list read after the kill is final. Where the kernel has no
    such lists, one pass over /proc, by pid, does the same. Only under a subreaper root is
    this complete: an orphan then names root as its parent, never pid 1; call it until
    waitpid finds no child.
    """
    top = _children(root)
    if top is None:
        return _kill_descendants_by_scan(root)
    seen: set[int] = set()
    queue = top
    while queue:
        pid = queue.pop()
        if pid in seen:
            continue
        seen.add(pid)
        _signal(pid, signal.SIGKILL)
        queue += _children(pid) or []
    return len(seen)


def _kill_descendants_by_scan(root: int) -> int:
    """kill_descendants through one pass over /proc: a child forked meanwhile has a higher
    pid and is usually listed, and killed, in the same pass."""
    ours = {root}
    waiting: dict[int, int] = {}  # listed before its parent was known to be ours
    for pid, parent in _parent_pairs():
        if parent in ours:
            _signal(pid, signal.SIGKILL)
            ours.add(pid)
        else:
            waiting[pid] = parent
    found = True
    while found:  # pid numbers wrap: a parent may be listed after its child
        found = False
        for pid, parent in list(waiting.items()):
            if parent in ours:
                _signal(pid, signal.SIGKILL)
                ours.add(pid)
                del waiting[pid]
                found = True
    return len(ours) - 1


def kill_tree(root: int, *, include_root: bool = True) -> None:
    """Kill root and all its descendants, including ones that left its session (setsid).

    Everything is stopped first, rescanning until no new process appears, then killed at
    once. Best effort only: stopping keeps orphans under root but a SIGCONT undoes a stop.
    FrogDesk uses it only for bwrap, whose PID namespace ends every process in it anyway;
    a supervised command is ended by its supervisor (`end_supervised`).
    """
    frozen: set[int] = set()
    if include_root:
        _signal(root, signal.SIGSTOP)
        frozen.add(root)
    for _ in range(200):
        fresh = [p for p in descendants(root) if p not in frozen]
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGSTOP)
        frozen.update(fresh)
    for pid in frozen:
        _signal(pid, signal.SIGKILL)
    for pid in frozen:
        _signal(pid, signal.SIGCONT)  # a stopped process dies only once it runs again


def _exited(pid: int) -> bool:
    """Whether child pid has ended, without reaping it (its pid stays ours until then)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def end_supervised(proc: subprocess.Popen[bytes]) -> None:
    """Ask a FrogDesk supervisor to end its command (SIGTERM) and wait until it has.

    Never SIGKILL it first: its orphans would go to pid 1. It exits only once no
    descendant of it is left. Its cgroup, if it left one (killed from inside at the
    `none` level), is emptied before it is reaped, while its pid cannot be reused.
    """
    if proc.returncode is not None:
        return
    if not _exited(proc.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGTERM)
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    group = CommandCgroup.for_supervisor(proc.pid)
    if group is not None and group.path.exists():
        group.remove()
    proc.wait()


@dataclass(frozen=True)
class ProcessResult(ShellResult):
    """A ShellResult that also says how much output did not fit under MAX_OUTPUT_BYTES."""

    stdout_dropped: int = 0
    """Characters of stdout past the kept text: counted, never held in memory."""
    stderr_dropped: int = 0
    """Characters of stderr past the kept text."""


def dropped_chars(result: ShellResult) -> int:
    """Characters the command wrote that `result`'s streams do not hold (0 for other shells)."""
    if isinstance(result, ProcessResult):
        return result.stdout_dropped + result.stderr_dropped
    return 0


@dataclass
class _Capture:
    """One output stream: the first MAX_OUTPUT_BYTES kept, every later character counted.

    The count is what decoding the whole stream would give, so an observation cut for the
    model says the same `[truncated K chars]` as Leaf's, which keeps all of it.
    """

    chunks: list[bytes] = field(default_factory=list)
    kept: int = 0
    counter: codecs.IncrementalDecoder | None = None
    """Decodes the whole stream (kept part included) once it overflows, only to count."""
    total_chars: int = 0

    def add(self, data: bytes) -> None:
        """Keep what fits under the cap; count the rest, never holding it."""
        room = max(MAX_OUTPUT_BYTES - self.kept, 0)
        if room:
            self.chunks.append(data[:room])
            self.kept += min(len(data), room)
        if len(data) <= room:
            return
        if self.counter is None:
            self.counter = codecs.getincrementaldecoder("utf-8")(errors="replace")
            self.total_chars = len(self.counter.decode(b"".join(self.chunks)))
        self.total_chars += len(self.counter.decode(data[room:]))

    def text(self) -> tuple[str, int]:
        """The kept text and how many characters of the whole stream it lacks."""
        text = b"".join(self.chunks).decode("utf-8", errors="replace")
        if self.counter is None:
            return text, 0
        total = self.total_chars + len(self.counter.decode(b"", final=True))
        return text, max(total - len(text), 0)


def run_process_tree(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    cancel: threading.Event | None = None,
    pass_fds: Sequence[int] = (),
    supervised: bool = False,
) -> ShellResult:
    """Run argv in a new session; on timeout or cancel end its whole tree; never hang on a pipe.

    `supervised`: argv is a FrogDesk supervisor, ended by asking it (`end_supervised`);
    any other argv is ended with `kill_tree`.
    """
    started = time.monotonic()
    proc = subprocess.Popen(
        list(argv),
        cwd=str(cwd),
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
        pass_fds=tuple(pass_fds),
    )
    assert proc.stdout is not None and proc.stderr is not None

    def end() -> None:
        if supervised:
            end_supervised(proc)
        else:
            kill_tree(proc.pid)
            proc.wait()

    out, err = _Capture(), _Capture()
    captures = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    selector = selectors.DefaultSelector()
    for stream in (proc.stdout, proc.stderr):
        os.set_blocking(stream.fileno(), False)
        selector.register(stream.fileno(), selectors.EVENT_READ)
    timed_out = cancelled = False
    deadline = started + max(timeout, 0.0)
    drain_until: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if drain_until is None:
                if _exited(proc.pid) if supervised else proc.poll() is not None:
                    drain_until = now + DRAIN_SECONDS
                elif cancel is not None and cancel.is_set():
                    cancelled = True
                elif now >= deadline:
                    timed_out = True
                if timed_out or cancelled:
                    end()
                    drain_until = time.monotonic() + DRAIN_SECONDS
            elif now >= drain_until:
                break
            for key, _ in selector.select(POLL_SECONDS):
                fd = int(key.fd)
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not data:
                    selector.unregister(fd)
                    continue
                captures[fd].add(data)
    finally:
        selector.close()
        if supervised:
            end_supervised(proc)  # already ended: only its cgroup is checked, then it is reaped
        elif proc.returncode is None:
            end()
        if not supervised:
            # Whatever is left in the main process's group goes too (backgrounded jobs).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    # A death by signal N stays -N, as subprocess (and so Leaf) reports it, not bash's 128+N.
    exit_code = -1 if timed_out or cancelled else proc.returncode
    stdout, stdout_dropped = out.text()
    stderr, stderr_dropped = err.text()
    return ProcessResult(
        exit_code=exit_code,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        cancelled=cancelled,
        elapsed=time.monotonic() - started,
        stdout_dropped=stdout_dropped,
        stderr_dropped=stderr_dropped,
    )
