"""The one thread that runs llama.cpp's compute in this process.

llama.cpp's CPU backend computes each graph on an OpenMP team led by the calling thread,
and libgomp keeps a team for every thread that ever called it, for as long as that thread
lives. Once it manages more threads than there are CPUs (two teams of n threads on n
CPUs: the main thread's and a worker's), libgomp cuts the spin of every barrier to a
hundred turns, and ggml meets such a barrier after each node of the graph, so most of them
end in a sleep and a wake-up in the kernel. Measured on 2 cores with SmolLM2 (a 3-row
decode, median of 64): 20.1 ms on the main thread alone, 20.3 ms on a new thread alone,
22.1 ms on a new thread while the main thread's team lives, 21.8 ms on the main thread
while a worker's team lives. So every decode of every context (a session's, the attempts'
shared batches, a drafter's, `models check`'s) runs here, and the process keeps one team.

A caller that is interrupted while it waits (Ctrl+C on the main thread) waits for the job
to end before the interrupt goes on: the job still uses the context the caller is about to
free. Once the interpreter exits (its exit joins the thread, which ends its job first), a
late job runs on its caller's thread instead of failing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from typing import Any, TypeVar

import llama_cpp

T = TypeVar("T")

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_ident: int | None = None


def on_compute_thread(job: Callable[[], T]) -> T:
    """`job()`, run on the compute thread (inline when already on it); its result or error."""
    if threading.get_ident() == _ident:
        return job()
    try:
        future = _compute_executor().submit(job)
    except RuntimeError:  # the interpreter is exiting and has ended the thread: run it here
        return job()
    try:
        return future.result()
    except BaseException:
        if not future.done():
            _wait_out(future)
        raise


def llama_decode(handle: Any, batch: Any) -> int:
    """llama.cpp's `llama_decode(handle, batch)` on the compute thread; its return code."""
    return int(on_compute_thread(lambda: llama_cpp.llama_decode(handle, batch)))


def compute_thread_ident() -> int | None:
    """The compute thread's identifier; None before the first job."""
    return _ident


def _compute_executor() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(
                1, thread_name_prefix="frogdesk-compute", initializer=_note_ident
            )
        return _executor


def _note_ident() -> None:
    global _ident
    _ident = threading.get_ident()


def _wait_out(future: Future[T]) -> None:
    """Wait until `future` ends, whatever interrupts the wait (each job is one compute call)."""
    while not future.done():
        try:
            wait_for([future])
        except BaseException:  # the interrupt that matters is re-raised by the caller
            continue


def _forget_after_fork() -> None:
    """A forked child has no compute thread: it starts its own on its first job."""
    global _executor, _ident, _lock
    _executor, _ident, _lock = None, None, threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)
