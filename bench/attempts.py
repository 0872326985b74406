"""Benchmark: N attempts as N sequences of one llama context against one at a time; prints JSON.

- `aggregate_ratio[N]`: FrogDesk's aggregate decode rate with N attempts in shared batches
  over its rate with one (N = 2, 3, 4), each timed as for `vs_raw`.
- `vs_raw`: FrogDesk's aggregate decode rate at N = 3 over a plain batched decode loop
  written on llama.cpp's low-level API (same model, context, prefix and token counts), run
  on the main thread of a process of its own, where nothing else ever decoded (its best
  case: see `raw_in_process_vs_alone`). Both are timed from the moment every sequence has
  its prompt evaluated to the last token sampled: the reference starts there, and
  FrogDesk's window starts when its last attempt begins sampling (before that its threads
  start, plan their replies and prefill their generation prompts at different moments, per
  reply rather than per token; the tokens an attempt sampled earlier are not counted).
  `vs_raw_wall` counts FrogDesk's whole wall time instead, from starting the threads to
  joining them.
- `raw_in_process_vs_alone`: the same reference loop run in this process, on its compute
  thread, over the loop alone in its own process. llama.cpp keeps an OpenMP team for every
  thread that ever decoded, and with two teams alive every decode slows down (see
  frogdesk/engine/llama/decode/compute_thread.py); so every decode in this process,
  FrogDesk's and the reference's, runs on the one compute thread, and the main thread
  decodes nothing.
- `batched_vs_sequential`: wall time of 3 attempts batched over the same 3 attempts one
  after another on the single-sequence backend (same tokens: greedy, same prompt).
- `mixed_vs_separate`: wall time of 3 attempts over several turns, each tool result's
  prefill sharing the batch with the others' decode steps (the default), over the same run
  with each prefill in a batch of its own; `raw_mixed_vs_two_batches` the same on
  llama.cpp's low-level API for one 128-token prefill beside two decode steps.

`--tiny-qwen35` runs it all on the tests' tiny random-weight hybrid model instead of
`--model`. Its greedy replies reach the end-of-turn token after a few dozen tokens, where
FrogDesk's attempts stop and the reference goes on: `runs` gives both token counts.

Every measurement runs `--repeats` times, the runs of one repeat back to back in an order
that rotates between repeats (the machine may be shared); each ratio is taken within a
repeat, and the report gives the median, every repeat's value and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import llama_cpp

from frogdesk.engine.chat import Finished, GenerationSettings, Message, Reply
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.decode.batch import SequenceContext
from frogdesk.engine.llama.decode.compute_thread import on_compute_thread
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.decode.sampling import Pick, Sampler
from frogdesk.engine.llama.load.model import LlamaModel
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.engine.llama.shared import SharedLlama
from frogdesk.engine.template import ChatTemplate
from frogdesk.leaf.schemas import SYSTEM_PROMPT, tool_schemas

TASK = "The test tests/test_calc.py::test_divide fails with ZeroDivisionError. Fix calc.py."
OPENING = [Message("system", SYSTEM_PROMPT), Message("user", TASK)]


def settings(tokens: int) -> GenerationSettings:
    """Greedy, a fixed cap, no tool grammar (every attempt samples the same way)."""
    return GenerationSettings(temperature=0.0, max_tokens=tokens, seed=1, tool_choice="none")


def ours(model: Path, n: int, tokens: int, options: LlamaOptions) -> dict[str, Any]:
    """N attempts on one shared context: the opening once, then decode in shared batches.

    `aggregate_tok_s` is measured as `raw` measures it: from the moment every sequence has
    its prompt evaluated (the last attempt starts sampling its first token) to the last
    token sampled, counting the tokens sampled in between (an attempt that started first
    may have sampled a few before). `wall_s` also holds what comes before (the threads'
    start, each attempt's planning and its generation prompt's prefill) and after.
    """
    shared = SharedLlama(model, n, options)
    try:
        shared.share_prefix(shared.backends[0], OPENING, tool_schemas(), True)
        done: dict[int, int] = {}
        samples: dict[int, list[tuple[float, float]]] = {i: [] for i in range(n)}
        for i, backend in enumerate(shared.backends):
            _time_samples(backend.slot, samples[i])

        def attempt(i: int) -> None:
            events = list(shared.backends[i].generate(OPENING, tool_schemas(), settings(tokens)))
            finished = next(e for e in events if isinstance(e, Finished))
            done[i] = len(finished.raw_tokens)

        started = time.perf_counter()
        threads = [threading.Thread(target=attempt, args=(i,)) for i in range(n)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
        silent = [i for i, times in samples.items() if not times]
        if silent or len(done) < n:
            raise SystemExit(f"attempts {silent} picked no token ({len(done)}/{n} finished)")
        first = max(times[0][0] for times in samples.values())
        last = max(times[-1][1] for times in samples.values())
        decoded = sum(1 for times in samples.values() for entered, _ in times if entered >= first)
        return {
            "n": n,
            "tokens": sum(done.values()),
            "wall_s": wall,
            "wall_tok_s": sum(done.values()) / wall,
            "decode_s": last - first,
            "decode_tokens": decoded,
            "aggregate_tok_s": decoded / (last - first),
            "batches": shared.stats.batches,
            "widest": shared.stats.widest,
        }
    finally:
        shared.close()


def _time_samples(slot: SequenceContext, times: list[tuple[float, float]]) -> None:
    """Note when each pick of a token from `slot`'s logits begins and ends (one per generated
    token): `sample` (the sampler chain) and `choose` (greedy, read straight from the logits)."""
    sample, choose = slot.sample, slot.choose

    def timed_sample(sampler: Sampler, row: int = -1) -> int:
        entered = time.perf_counter()
        token = sample(sampler, row)
        times.append((entered, time.perf_counter()))
        return token

    def timed_choose(sampler: Sampler, row: int = -1) -> Pick:
        entered = time.perf_counter()
        pick = choose(sampler, row)
        times.append((entered, time.perf_counter()))
        return pick

    slot.sample = timed_sample  # type: ignore[method-assign]
    slot.choose = timed_choose  # type: ignore[method-assign]


def alone(args: argparse.Namespace, n: int) -> dict[str, Any]:
    """`raw` run on the main thread of a new process (`--reference-alone`); its result."""
    command = [sys.executable, str(Path(__file__).resolve()), "--reference-alone", str(n)]
    command += ["--model", str(args.model), "--tokens", str(args.tokens)]
    command += ["--threads", str(args.threads), "--n-ctx", str(args.n_ctx)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the reference run alone failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def prefill_here(handle: Any, prompt: list[int], n_batch: int) -> None:
    """Decode `prompt` on sequence 0 on this thread (not the compute thread `LlamaContext`
    uses: `raw` alone decodes every token on its process's main thread)."""
    batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
    try:
        for first in range(0, len(prompt), n_batch):
            chunk = prompt[first : first + n_batch]
            for i, token in enumerate(chunk):
                batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, first + i, 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = first + i == len(prompt) - 1
            batch.n_tokens = len(chunk)
            if llama_cpp.llama_decode(handle, batch) != 0:
                raise RuntimeError("llama_decode failed")
    finally:
        llama_cpp.llama_batch_free(batch)


def raw(model_path: Path, n: int, tokens: int, options: LlamaOptions) -> dict[str, Any]:
    """The reference: prefix on sequence 0, copied, then n greedy tokens per step, one batch."""
    model = LlamaModel(model_path, options)
    context = LlamaContext(model, replace(options, n_ctx=options.n_ctx * n), n)
    try:
        template = ChatTemplate(model.chat_template() or "")
        text = template.render(OPENING, tool_schemas(), add_generation_prompt=True)
        prompt = model.tokenize(text, add_special=model.add_bos)
        handle = context.handle
        mem = llama_cpp.llama_get_memory(handle)
        prefill_here(handle, prompt, context.n_batch)
        for seq in range(1, n):
            llama_cpp.llama_memory_seq_cp(mem, 0, seq, -1, -1)
        greedy = [llama_cpp.llama_sampler_init_greedy() for _ in range(n)]
        batch = llama_cpp.llama_batch_init(n, 0, 1)
        last = [-1] * n
        started = time.perf_counter()
        position = len(prompt)
        rows = [-1] * n
        for step in range(tokens):
            for seq in range(n):
                token = llama_cpp.llama_sampler_sample(greedy[seq], handle, rows[seq])
                last[seq] = token
            if step == tokens - 1:
                break
            for seq in range(n):
                batch.token[seq] = last[seq]
                batch.pos[seq] = position
                batch.n_seq_id[seq] = 1
                batch.seq_id[seq][0] = seq
                batch.logits[seq] = True
                rows[seq] = seq
            batch.n_tokens = n
            if llama_cpp.llama_decode(handle, batch) != 0:
                raise RuntimeError("llama_decode failed")
            position += 1
        wall = time.perf_counter() - started
        llama_cpp.llama_batch_free(batch)
        for sampler in greedy:
            llama_cpp.llama_sampler_free(sampler)
        return {"n": n, "tokens": n * tokens, "wall_s": wall, "aggregate_tok_s": n * tokens / wall}
    finally:
        context.close()
        model.close()


def sequential(model: Path, n: int, tokens: int, options: LlamaOptions) -> dict[str, Any]:
    """The same n attempts one after another on the single-sequence backend (no drafting,
    as in the shared context: the same decode path, one token per step)."""
    backend = LlamaBackend(model, replace(options, speculative=False))
    try:
        backend.prefill(OPENING, tool_schemas())
        generated = 0
        started = time.perf_counter()
        for _ in range(n):
            events = list(backend.generate(OPENING, tool_schemas(), settings(tokens)))
            generated += len(next(e for e in events if isinstance(e, Finished)).raw_tokens)
        wall = time.perf_counter() - started
        return {"n": n, "tokens": generated, "wall_s": wall}
    finally:
        backend.close()


def turns(model: Path, n: int, tokens: int, options: LlamaOptions, mix: bool) -> dict[str, Any]:
    """N attempts over three turns with a tool result after each, out of step (each attempt
    caps its replies differently), so one's prefill comes while the others decode."""
    shared = SharedLlama(model, n, options, mix_prefill=mix)
    try:
        shared.share_prefix(shared.backends[0], OPENING, tool_schemas(), True)
        generated: dict[int, int] = {}

        def attempt(i: int) -> None:
            messages = list(OPENING)
            generated[i] = 0
            for turn in range(3):
                cap = tokens // 2 + i * max(tokens // 8, 1)
                reply = Reply()
                for event in shared.backends[i].generate(messages, tool_schemas(), settings(cap)):
                    reply.add(event)
                assert reply.finish is not None
                generated[i] += len(reply.finish.raw_tokens)
                result = "\n".join(
                    f"{k}. total_{i}_{turn}_{k} = add({k}, {turn})" for k in range(12)
                )
                messages += [Message("assistant", reply.content, reply.reasoning)]
                messages += [Message("tool", f"calc.py\n{result}")]

        started = time.perf_counter()
        threads = [threading.Thread(target=attempt, args=(i,)) for i in range(n)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - started
        return {
            "mix": mix,
            "tokens": sum(generated.values()),
            "wall_s": wall,
            "batches": shared.stats.batches,
            "mixed_batches": shared.stats.mixed,
            "evaluated": shared.stats.tokens,
        }
    finally:
        shared.close()


def raw_mixing(model_path: Path, options: LlamaOptions, pairs: int) -> dict[str, Any]:
    """Low-level: one batch of two sequences' decode steps and a third's 128-token prefill,
    against the prefill's batch and then the decode steps' batch; `pairs` of each, side by
    side. Sequence 3 keeps the opening to reset the others from between runs."""
    model = LlamaModel(model_path, options)
    context = LlamaContext(model, replace(options, n_ctx=options.n_ctx * 4), 4)
    batch = llama_cpp.llama_batch_init(context.n_batch, 0, 1)
    try:
        template = ChatTemplate(model.chat_template() or "")
        text = template.render(OPENING, tool_schemas(), add_generation_prompt=True)
        prompt = model.tokenize(text, add_special=model.add_bos)
        observation = (model.tokenize(" total = add(1, 2)") * 64)[:128]
        handle, mem, p = context.handle, llama_cpp.llama_get_memory(context.handle), len(prompt)
        context.decode(prompt, 0)
        llama_cpp.llama_memory_seq_cp(mem, 0, 3, -1, -1)

        def reset() -> None:
            for seq in range(3):
                llama_cpp.llama_memory_seq_rm(mem, seq, -1, -1)
                llama_cpp.llama_memory_seq_cp(mem, 3, seq, -1, -1)

        def run(entries: list[tuple[int, list[int]]]) -> None:
            n = 0
            for seq, tokens in entries:
                for i, token in enumerate(tokens):
                    batch.token[n], batch.pos[n], batch.n_seq_id[n] = token, p + i, 1
                    batch.seq_id[n][0] = seq
                    batch.logits[n] = i == len(tokens) - 1
                    n += 1
            batch.n_tokens = n
            if llama_cpp.llama_decode(handle, batch) != 0:
                raise RuntimeError("llama_decode failed")

        decodes = [(0, [42]), (1, [99])]
        ratios = []
        for _ in range(pairs):
            reset()
            started = time.perf_counter()
            run([*decodes, (2, observation)])
            mixed = time.perf_counter() - started
            reset()
            started = time.perf_counter()
            run([(2, observation)])
            run(decodes)
            ratios.append(mixed / (time.perf_counter() - started))
        return {"mixed_over_two_batches": statistics.median(ratios), "pairs": ratios}
    finally:
        llama_cpp.llama_batch_free(batch)
        context.close()
        model.close()


def one_repeat(args: argparse.Namespace, options: LlamaOptions, turn: int) -> dict[str, Any]:
    """Every measurement once, in an order rotated by `turn`; the ratios of this repeat."""
    jobs: list[tuple[str, Any]] = [
        *(
            (f"ours_{n}", lambda n=n: ours(args.model, n, args.tokens, options))
            for n in (1, 2, 3, 4)
        ),
        ("raw_alone_3", lambda: alone(args, 3)),
        ("raw_3", lambda: on_compute_thread(lambda: raw(args.model, 3, args.tokens, options))),
        ("sequential_3", lambda: sequential(args.model, 3, args.tokens, options)),
        ("separate_turns", lambda: turns(args.model, 3, args.tokens, options, False)),
        ("mixed_turns", lambda: turns(args.model, 3, args.tokens, options, True)),
        ("raw_mixing", lambda: on_compute_thread(lambda: raw_mixing(args.model, options, 5))),
    ]
    shift = turn % len(jobs)
    runs = {name: job() for name, job in jobs[shift:] + jobs[:shift]}
    base = runs["ours_1"]["aggregate_tok_s"]
    return {
        "aggregate_tok_s": {str(n): runs[f"ours_{n}"]["aggregate_tok_s"] for n in (1, 2, 3, 4)},
        "aggregate_ratio": {str(n): runs[f"ours_{n}"]["aggregate_tok_s"] / base for n in (2, 3, 4)},
        "raw_aggregate_tok_s_3": runs["raw_alone_3"]["aggregate_tok_s"],
        "vs_raw": runs["ours_3"]["aggregate_tok_s"] / runs["raw_alone_3"]["aggregate_tok_s"],
        "vs_raw_wall": runs["ours_3"]["wall_tok_s"] / runs["raw_alone_3"]["aggregate_tok_s"],
        "raw_in_process_vs_alone": runs["raw_3"]["aggregate_tok_s"]
        / runs["raw_alone_3"]["aggregate_tok_s"],
        "batched_vs_sequential": runs["ours_3"]["wall_s"] / runs["sequential_3"]["wall_s"],
        "mixed_vs_separate": runs["mixed_turns"]["wall_s"] / runs["separate_turns"]["wall_s"],
        "raw_mixed_vs_two_batches": runs["raw_mixing"]["mixed_over_two_batches"],
        "runs": runs,
    }


def median_of(repeats: list[dict[str, Any]], *keys: str) -> float:
    """The median over repeats of one (possibly nested) value."""
    values = []
    for one in repeats:
        value: Any = one
        for key in keys:
            value = value[key]
        values.append(float(value))
    return statistics.median(values)


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", type=Path)
    source.add_argument(
        "--tiny-qwen35",
        action="store_true",
        help="the tests' tiny random-weight qwen35 (hybrid) model, written to a temporary "
        "folder (run from the repository root: it imports tests/support)",
    )
    parser.add_argument("--tokens", type=int, default=64, help="tokens each attempt generates")
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--n-ctx", type=int, default=2048, help="context per attempt")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="JSON only (the default output)")
    parser.add_argument("--reference-alone", type=int, metavar="N", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    options = LlamaOptions(n_ctx=args.n_ctx, n_threads=args.threads)
    if args.reference_alone:  # `alone`'s child: the reference on this process's main thread
        print(json.dumps(raw(args.model, args.reference_alone, args.tokens, options)))
        return 0
    with tempfile.TemporaryDirectory(prefix="frogdesk-attempts-bench-") as scratch:
        if args.tiny_qwen35:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from tests.support.tiny_qwen35 import write_tiny_qwen35

            args.model = write_tiny_qwen35(Path(scratch) / "tiny-qwen35-F16.gguf")
        load_before = os.getloadavg()
        repeats = [one_repeat(args, options, turn) for turn in range(args.repeats)]
        load_after = os.getloadavg()
    ratios = (
        "vs_raw",
        "vs_raw_wall",
        "raw_in_process_vs_alone",
        "batched_vs_sequential",
        "mixed_vs_separate",
        "raw_mixed_vs_two_batches",
    )
    report = {
        "model": str(args.model),
        "tokens_per_attempt": args.tokens,
        "threads": options.threads,
        "repeats": args.repeats,
        "load_average_before": load_before,
        "load_average_after": load_after,
        "aggregate_tok_s": {
            str(n): median_of(repeats, "aggregate_tok_s", str(n)) for n in (1, 2, 3, 4)
        },
        "aggregate_ratio": {
            str(n): median_of(repeats, "aggregate_ratio", str(n)) for n in (2, 3, 4)
        },
        "raw_aggregate_tok_s_3": median_of(repeats, "raw_aggregate_tok_s_3"),
        **{name: median_of(repeats, name) for name in ratios},
        "per_repeat": {
            **{name: [one[name] for one in repeats] for name in ratios},
            "aggregate_ratio": [one["aggregate_ratio"] for one in repeats],
        },
        "runs": [one["runs"] for one in repeats],
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
