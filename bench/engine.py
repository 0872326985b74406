"""Benchmark: a scripted multi-turn agent conversation three ways on one model; prints JSON.

1. FrogDesk's `llama` backend (token transcript, only new tokens decoded);
2. llama-cpp-python's `Llama.create_chat_completion` fed the same messages;
3. a raw low-level decode loop with the same sampler (the decode-speed reference).

`new_tokens` of a turn is how much the conversation grew since the last token the model
evaluated (the whole prompt on turn 1); `eval_ratio` is evaluated over new, summed.

With `--shaped`, the same run adds a `shaped` section from bench/shaped.py's measurements on
the FrogNano-shaped model (random weights, Q4_K_M, generated on first use under
`--shaped-cache-dir`): FrogDesk's decode and prefill rates against llama.cpp's own low-level
loop (`decode_ratio`, `prefill_ratio`) and the memory estimate's error against llama.cpp's
buffers at `--shaped-contexts` (8K, 32K and 131K by default). Run it from the repository
root as `python -m bench.engine` (bench/shaped.py imports tests/support).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from frogdesk.engine.chat import GenerationSettings, Message, Reply, ToolCall
from frogdesk.engine.llama.backend import LlamaBackend
from frogdesk.engine.llama.decode.compute_thread import on_compute_thread
from frogdesk.engine.llama.decode.context import LlamaContext
from frogdesk.engine.llama.decode.sampling import Sampler, resolve
from frogdesk.engine.llama.load.options import LlamaOptions
from frogdesk.leaf.schemas import SYSTEM_PROMPT, tool_schemas
from frogdesk.models.gguf_info import inspect_gguf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/support: shared writers
from tests.support.frognano_shape import DEFAULT_CACHE, shaped_model

TASK = "The test tests/test_calc.py::test_divide fails with ZeroDivisionError. Fix calc.py."


def observation(turn: int) -> str:
    """A Read-style result of about 300 tokens, different every turn."""
    lines = [f"calc_{turn}.py"]
    for i in range(1, 41):
        lines.append(f"{i}. result_{i} = divide(total_{turn}, count_{i})")
    return "\n".join(lines)


def run_ours(
    args: argparse.Namespace,
) -> tuple[dict[str, Any], list[Message], list[int], list[tuple[int, int]]]:
    """Our backend over the scripted conversation: its numbers, the messages, the tokens."""
    backend = LlamaBackend(args.model, LlamaOptions(n_ctx=args.n_ctx, n_threads=args.threads))
    tools = tool_schemas()
    messages = [Message("system", SYSTEM_PROMPT), Message("user", TASK)]
    turns: list[dict[str, int]] = []
    ttft: list[float] = []
    decode_tokens = 0
    decode_s = prefill_s = 0.0
    known = 0
    spans: list[tuple[int, int]] = []  # per turn: prompt length, tokens sampled
    try:
        for turn in range(args.turns):
            settings = GenerationSettings(max_tokens=args.max_tokens, seed=args.seed + turn)
            reply = Reply()
            for event in backend.generate(messages, tools, settings):
                reply.add(event)
            usage = reply.usage
            assert usage is not None
            turns.append(
                {"new_tokens": usage.prompt_tokens - known,
                 "evaluated_tokens": usage.evaluated_tokens}
            )  # fmt: skip
            known = usage.prompt_tokens + usage.completion_tokens - 1
            spans.append((usage.prompt_tokens, usage.completion_tokens))
            ttft.append(usage.ttft_seconds * 1000)
            decode_tokens += max(0, usage.completion_tokens - 1)
            decode_s += usage.decode_seconds
            prefill_s += usage.prefill_seconds
            calls = tuple(ToolCall(c.name, c.arguments, id=f"c{turn}") for c in reply.tool_calls)
            messages += [
                Message("assistant", reply.content, reply.reasoning, calls),
                Message("tool", observation(turn)),
            ]
        info = {
            "model": str(args.model),
            "arch": backend.model.architecture,
            "hybrid": backend.model.is_hybrid,
            "turns": turns,
            "decode_tok_s": decode_tokens / decode_s if decode_s else 0.0,
            "prefill_tok_s": sum(t["evaluated_tokens"] for t in turns) / prefill_s,
            "ttft_ms_per_turn": statistics.median(ttft),
        }
        tokens = backend.transcript.tokens[: backend.transcript.n_past]
        return info, messages, tokens, spans
    finally:
        backend.close()


def run_baseline(args: argparse.Namespace, messages: list[Message]) -> list[int]:
    """Prompt tokens `Llama.create_chat_completion` evaluates on each turn of the same chat.

    It generates its own replies (as it would in an agent); the next turn still sends ours.
    """
    from llama_cpp import Llama

    llm = Llama(str(args.model), n_ctx=args.n_ctx, n_threads=args.threads, verbose=False)
    evaluated: list[list[int]] = []
    original_eval = llm.eval

    def counting_eval(tokens: Any) -> None:
        evaluated[-1].append(len(tokens))
        original_eval(tokens)

    llm.eval = counting_eval  # type: ignore[method-assign]
    tools: Any = tool_schemas()
    per_turn = []
    try:
        for turn in range(args.turns):
            history = messages[: 2 + 2 * turn]
            evaluated.append([])
            llm.create_chat_completion(
                messages=[m.to_template_dict() for m in history],  # type: ignore[misc]
                tools=tools,
                max_tokens=args.max_tokens,
                temperature=0.6,
                seed=args.seed,
            )
            per_turn.append(evaluated[-1][0] if evaluated[-1] else 0)
        return per_turn
    finally:
        llm.close()


def run_raw(args: argparse.Namespace, tokens: list[int], spans: list[tuple[int, int]]) -> float:
    """Tokens per second of a bare sample/decode loop with the same sampler settings.

    For each turn it starts from the same prompt (prefilled untimed, in a fresh context) and
    times as many sample + decode steps as ours took there, so attention spans the same
    lengths; like ours, the first token (time to first token) is not counted.
    """
    backend = LlamaBackend(args.model, LlamaOptions(n_ctx=args.n_ctx, n_threads=args.threads))
    model = backend.model
    steps = 0
    elapsed = 0.0
    try:
        for prompt_len, sampled in spans:
            ctx = LlamaContext(model, LlamaOptions(n_ctx=args.n_ctx, n_threads=args.threads))
            sampler = Sampler(
                model, resolve(GenerationSettings(seed=args.seed), model.sampling_defaults())
            )
            try:
                ctx.decode(tokens[:prompt_len], 0)
                # the whole loop on the compute thread, where ours decodes: no handoff per
                # token, and one OpenMP team (engine/llama/decode/compute_thread.py)
                elapsed += on_compute_thread(
                    functools.partial(_timed_steps, ctx, sampler, prompt_len, sampled - 1)
                )
                steps += sampled - 1
            finally:
                sampler.close()
                ctx.close()
        return steps / elapsed if elapsed else 0.0
    finally:
        backend.close()


def _timed_steps(ctx: LlamaContext, sampler: Sampler, pos: int, steps: int) -> float:
    """Seconds for `steps` sample + decode steps after the prompt's logits (the first sample
    is the time to first token, not counted)."""
    token = sampler.sample(ctx.handle)
    start = time.perf_counter()
    for _ in range(steps):
        ctx.decode_one(token, pos)
        pos += 1
        token = sampler.sample(ctx.handle)
    return time.perf_counter() - start


def run_shaped(args: argparse.Namespace) -> dict[str, Any]:
    """bench/shaped.py's speed and memory sections on the FrogNano-shaped model, summarised.

    bench/shaped.py runs in a process of its own (the 2.5 GB model is loaded apart from this
    run's). `decode_ratio` and `prefill_ratio` are FrogDesk's median rate over the reference
    loop's (interleaved, same weights and prompt tokens); `memory_error` is the estimate over
    the sum of llama.cpp's buffers, minus one, per context size, loaded as FrogDesk loads
    the file (mapped or read: `memory_loaded_with`).
    """
    path = shaped_model(args.shaped_cache_dir)
    cmd = [
        sys.executable, "-m", "bench.shaped", "--model", str(path), "--only", "memory,speed",
        "--threads", str(args.threads), "--reps", str(args.shaped_reps),
        "--prompt-words", str(args.shaped_prompt_words), "--decode", str(args.shaped_decode),
        "--n-ctx", str(args.n_ctx), "--contexts", ",".join(map(str, args.shaped_contexts)),
        "--json",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench.shaped failed ({done.returncode}):\n{done.stderr[-4000:]}")
    shaped = json.loads(done.stdout)
    speed, memory = shaped["speed"], shaped["memory"]
    info = inspect_gguf(path)
    mapped = LlamaOptions(n_threads=args.threads).mmap_for(info.repackable_bytes, info.tensor_bytes)
    chosen = "mmap" if mapped else "no_mmap"
    return {
        "model": str(path),
        "decode_ratio": speed["decode_ratio"],
        "prefill_ratio": speed["prefill_ratio"],
        "decode_tok_s": speed["median_tok_s"].get("ours_tg"),
        "raw_decode_tok_s": speed["median_tok_s"].get("raw_tg"),
        "prefill_tok_s": speed["median_tok_s"]["ours_pp"],
        "raw_prefill_tok_s": speed["median_tok_s"]["raw_pp"],
        "memory_error": {ctx: row["error"] for ctx, row in memory[chosen].items()},
        "memory_loaded_with": chosen,
        "speed": speed,
        "memory": memory,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print JSON only (the default)")
    parser.add_argument("--shaped", action="store_true",
                        help="add the FrogNano-shaped model's rates and memory estimate error")  # fmt: skip
    parser.add_argument("--shaped-cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--shaped-reps", type=int, default=3, help="interleaved runs per side")
    parser.add_argument("--shaped-prompt-words", type=int, default=400)
    parser.add_argument("--shaped-decode", type=int, default=24, help="tokens decoded per run")
    parser.add_argument("--shaped-contexts", type=lambda s: [int(x) for x in s.split(",")],
                        default=[8192, 32768, 131072])  # fmt: skip
    args = parser.parse_args(argv)
    ours, messages, tokens, spans = run_ours(args)
    raw = run_raw(args, tokens, spans)
    baseline = run_baseline(args, messages)
    turns = ours["turns"]
    for turn, base in zip(turns, baseline, strict=True):
        turn["baseline_evaluated_tokens"] = base
    new = sum(t["new_tokens"] for t in turns)
    result = {
        **ours,
        "eval_ratio": sum(t["evaluated_tokens"] for t in turns) / new,
        "baseline_eval_ratio": sum(baseline) / new,
        "raw_decode_tok_s": raw,
        "decode_ratio": ours["decode_tok_s"] / raw,
    }
    if args.shaped:
        result["shaped"] = run_shaped(args)
    print(json.dumps(result, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
