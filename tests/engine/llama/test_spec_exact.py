"""Verification-exact drafting (issue 33): what "correct" means once a batch may round otherwise.

Every emitted token is the target's own pick from the logits it computed for that token's
position, whatever batch computed them (greedy: the row's first largest logit); the state
after any mix of accepted and rejected drafts gives the next logits that decoding the kept
tokens with the recorded batch shapes gives. Both are checked on a log of every call that
changed the live context, replayed on a fresh one: SmolLM2 (a transformer) and the tiny
random qwen35 (hybrid: DeltaNet state beside the KV cache).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
import pytest

from frogdesk.engine.chat import GenerationSettings, Message, Reply
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.conversation.generation import ReplyRun, ReplyStream
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.load.options import LlamaOptions
from tests.engine.llama.test_speculative import AlwaysVerify, ScriptedDrafter, replay_logits

pytestmark = pytest.mark.llama

OPTIONS = LlamaOptions(n_ctx=2048, n_threads=1, n_batch=64)
MESSAGES = [
    Message("system", "You are a helpful assistant."),
    Message("user", "List three uses of a hash map, briefly, then write a tiny example."),
]


@dataclass
class Pick:
    """A token picked during the reply and the logits row it was picked from."""

    calls: int
    """How many context calls had run when it was picked (the last one made the row)."""
    row: int
    logits: np.ndarray
    token: int


@dataclass
class Log:
    """Every call that changed the live context, in order, and every pick."""

    calls: list[tuple[Any, ...]] = field(default_factory=list)
    snapshots: list[bytes] = field(default_factory=list)
    picks: list[Pick] = field(default_factory=list)


def record(backend: LlamaBackend, monkeypatch: pytest.MonkeyPatch) -> Log:
    """Log the backend's context calls and picks from now on (the real calls still run)."""
    log, ctx = Log(), backend.context
    n_vocab = backend.model.n_vocab

    def decode(tokens: Sequence[int], start: int, **kw: Any) -> int:
        n = original_decode(tokens, start, **kw)
        log.calls.append(("decode", tuple(tokens[:n]), start))
        return n

    def decode_one(token: int, pos: int) -> None:
        original_decode_one(token, pos)
        log.calls.append(("decode_one", (token,), pos))

    def decode_rows(tokens: Sequence[int], start: int) -> None:
        original_decode_rows(tokens, start)
        log.calls.append(("decode_rows", tuple(tokens), start))

    def trim(pos: int) -> bool:
        ok = original_trim(pos)
        log.calls.append(("trim", pos, ok))
        return ok

    def snapshot() -> bytes:
        data = original_snapshot()
        log.snapshots.append(data)
        log.calls.append(("snapshot", len(log.snapshots) - 1))
        return data

    def restore(data: bytes, pos: int) -> bool:
        # restore trims through the instance's own (recorded) trim: the restore is logged first
        index = next(i for i, d in enumerate(log.snapshots) if d is data)
        log.calls.append(("restore", index, pos))
        return original_restore(data, pos)

    def clear() -> None:
        original_clear()
        log.calls.append(("clear",))

    original_decode, original_decode_one = ctx.decode, ctx.decode_one
    original_decode_rows, original_trim = ctx.decode_rows, ctx.trim
    original_snapshot, original_restore, original_clear = ctx.snapshot, ctx.restore, ctx.clear
    for name, fn in [("decode", decode), ("decode_one", decode_one),
                     ("decode_rows", decode_rows), ("trim", trim), ("snapshot", snapshot),
                     ("restore", restore), ("clear", clear)]:  # fmt: skip
        monkeypatch.setattr(ctx, name, fn)
    original_pick = ReplyRun._pick

    def pick(run: ReplyRun, stream: ReplyStream, row: int) -> int:
        pointer = llama_cpp.llama_get_logits_ith(backend.context.handle, row)
        logits = np.ctypeslib.as_array(pointer, shape=(n_vocab,)).copy()
        token = original_pick(run, stream, row)
        log.picks.append(Pick(len(log.calls), row, logits, token))
        return token

    monkeypatch.setattr(ReplyRun, "_pick", pick)
    return log


def check_own_picks(log: Log, tokens: Sequence[int], first: int) -> list[str]:
    """What is wrong with the picks (empty: nothing): each pick of a reply token must come
    from the row of the last decode call that follows exactly the transcript's tokens before
    that token's position, and the reply's tokens from `first` on must be the picks in order.

    The context's content is followed call by call (a snapshot holds what the context held
    when it was taken, a restore goes back to it)."""
    problems: list[str] = []
    held: list[int] = []
    saved: dict[int, list[int]] = {}
    by_calls: dict[int, list[Pick]] = {}
    for p in log.picks:
        by_calls.setdefault(p.calls, []).append(p)
    made: dict[int, tuple[list[int], tuple[int, ...], int]] = {}
    """calls so far -> (what the context held before the decode call, its tokens, start)."""
    for i, call in enumerate(log.calls):
        kind = call[0]
        if kind in ("decode", "decode_one", "decode_rows"):
            _, batch, start = call
            if start != len(held):
                problems.append(f"call {i}: decodes at {start} but the context holds {len(held)}")
            made[i + 1] = (list(held), batch, start)
            held = held[:start] + list(batch)
        elif kind == "trim":
            _, pos, ok = call
            if ok:
                held = held[:pos]
        elif kind == "snapshot":
            saved[call[1]] = list(held)
        elif kind == "restore":
            _, index, pos = call
            if len(saved[index]) != pos:
                problems.append(f"call {i}: a state of {len(saved[index])} restored at {pos}")
            held = list(saved[index])
        elif kind == "clear":
            held = []
    picked: list[int] = []
    for calls, picks in sorted(by_calls.items()):
        if calls not in made:
            problems.append(f"a pick after call {calls - 1}, which decoded nothing")
            continue
        before, batch, start = made[calls]
        for p in picks:
            row = len(batch) - 1 if p.row < 0 else p.row
            context = before[:start] + list(batch[: row + 1])
            position = len(context)
            if list(tokens[:position]) != context:
                problems.append(f"the pick for position {position} follows other tokens")
            if position < len(tokens) and tokens[position] != p.token:
                problems.append(f"position {position} holds {tokens[position]}, not {p.token}")
            picked.append(p.token)
    # (the reply's closing, added after it, is not sampled)
    if not picked or list(tokens[first : first + len(picked)]) != picked:
        problems.append("the reply's tokens are not the picks in order")
    return problems


def replay_rows(log: Log, backend: LlamaBackend) -> list[np.ndarray]:
    """The logits of every pick's row, made again on a fresh context by the same calls."""
    fresh = LlamaContext(backend.model, OPTIONS)
    n_vocab, snapshots = backend.model.n_vocab, dict[int, bytes]()
    rows: list[np.ndarray] = []
    by_calls: dict[int, list[Pick]] = {}
    for p in log.picks:
        by_calls.setdefault(p.calls, []).append(p)

    def read(done: int) -> None:
        for p in by_calls.get(done, []):
            pointer = llama_cpp.llama_get_logits_ith(fresh.handle, p.row)
            rows.append(np.ctypeslib.as_array(pointer, shape=(n_vocab,)).copy())

    try:
        for i, call in enumerate(log.calls):
            read(i)
            kind = call[0]
            if kind == "decode":
                fresh.decode(call[1], call[2])
            elif kind == "decode_one":
                fresh.decode_one(call[1][0], call[2])
            elif kind == "decode_rows":
                fresh.decode_rows(call[1], call[2])
            elif kind == "trim":
                fresh.trim(call[1])
            elif kind == "snapshot":
                snapshots[call[1]] = fresh.snapshot()
            elif kind == "restore":
                fresh.restore(snapshots[call[1]], call[2])
            elif kind == "clear":
                fresh.clear()
        read(len(log.calls))
        return rows
    finally:
        fresh.close()


def reference(path: Path, temperature: float) -> tuple[int, list[int]]:
    """Prompt length and reply tokens without drafting."""
    b = LlamaBackend(path, replace(OPTIONS, speculative=False))
    try:
        r = generate(b, temperature)
        assert r.usage is not None
        return r.usage.prompt_tokens, list(b.transcript.tokens[r.usage.prompt_tokens :])
    finally:
        b.close()


def generate(b: LlamaBackend, temperature: float, max_tokens: int = 40) -> Reply:
    out = Reply()
    settings = GenerationSettings(max_tokens=max_tokens, temperature=temperature, seed=4)
    for event in b.generate(MESSAGES, [], settings):
        out.add(event)
    assert out.usage is not None
    return out


def drafted_run(
    path: Path, temperature: float, monkeypatch: pytest.MonkeyPatch, *, mixed: bool = True
) -> tuple[LlamaBackend, Log, int]:
    """A reply with every step drafted (drafts of the reference, some with a wrong token)."""
    prompt_len, tokens = reference(path, temperature)
    b = LlamaBackend(path, OPTIONS)
    b.drafting.drafter = ScriptedDrafter(prompt_len, tokens, b.model.n_vocab)
    b.drafting.policy = AlwaysVerify()
    log = record(b, monkeypatch)
    r = generate(b, temperature)
    assert r.usage is not None
    assert r.usage.drafted_tokens > 0
    if mixed:
        assert r.usage.drafted_tokens > r.usage.accepted_tokens > 0, "accepted and rejected"
    return b, log, prompt_len


MODELS = ["smollm2_gguf", "qwen35_gguf"]


def own_pick_problems(b: LlamaBackend, log: Log, prompt_len: int, greedy: bool) -> list[str]:
    """Everything `check_own_picks` finds, and any pick whose recorded row a fresh context
    does not make again with the same calls, or (greedy) that is not its row's argmax."""
    problems = check_own_picks(log, list(b.transcript.tokens), prompt_len)
    again = replay_rows(log, b)
    if len(again) != len(log.picks):
        return [*problems, "the replay read another number of rows"]
    for i, (p, row) in enumerate(zip(log.picks, again, strict=True)):
        if not np.array_equal(p.logits, row):
            problems.append(f"pick {i}: its row is not what the same calls make")
        if greedy and p.token != int(np.argmax(p.logits)):
            problems.append(f"pick {i}: {p.token} is not its row's argmax")
        if not np.isfinite(p.logits[p.token]):
            problems.append(f"pick {i}: {p.token} has no finite logit")
    return problems


@pytest.mark.parametrize("temperature", [0.0, 0.6])
@pytest.mark.parametrize("model", MODELS)
def test_every_token_is_the_targets_own_pick_from_its_positions_logits(
    model: str, temperature: float, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each emitted token was picked from the row computed for its position after exactly
    the tokens before it (greedy: that row's first largest logit), and that row is what a
    fresh context makes with the same calls: the model's own logits, whatever the batch."""
    path: Path = request.getfixturevalue(model)
    b, log, prompt_len = drafted_run(path, temperature, monkeypatch)
    try:
        assert any(c[0] == "decode_rows" and len(c[1]) > 2 for c in log.calls), "batches ran"
        assert own_pick_problems(b, log, prompt_len, temperature == 0.0) == []
    finally:
        b.close()


def test_the_check_sees_a_token_picked_from_the_next_row(
    smollm2_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Positive control: a verification that reads the row after the right one (an
    off-by-one in the batch) emits tokens that are not their rows' picks, and the check
    says so."""
    original = ReplyRun._pick

    def next_row(run: ReplyRun, stream: ReplyStream, row: int) -> int:
        last = len(run._conversation.verifying) - 1
        return original(run, stream, row + 1 if 0 <= row < last else row)

    monkeypatch.setattr(ReplyRun, "_pick", next_row)
    b, log, prompt_len = drafted_run(smollm2_gguf, 0.0, monkeypatch, mixed=False)
    try:
        assert any("argmax" in p for p in own_pick_problems(b, log, prompt_len, True))
    finally:
        b.close()


@pytest.mark.parametrize("model", MODELS)
def test_the_state_after_drafts_is_that_of_decoding_the_kept_tokens(
    model: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After accepted and rejected drafts, the next logits equal a fresh context fed only
    the kept tokens with the decode calls the schedule records; and again once the next
    turn decodes the last token."""
    path: Path = request.getfixturevalue(model)
    b, _, prompt_len = drafted_run(path, 0.0, monkeypatch)
    try:
        reply_calls = [n for start, n in b.transcript.schedule if start >= prompt_len]
        assert max(reply_calls) > 1, "kept tokens of a batch, in one call"
        assert np.abs(np.array(b.last_logits()) - replay_logits(b)).max() == 0.0
        b.catch_up()
        assert np.abs(np.array(b.last_logits()) - replay_logits(b)).max() == 0.0
    finally:
        b.close()
