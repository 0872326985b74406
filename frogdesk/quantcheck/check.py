"""The quant check: how far each quant's next-token predictions drift from a reference quant's."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from frogdesk.quantcheck.corpus import Corpus, load_corpus
from frogdesk.quantcheck.errors import CheckCancelled, CheckError
from frogdesk.quantcheck.evaluate import EvalOptions, ModelEvaluator
from frogdesk.quantcheck.files import quant_label
from frogdesk.quantcheck.metrics import (
    MetricAccumulator,
    compact,
    tool_call_fidelity,
    tool_call_outcomes,
)
from frogdesk.quantcheck.report import CheckProgress, CheckReport, ProgressFn, QuantResult
from frogdesk.quantcheck.store import (
    ReferenceKey,
    ReferenceRecord,
    file_sha256,
    load_reference,
    load_results,
    save_reference,
    save_result,
)

STOP_AFTER_CALL = "</function>"


@dataclass(frozen=True)
class CheckOptions:
    """What a check scores and how: token and case budgets, window, top-k, llama.cpp options."""

    tokens: int | None = None
    cases: int | None = None
    window: int = 512
    top_k: int = 32
    max_call_tokens: int = 32
    eval: EvalOptions = field(default_factory=EvalOptions)


class _Run:
    """Progress and cancellation for one phase of work."""

    def __init__(
        self,
        file: str,
        phase: str,
        total: int,
        progress: ProgressFn | None,
        cancel: threading.Event | None,
    ) -> None:
        self.file, self.phase, self.total = file, phase, total
        self._progress, self._cancel = progress, cancel
        self._start = time.monotonic()
        self.done = 0
        self.advance(0)

    def advance(self, n: int) -> None:
        if self._cancel is not None and self._cancel.is_set():
            raise CheckCancelled(f"check cancelled during {self.phase} of {self.file}")
        self.done += n
        if self._progress is not None:
            elapsed = max(time.monotonic() - self._start, 1e-9)
            rate = self.done / elapsed
            eta = (self.total - self.done) / rate if rate > 0 else None
            self._progress(CheckProgress(self.file, self.phase, self.done, self.total, rate, eta))


def plan_windows(
    evaluator: ModelEvaluator, corpus: Corpus, window: int, tokens: int | None
) -> list[list[int]]:
    """Token windows in a fixed order (round-robin over documents), capped at `tokens` positions."""
    per_doc: list[list[list[int]]] = []
    for doc in corpus.documents:
        ids = evaluator.tokenize(doc.text)
        per_doc.append(
            [
                ids[i : i + window]
                for i in range(0, len(ids), window)
                if len(ids[i : i + window]) > 1
            ]
        )
    ordered: list[list[int]] = []
    for round_index in range(max((len(w) for w in per_doc), default=0)):
        ordered.extend(windows[round_index] for windows in per_doc if round_index < len(windows))
    if tokens is None:
        return ordered
    capped: list[list[int]] = []
    left = tokens
    for win in ordered:
        if left <= 0:
            break
        capped.append(win[: left + 1])
        left -= len(capped[-1]) - 1
    return capped


def _digest(windows: list[list[int]]) -> str:
    digest = hashlib.sha256()
    for win in windows:
        digest.update(np.asarray(win, dtype=np.int32).tobytes() + b"|")
    return digest.hexdigest()


def _chunks(
    evaluator: ModelEvaluator, windows: list[list[int]], run: _Run
) -> Iterator[tuple[int, Any, Any]]:
    """(first global position, quant log-probs, targets) for every scored chunk."""
    position = 0
    for win in windows:
        for offset, logp in evaluator.window_logprobs(win):
            targets = np.asarray(win[offset + 1 : offset + 1 + len(logp)], dtype=np.int32)
            yield position + offset, logp, targets
            run.advance(len(logp))
        position += len(win) - 1


def _continuations(
    evaluator: ModelEvaluator, corpus: Corpus, options: CheckOptions, run: _Run
) -> list[str]:
    out: list[str] = []
    for case in corpus.cases[: run.total]:
        prompt = evaluator.tokenize(case.prefix)
        out.append(evaluator.greedy(prompt, options.max_call_tokens, STOP_AFTER_CALL))
        run.advance(1)
    return out


def _n_cases(corpus: Corpus, options: CheckOptions) -> int:
    n = len(corpus.cases)
    return n if options.cases is None else max(0, min(n, options.cases))


def _result_key(ref_key: ReferenceKey) -> dict[str, Any]:
    key = asdict(ref_key)
    key["reference_sha256"] = key.pop("sha256")
    return key


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def _summarize(
    path: Path,
    acc: MetricAccumulator,
    fidelity: tuple[float | None, int],
    reference: Path,
    corpus: Corpus,
    outcomes: dict[str, int],
) -> QuantResult:
    s = acc.summary()
    return QuantResult(
        file=str(path),
        quant=quant_label(path),
        mean_kl=s["mean_kl"],
        p99_kl=s["p99_kl"],
        top1_agreement=s["top1_agreement"],
        ppl=s["ppl"],
        ref_ppl=s["ref_ppl"],
        tool_call_fidelity=fidelity[0],
        tool_call_cases=fidelity[1],
        tool_calls=outcomes,
        tokens=acc.count,
        reference=str(reference),
        reference_quant=quant_label(reference),
        corpus_version=corpus.version,
        date=_now(),
    )


def compute_reference(
    path: Path,
    corpus: Corpus,
    options: CheckOptions,
    *,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> tuple[ReferenceRecord, MetricAccumulator]:
    """Score the corpus with the reference: its compact record, and its own (zero-drift) row."""
    with ModelEvaluator(path, options.eval) as ev:
        windows = plan_windows(ev, corpus, options.window, options.tokens)
        total = sum(len(w) - 1 for w in windows)
        if total == 0:
            raise CheckError("the corpus gave no tokens to score")
        ids = np.zeros((total, options.top_k), dtype=np.int32)
        top = np.zeros((total, options.top_k), dtype=np.float32)
        rest = np.zeros(total, dtype=np.float32)
        argmax = np.zeros(total, dtype=np.int32)
        target = np.zeros(total, dtype=np.float32)
        acc = MetricAccumulator()
        run = _Run(path.name, "reference", total, progress, cancel)
        for start, logp, targets in _chunks(ev, windows, run):
            end = start + len(logp)
            c_ids, c_top, c_rest, c_arg = compact(logp, options.top_k)
            ids[start:end], top[start:end], rest[start:end], argmax[start:end] = (
                c_ids,
                c_top,
                c_rest,
                c_arg,
            )
            target[start:end] = np.take_along_axis(
                logp, targets.astype(np.int64)[:, None], axis=-1
            )[:, 0]
            acc.add(logp, targets, c_ids, c_top, c_rest, c_arg, target[start:end])
        calls = _Run(path.name, "tool calls", _n_cases(corpus, options), progress, cancel)
        continuations = _continuations(ev, corpus, options, calls)
    record = ReferenceRecord(_digest(windows), ids, top, rest, argmax, target, continuations)
    return record, acc


def score_against(
    path: Path,
    record: ReferenceRecord,
    corpus: Corpus,
    options: CheckOptions,
    *,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> tuple[MetricAccumulator, list[str]]:
    """Score one file against a stored reference record (one model in memory at a time)."""
    with ModelEvaluator(path, options.eval) as ev:
        windows = plan_windows(ev, corpus, options.window, options.tokens)
        if _digest(windows) != record.token_digest:
            raise CheckError(
                f"{path.name} tokenizes the corpus differently from the reference: not the same model"
            )
        acc = MetricAccumulator()
        run = _Run(path.name, "scoring", record.positions, progress, cancel)
        for start, logp, targets in _chunks(ev, windows, run):
            sl = slice(start, start + len(logp))
            acc.add(
                logp,
                targets,
                record.top_ids[sl],
                record.top_logp[sl],
                record.rest_logp[sl],
                record.argmax[sl],
                record.target_logp[sl],
            )
        calls = _Run(path.name, "tool calls", len(record.continuations), progress, cancel)
        continuations = _continuations(ev, corpus, options, calls)
    return acc, continuations


def check_quants(
    files: list[Path],
    reference: Path,
    data_dir: Path,
    options: CheckOptions | None = None,
    *,
    corpus: Corpus | None = None,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    use_cache: bool = True,
) -> CheckReport:
    """Measure every file against reference; results and the reference's record are cached."""
    options = options or CheckOptions()
    corpus = corpus or load_corpus()
    ref_sha = file_sha256(reference, data_dir)
    key = ReferenceKey(
        ref_sha,
        corpus.version,
        corpus.digest,
        options.window,
        options.top_k,
        -1 if options.tokens is None else options.tokens,
        -1 if options.cases is None else _n_cases(corpus, options),
    )
    result_key = _result_key(key)
    ordered = [reference] + [f for f in files if f.resolve() != reference.resolve()]
    results: list[QuantResult] = []
    record = load_reference(data_dir, key) if use_cache else None
    for path in ordered:
        sha = ref_sha if path is reference else file_sha256(path, data_dir)
        cached = _cached(data_dir, sha, result_key, path) if use_cache else None
        if cached is not None:
            results.append(cached)
            continue
        if record is None:
            record, acc = compute_reference(
                reference, corpus, options, progress=progress, cancel=cancel
            )
            save_reference(data_dir, key, record)
            if path is reference:
                fidelity = tool_call_fidelity(record.continuations, record.continuations)
                outcomes = tool_call_outcomes(
                    record.continuations, record.continuations, corpus.tools
                )
                results.append(
                    _store(
                        data_dir,
                        sha,
                        result_key,
                        _summarize(path, acc, fidelity, reference, corpus, outcomes),
                    )
                )
                continue
        acc, continuations = score_against(
            path, record, corpus, options, progress=progress, cancel=cancel
        )
        fidelity = tool_call_fidelity(record.continuations, continuations)
        outcomes = tool_call_outcomes(record.continuations, continuations, corpus.tools)
        summary = _summarize(path, acc, fidelity, reference, corpus, outcomes)
        results.append(_store(data_dir, sha, result_key, summary))
    return CheckReport(str(reference), quant_label(reference), corpus.version, results)


def _store(data_dir: Path, sha: str, key: dict[str, Any], result: QuantResult) -> QuantResult:
    save_result(data_dir, sha, {"key": key, "result": result.to_json()})
    return result


def _cached(data_dir: Path, sha: str, key: dict[str, Any], path: Path) -> QuantResult | None:
    for entry in reversed(load_results(data_dir, sha)):
        if entry.get("key") == key:
            try:
                row = dict(entry["result"])
                row["file"] = str(path)
                return QuantResult(**row, cached=True)
            except (KeyError, TypeError):
                return None
    return None
