"""One llama context shared by N sequences: every running sequence advances in one llama_decode.

Each sequence is driven by its own thread (an attempt's Leaf loop) through a
`SequenceContext`, which looks to the llama backend like a context of its own. A decode
request waits until no sequence still holds logits it has not sampled from, then the
waiting decode steps of all generating sequences go into one batch, and the prefill of a
sequence that came back from its tools (or starts a reply) shares that batch (with
`mix_prefill` off it gets a batch of its own between them). A sequence that runs tools
takes no part and holds nobody up.

Mixed batches give every sequence its own logits, as a batch of its own would: the KV cache
has a stream per sequence, so llama.cpp splits a batch into equal-length ubatches of
sequences with consecutive ids, and each sequence sees only its own cells. Bit for bit on
a transformer while the sequences' lengths round to the same 256 cells (a ubatch attends
over as many cells as its longest sequence holds, so beyond that, as in plain decode
batches of several sequences, the rounding differs and the argmax does not); within
float rounding on a hybrid model. The tests show both. They run the same graphs as
separate batches (llama.cpp puts the decode steps and the prefill's first token in one
ubatch and the rest of the prefill in the next) but save the scheduler a round per
prefill, one llama_decode call and one wake-up of every waiting attempt: measured faster
(bench/attempts.py, `mixed_vs_separate`), so they are the default.

Every batch is decoded on the process's compute thread (`compute_thread`), whichever
attempt's thread completed it: llama.cpp's CPU backend keeps an OpenMP team per calling
thread, and more than one team alive slows every decode.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import llama_cpp

from frogdesk.engine.llama.decode.compute_thread import on_compute_thread
from frogdesk.engine.llama.decode.context import (
    PARTIAL,
    LlamaContext,
    held_positions,
    sequence_bytes,
    set_sequence_bytes,
)
from frogdesk.engine.llama.decode.sampling import Pick, Sampler
from frogdesk.engine.llama.errors import DecodeError
from frogdesk.engine.llama.load.model import LlamaModel


@dataclass
class _Request:
    seq: int
    tokens: list[int]
    start: int
    done: int = 0
    output: int = -1
    """Position in the batch that finished it of the token whose logits it gets."""
    error: str = ""
    finished: bool = False


@dataclass
class BatchStats:
    """What the shared context decoded: batches, tokens, and tokens per sequence."""

    batches: int = 0
    tokens: int = 0
    per_sequence: dict[int, int] = field(default_factory=dict)
    widest: int = 0
    """The most sequences that shared one batch."""
    mixed: int = 0
    """Batches in which a prefill (several tokens of one sequence) shared the batch."""


class BatchScheduler:
    """Gathers decode requests of several sequences into shared llama_decode calls."""

    def __init__(self, context: LlamaContext, n_seq: int, *, mix_prefill: bool = True) -> None:
        self.context = context
        self.n_seq = n_seq
        self.mix_prefill = mix_prefill
        """Put a prefill into the batch of the others' decode steps (off: a batch of its own)."""
        self.n_batch = context.n_batch
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        self._cond = threading.Condition()
        self.sampling = threading.Lock()
        """Held while a sequence samples: llama.cpp's logits reads are not made for threads."""
        self._waiting: dict[int, _Request] = {}
        self._active: set[int] = set()
        """Sequences inside a reply: from their first request to their `release`."""
        self.stats = BatchStats()

    def submit(self, seq: int, tokens: Sequence[int], start: int) -> int:
        """Decode `tokens` of `seq` from position `start`; returns where its logits are
        (the batch position of its last token, for llama_get_logits_ith).

        Blocks until the tokens are decoded. A batch runs once every sequence inside a
        reply is waiting, so each decode step takes all of them, and no batch runs while
        one of them still samples from the logits of the last (they stay where they are).
        """
        request = _Request(seq, list(tokens), start)
        with self._cond:
            self._active.add(seq)
            self._waiting[seq] = request
            # Nobody is woken here: a waiting thread can only go on once a batch ran (its
            # request done) or a `release` let one run; a batch this request completes is
            # run by this thread below. Waking the others on each arrival only cost a
            # switch to a thread that goes back to waiting.
            while not request.finished:
                if self._waiting and self._active <= self._waiting.keys():
                    self._run_batch()
                    continue
                self._cond.wait()
            if request.error:
                raise DecodeError(request.error)
            return request.output

    def join(self, seq: int) -> None:
        """`seq` is about to decode: batches wait for its request (or its `release`).

        Only for a sequence whose thread is sure to do one or the other soon.
        """
        with self._cond:
            self._active.add(seq)

    def release(self, seq: int) -> None:
        """`seq`'s reply ended (or it went to run tools): batches run without it."""
        with self._cond:
            self._active.discard(seq)
            self._cond.notify_all()

    def locked(self, work: Callable[[], Any]) -> Any:
        """Run memory work (trim, copy, snapshot) while no batch is being decoded."""
        with self._cond:
            return work()

    def _run_batch(self) -> None:
        """One batch: one sequence's prefill, else the next token of every generating sequence
        (with `mix_prefill`: every waiting sequence, decode steps first, prefills in the room
        left; a sequence's tokens side by side, sequences in increasing id).
        """
        batch = self._batch
        slots = self._mixed_slots() if self.mix_prefill else self._separate_slots()
        n = 0
        finishing: list[tuple[_Request, int]] = []
        for request, first, count in slots:
            last = first + count == len(request.tokens)
            for i in range(count):
                batch.token[n] = request.tokens[first + i]
                batch.pos[n] = request.start + first + i
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = request.seq
                batch.logits[n] = last and i == count - 1
                n += 1
            if last:
                finishing.append((request, n - 1))
        batch.n_tokens = n
        rc = on_compute_thread(lambda: self._decode(batch))
        self.stats.batches += 1
        self.stats.tokens += n
        self.stats.widest = max(self.stats.widest, len(slots))
        if len(slots) > 1 and any(count > 1 for _, _, count in slots):
            self.stats.mixed += 1
        for request, first, count in slots:
            self.stats.per_sequence[request.seq] = (
                self.stats.per_sequence.get(request.seq, 0) + count
            )
            if rc != 0:
                request.error = (
                    f"llama_decode failed with code {rc} at position {request.start + first}"
                )
                request.finished = True
                del self._waiting[request.seq]
                continue
            request.done += count
        if rc == 0:
            for request, position in finishing:
                request.output = position  # llama_get_logits_ith takes the batch position
                request.finished = True
                del self._waiting[request.seq]
        self._cond.notify_all()

    def _decode(self, batch: Any) -> int:
        """llama_decode of `batch` (on the compute thread); its return code."""
        rc = int(llama_cpp.llama_decode(self.context.handle, batch))
        if rc == 0:
            # The first read of the logits reorders the output rows in place: do it here,
            # once, so the sequences' samplers only read them, side by side.
            llama_cpp.llama_get_logits(self.context.handle)
        return rc

    def _separate_slots(self) -> list[tuple[_Request, int, int]]:
        """A prefill alone (first, so a sequence back from its tools is not starved), else
        one token of every waiting sequence: (request, first token index, count)."""
        longer = [r for r in self._waiting.values() if len(r.tokens) - r.done > 1]
        if longer:
            request = longer[0]
            return [(request, request.done, min(len(request.tokens) - request.done, self.n_batch))]
        return [(r, r.done, 1) for r in list(self._waiting.values())[: self.n_batch]]

    def _mixed_slots(self) -> list[tuple[_Request, int, int]]:
        """Every waiting sequence's next token, then as much of each prefill as fits."""
        waiting = sorted(self._waiting.values(), key=lambda r: r.seq)[: self.n_batch]
        room = self.n_batch - len(waiting)  # one token each first: nobody waits a turn
        slots: list[tuple[_Request, int, int]] = []
        for request in waiting:
            extra = min(len(request.tokens) - request.done - 1, max(room, 0))
            room -= extra
            slots.append((request, request.done, 1 + extra))
        return slots

    def close(self) -> None:
        """Free the batch (the context belongs to its owner)."""
        if self._batch is not None:
            llama_cpp.llama_batch_free(self._batch)
            self._batch = None


class SequenceContext:
    """One sequence of a shared context, as a `DecodeTarget`.

    It owns no llama context: every call goes to the shared one through the scheduler, and
    a batch gives each sequence one row, so a draft cannot be verified here.
    """

    def __init__(  # the shared context is made once, by its owner
        self, scheduler: BatchScheduler, seq: int, n_ctx: int
    ) -> None:
        self.scheduler = scheduler
        self.seq = seq
        self.model: LlamaModel = scheduler.context.model
        self.n_ctx = n_ctx
        self.n_batch = scheduler.n_batch
        self.logits_index = -1
        self._mem = llama_cpp.llama_get_memory(scheduler.context.handle)

    @property
    def handle(self) -> Any:
        """The shared `llama_context *` (sample with `logits_index`)."""
        return self.scheduler.context.handle

    @property
    def can_verify(self) -> bool:
        """A shared batch takes one row of each sequence: no draft is verified here."""
        return False

    def decode(
        self,
        tokens: Sequence[int],
        start: int,
        *,
        between_chunks: Callable[[int], bool] | None = None,
    ) -> int:
        """Decode `tokens` of this sequence from `start`, a batch's room at a time."""
        done = 0
        while done < len(tokens):
            chunk = tokens[done : done + self.n_batch]
            self.logits_index = self.scheduler.submit(self.seq, chunk, start + done)
            done += len(chunk)
            if done < len(tokens) and between_chunks is not None and not between_chunks(done):
                break
        return done

    def sample(self, sampler: Sampler, row: int = -1) -> int:
        """Sample from this sequence's logits of the last batch, one sequence at a time
        (`row` -1: its last request's; drafting, which needs other rows, is off here)."""
        with self.scheduler.sampling:
            return sampler.sample(self.handle, self.logits_index if row == -1 else row)

    def choose(self, sampler: Sampler, row: int = -1) -> Pick:
        """The sampler's pick from this sequence's logits of the last batch, not yet accepted
        (`row` -1: its last request's row, not the batch's last row, which may be another
        sequence's)."""
        with self.scheduler.sampling:
            return sampler.choose(self.handle, self.logits_index if row == -1 else row)

    def decode_one(self, token: int, pos: int) -> None:
        """Decode one generated token at `pos`, in the next shared batch."""
        self.logits_index = self.scheduler.submit(self.seq, [token], pos)

    def decode_rows(self, tokens: Sequence[int], start: int) -> None:
        """Refused: a shared batch holds one row with logits per sequence (`can_verify`)."""
        raise DecodeError("a sequence of a shared context cannot verify a draft")

    def release(self) -> None:
        """This sequence's reply ended: the others need not wait for it."""
        self.scheduler.release(self.seq)

    def logits(self) -> list[float]:
        """A copy of the logits of this sequence's last request; valid until the next batch
        (read under the scheduler's lock, never while a batch is being decoded)."""

        def work() -> list[float]:
            ptr = llama_cpp.llama_get_logits_ith(self.handle, self.logits_index)
            return list(ptr[: self.model.n_vocab])

        row: list[float] = self.scheduler.locked(work)
        return row

    def clear(self) -> None:
        """Forget every position of this sequence."""
        self.scheduler.locked(lambda: llama_cpp.llama_memory_seq_rm(self._mem, self.seq, -1, -1))

    def trim(self, pos: int) -> bool:
        """Drop positions >= pos of this sequence; False when the memory cannot."""
        return bool(
            self.scheduler.locked(
                lambda: llama_cpp.llama_memory_seq_rm(self._mem, self.seq, pos, -1)
            )
        )

    def copy_to(self, other: int) -> None:
        """Copy this sequence's cells (KV and recurrent state) to sequence `other`."""

        def work() -> None:
            llama_cpp.llama_memory_seq_rm(self._mem, other, -1, -1)
            llama_cpp.llama_memory_seq_cp(self._mem, self.seq, other, -1, -1)

        self.scheduler.locked(work)

    def held_positions(self) -> tuple[int, int]:
        """The lowest and highest position this sequence holds ((-1, -1): none)."""
        held: tuple[int, int] = self.scheduler.locked(lambda: held_positions(self._mem, self.seq))
        return held

    def save_sequence(self) -> bytes:
        """This sequence's whole state (KV cache and recurrent state)."""
        data: bytes = self.scheduler.locked(lambda: sequence_bytes(self.handle, self.seq))
        return data

    def load_sequence(self, data: bytes) -> bool:
        """Replace this sequence's state with `save_sequence` bytes; False when refused."""
        return bool(self.scheduler.locked(lambda: set_sequence_bytes(self.handle, self.seq, data)))

    def snapshot(self) -> bytes:
        """The recurrent part of this sequence's state."""

        def work() -> bytes:
            size = int(llama_cpp.llama_state_seq_get_size_ext(self.handle, self.seq, PARTIAL))
            buf = (ctypes.c_uint8 * size)()
            written = int(
                llama_cpp.llama_state_seq_get_data_ext(self.handle, buf, size, self.seq, PARTIAL)
            )
            return bytes(buf[:written])

        data: bytes = self.scheduler.locked(work)
        return data

    def restore(self, data: bytes, pos: int) -> bool:
        """Restore a `snapshot` taken at `pos` tokens, then drop the cache from `pos` on."""

        def work() -> int:
            buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
            return int(
                llama_cpp.llama_state_seq_set_data_ext(
                    self.handle, buf, len(data), self.seq, PARTIAL
                )
            )

        if self.scheduler.locked(work) == 0 and data:
            return False
        return self.trim(pos)

    def close(self) -> None:
        """Free this sequence's cells; the shared context stays."""
        self.clear()
