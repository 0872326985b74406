"""Every llama.cpp decode in the process runs on one thread, so llama.cpp keeps one OpenMP team.

The controls run the same calls with the routing taken out (each decode inline on its
caller's thread), and show what the tests would see then: the callers' threads, and a team
of worker threads for each of them.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import llama_cpp
import pytest

from frogdesk.engine.chat import GenerationSettings, Message
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.decode import batch as batch_module
from frogdesk.engine.llama.decode import compute_thread
from frogdesk.engine.llama.decode.compute_thread import compute_thread_ident, on_compute_thread
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.shared import SharedLlama
from frogdesk.leaf.schemas import tool_schemas

T = TypeVar("T")

OPENING = [Message("system", "You write code."), Message("user", "Say hello in Python.")]
GREEDY = GenerationSettings(temperature=0.0, max_tokens=6, seed=1, tool_choice="none")
OPTIONS = LlamaOptions(n_ctx=1024, n_threads=2)


def inline(job: Callable[[], T]) -> T:
    """The control's stand-in for `on_compute_thread`: the job on its caller's thread."""
    return job()


@pytest.fixture
def without_routing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every decode runs on the thread that asks for it, as before the compute thread."""
    monkeypatch.setattr(compute_thread, "on_compute_thread", inline)
    monkeypatch.setattr(batch_module, "on_compute_thread", inline)
    yield


def decode_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that fills with the thread of every llama_decode call from now on."""
    seen: list[int] = []
    real = llama_cpp.llama_decode

    def recording(handle: Any, batch: Any) -> int:
        seen.append(threading.get_ident())
        return int(real(handle, batch))

    monkeypatch.setattr(llama_cpp, "llama_decode", recording)
    return seen


def generate_on(backend: LlamaBackend, thread: bool) -> None:
    """One short reply, on this thread or on a new one (which has ended on return)."""

    def reply() -> None:
        list(backend.generate(OPENING, tool_schemas(), GREEDY))

    if not thread:
        reply()
        return
    worker = threading.Thread(target=reply)
    worker.start()
    worker.join()


def shared_attempts(path: Path) -> None:
    """Two attempts on one shared context, each on a thread of its own."""
    shared = SharedLlama(path, 2, OPTIONS)
    try:
        threads = [
            threading.Thread(
                target=lambda i=i: list(
                    shared.backends[i].generate(OPENING, tool_schemas(), GREEDY)
                )
            )
            for i in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        shared.close()


def run_everywhere(path: Path) -> None:
    """Decodes asked for from the main thread, a worker, and two attempts' threads."""
    backend = LlamaBackend(path, OPTIONS)
    try:
        generate_on(backend, thread=False)
        generate_on(backend, thread=True)
    finally:
        backend.close()
    shared_attempts(path)


@pytest.mark.llama
def test_every_decode_runs_on_the_compute_thread(
    smollm2_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = decode_threads(monkeypatch)
    run_everywhere(smollm2_gguf)
    assert seen, "nothing was decoded"
    assert set(seen) == {compute_thread_ident()}
    assert compute_thread_ident() != threading.get_ident()


@pytest.mark.llama
def test_control_without_routing_each_caller_decodes_itself(
    smollm2_gguf: Path, monkeypatch: pytest.MonkeyPatch, without_routing: None
) -> None:
    seen = decode_threads(monkeypatch)
    run_everywhere(smollm2_gguf)
    # the main thread, the worker, and each attempt thread that completed a batch
    assert threading.get_ident() in seen
    assert len(set(seen)) >= 3


def os_threads() -> set[int]:
    """The kernel's ids of this process's threads (OpenMP's workers included)."""
    return {int(name) for name in os.listdir("/proc/self/task")}


def openmp_loaded() -> bool:
    """Whether this process's llama.cpp runs on libgomp (the build the product ships)."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        return "libgomp" in maps.read()


def new_threads_while_callers_live(path: Path, callers: int) -> int:
    """Threads started (callers not counted) while `callers` live threads each had a reply
    decoded, after a warm-up on the main thread; they are still alive then."""
    backend = LlamaBackend(path, OPTIONS)
    release = threading.Event()
    done = threading.Barrier(callers + 1)

    def caller() -> None:
        list(backend.generate(OPENING, tool_schemas(), GREEDY))
        done.wait()
        release.wait()

    try:
        generate_on(backend, thread=False)  # warm: the first team and its workers exist
        before = os_threads()
        workers: list[threading.Thread] = []
        for _ in range(callers):  # one at a time: a backend decodes for one caller
            worker = threading.Thread(target=caller)
            worker.start()
            workers.append(worker)
            while done.n_waiting < len(workers):
                time.sleep(0.01)
        done.wait()
        gained = os_threads() - before - {worker.native_id for worker in workers}
        release.set()
        for worker in workers:
            worker.join()
        return len(gained)
    finally:
        release.set()
        backend.close()


@pytest.mark.llama
def test_callers_on_many_threads_share_one_openmp_team(smollm2_gguf: Path) -> None:
    if not openmp_loaded():
        pytest.skip("this llama.cpp build does not use OpenMP")
    assert new_threads_while_callers_live(smollm2_gguf, 2) == 0


@pytest.mark.llama
def test_control_without_routing_each_live_caller_keeps_a_team(
    smollm2_gguf: Path, without_routing: None
) -> None:
    if not openmp_loaded():
        pytest.skip("this llama.cpp build does not use OpenMP")
    # each caller led a team of 2: itself and a worker that lives as long as it does
    assert new_threads_while_callers_live(smollm2_gguf, 2) >= 2


def test_jobs_from_any_thread_run_on_one_and_nested_jobs_run_inline() -> None:
    threads: set[int] = set()

    def job() -> int:
        threads.add(threading.get_ident())
        return on_compute_thread(lambda: threading.get_ident())  # nested: no deadlock

    with ThreadPoolExecutor(4) as pool:
        nested = set(pool.map(lambda _: on_compute_thread(job), range(16)))
    assert threads == nested == {compute_thread_ident()}


def test_a_jobs_error_reaches_its_caller() -> None:
    def failing() -> None:
        raise LookupError("no such sequence")

    with pytest.raises(LookupError, match="no such sequence"):
        on_compute_thread(failing)
    assert on_compute_thread(lambda: 7) == 7  # the thread survived it


def test_after_the_interpreter_ended_the_thread_a_job_runs_on_its_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ended = ThreadPoolExecutor(1)
    ended.shutdown()  # as the interpreter's exit leaves it: submit raises RuntimeError
    monkeypatch.setattr(compute_thread, "_compute_executor", lambda: ended)
    assert on_compute_thread(threading.get_ident) == threading.get_ident()


def interrupt_while(wait: Callable[[Callable[[], None]], None]) -> bool:
    """Whether a 0.5 s job had ended when Ctrl+C, sent after 0.1 s, reached `wait`'s caller."""
    ended = threading.Event()

    def job() -> None:
        time.sleep(0.5)
        ended.set()

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT))
    try:
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            wait(job)
        return ended.is_set()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)


def test_an_interrupted_caller_waits_until_its_job_has_ended() -> None:
    # the job may still use a context the interrupted caller goes on to free
    assert interrupt_while(on_compute_thread)


def test_control_a_plain_executor_lets_the_interrupt_through_at_once() -> None:
    with ThreadPoolExecutor(1) as pool:
        assert not interrupt_while(lambda job: pool.submit(job).result())
