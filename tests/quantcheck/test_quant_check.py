"""The quant check on real quants of the tiny qwen35 model, made with llama.cpp's quantizer."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from pathlib import Path

import numpy as np
import pytest

from frogdesk.quantcheck.check import CheckOptions, check_quants, compute_reference, score_against
from frogdesk.quantcheck.corpus import Corpus, load_corpus
from frogdesk.quantcheck.errors import CheckCancelled, CheckError
from frogdesk.quantcheck.files import (
    choose_reference,
    describe_result,
    latest_result,
    quant_label,
    shipped_corpus_version,
)
from frogdesk.quantcheck.report import CheckProgress, CheckReport
from frogdesk.quantcheck.store import (
    ReferenceKey,
    file_sha256,
    load_reference,
    load_results,
)

pytestmark = [pytest.mark.llama, pytest.mark.slow]

OPTIONS = CheckOptions(tokens=600, cases=1)


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("check-data")


@pytest.fixture(scope="module")
def first_report(qwen35_quants: dict[str, Path], data_dir: Path, corpus: Corpus) -> CheckReport:
    files = [qwen35_quants["Q8_0"], qwen35_quants["Q4_0"]]
    return check_quants(files, qwen35_quants["F16"], data_dir, OPTIONS, corpus=corpus)


def _key(path: Path, data_dir: Path, corpus: Corpus) -> ReferenceKey:
    return ReferenceKey(file_sha256(path, data_dir), corpus.version, corpus.digest, 512, 32, 600, 1)


def test_reference_row_has_zero_drift(
    first_report: CheckReport, qwen35_quants: dict[str, Path]
) -> None:
    ref = first_report.results[0]
    assert ref.file == str(qwen35_quants["F16"]) and ref.quant == "F16"
    assert ref.mean_kl == 0.0 and ref.p99_kl == 0.0
    assert ref.top1_agreement == 1.0
    assert ref.ppl == pytest.approx(ref.ref_ppl, rel=1e-9)
    assert ref.tokens == 600


def test_coarser_quant_drifts_more(first_report: CheckReport) -> None:
    by_quant = {r.quant: r for r in first_report.results}
    assert list(by_quant) == ["F16", "Q8_0", "Q4_0"]
    q8, q4 = by_quant["Q8_0"], by_quant["Q4_0"]
    assert 0.0 < q8.mean_kl < q4.mean_kl
    assert q8.p99_kl < q4.p99_kl
    assert q4.top1_agreement < q8.top1_agreement <= 1.0
    assert q8.ref_ppl == q4.ref_ppl == by_quant["F16"].ppl
    assert all(r.tokens == 600 and r.corpus_version == "2" for r in first_report.results)


def test_json_shape(first_report: CheckReport) -> None:
    data = first_report.to_json()
    assert data["corpus_version"] == "2" and data["reference"].endswith("F16.gguf")
    wanted = {"file", "quant", "mean_kl", "p99_kl", "top1_agreement", "ppl", "ref_ppl",
              "tool_call_fidelity", "tool_calls", "tokens"}  # fmt: skip
    for row in data["results"]:
        assert wanted <= set(row)
        assert sum(row["tool_calls"].values()) == row["tool_call_cases"]


def test_results_are_cached_and_reused(
    first_report: CheckReport, qwen35_quants: dict[str, Path], data_dir: Path, corpus: Corpus
) -> None:
    seen: list[CheckProgress] = []
    files = [qwen35_quants["Q4_0"], qwen35_quants["Q8_0"]]
    again = check_quants(
        files, qwen35_quants["F16"], data_dir, OPTIONS, corpus=corpus, progress=seen.append
    )
    assert seen == [], "a cached check loads no model"
    assert all(r.cached for r in again.results)
    fresh = {r.quant: dataclasses.replace(r, cached=False) for r in again.results}
    assert fresh == {r.quant: r for r in first_report.results}
    # A different token budget is a different measurement.
    other = check_quants(files[:1], qwen35_quants["F16"], data_dir, CheckOptions(tokens=300, cases=0),
                         corpus=corpus, progress=seen.append)  # fmt: skip
    assert seen and not any(r.cached for r in other.results)
    assert other.results[1].tokens == 300


def test_stored_reference_matches_a_fresh_one(
    first_report: CheckReport, qwen35_quants: dict[str, Path], data_dir: Path, corpus: Corpus
) -> None:
    stored = load_reference(data_dir, _key(qwen35_quants["F16"], data_dir, corpus))
    assert stored is not None and stored.positions == 600
    fresh, _ = compute_reference(qwen35_quants["F16"], corpus, OPTIONS)
    assert fresh.token_digest == stored.token_digest
    np.testing.assert_array_equal(fresh.argmax, stored.argmax)
    np.testing.assert_allclose(fresh.top_logp, stored.top_logp, atol=1e-5)
    np.testing.assert_allclose(fresh.target_logp, stored.target_logp, atol=1e-5)
    assert fresh.continuations == stored.continuations and len(stored.continuations) == 1
    q4 = qwen35_quants["Q4_0"]
    via_stored, calls_stored = score_against(q4, stored, corpus, OPTIONS)
    via_fresh, calls_fresh = score_against(q4, fresh, corpus, OPTIONS)
    for name, value in via_stored.summary().items():
        assert via_fresh.summary()[name] == pytest.approx(value, rel=1e-5, abs=1e-7)
    assert calls_stored == calls_fresh
    # The reference evaluated again, as a quant, against its stored self: no drift.
    itself, _ = score_against(qwen35_quants["F16"], stored, corpus, OPTIONS)
    assert itself.summary()["mean_kl"] == pytest.approx(0.0, abs=1e-6)
    assert itself.summary()["top1_agreement"] == 1.0


def test_a_different_model_is_refused(
    first_report: CheckReport, qwen35_quants: dict[str, Path], smollm2_gguf: Path,
    data_dir: Path, corpus: Corpus,
) -> None:  # fmt: skip
    stored = load_reference(data_dir, _key(qwen35_quants["F16"], data_dir, corpus))
    assert stored is not None
    with pytest.raises(CheckError, match="tokenizes the corpus differently"):
        score_against(smollm2_gguf, stored, corpus, CheckOptions(tokens=600, cases=0))


def test_cancel_stops_and_caches_nothing(qwen35_quants: dict[str, Path], tmp_path: Path) -> None:
    cancel = threading.Event()
    calls: list[CheckProgress] = []

    def progress(p: CheckProgress) -> None:
        calls.append(p)
        if p.phase == "scoring" and p.done > 0:
            cancel.set()

    with pytest.raises(CheckCancelled):
        check_quants([qwen35_quants["Q4_0"]], qwen35_quants["F16"], tmp_path,
                     CheckOptions(tokens=600, cases=0), progress=progress, cancel=cancel)  # fmt: skip
    assert load_results(tmp_path, file_sha256(qwen35_quants["Q4_0"], tmp_path)) == []
    assert load_results(tmp_path, file_sha256(qwen35_quants["F16"], tmp_path)) != []
    ref_updates = [p for p in calls if p.phase == "reference"]
    assert ref_updates[-1].done == ref_updates[-1].total == 600
    assert all(p.rate >= 0 for p in calls)


def test_default_reference_is_the_most_precise_sibling(
    qwen35_quants: dict[str, Path], smollm2_gguf: Path, tmp_path: Path
) -> None:
    for name, path in qwen35_quants.items():
        (tmp_path / f"frog-{name.lower()}.gguf").symlink_to(path)
    (tmp_path / "other-model-f32.gguf").symlink_to(smollm2_gguf)
    (tmp_path / "notes.gguf").write_text("not a model")
    chosen = choose_reference([tmp_path / "frog-q4_0.gguf"])
    assert chosen.name == "frog-f16.gguf"
    assert choose_reference([tmp_path / "frog-q4_0.gguf", tmp_path / "frog-q8_0.gguf"]) == chosen
    assert [quant_label(p) for p in qwen35_quants.values()] == ["F16", "Q8_0", "Q4_0"]
    assert quant_label(tmp_path / "notes.gguf") == "unknown"


def test_list_line_reads_the_cache_without_hashing(
    first_report: CheckReport, qwen35_quants: dict[str, Path], data_dir: Path, tmp_path: Path
) -> None:
    line = describe_result(latest_result(data_dir, qwen35_quants["Q4_0"]))
    assert line.startswith("KL ") and "vs F16" in line and "local measurement" in line
    unmeasured = tmp_path / "copy.gguf"
    unmeasured.write_bytes(qwen35_quants["Q4_0"].read_bytes())
    assert describe_result(latest_result(data_dir, unmeasured)) == "not measured"


@pytest.mark.parametrize("damage", ["[]", '{"%s": 5}', '{"%s": {"size": 0, "sha256": 1}}', "{"])
def test_a_damaged_checksum_cache_is_rebuilt(tmp_path: Path, damage: str) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + bytes(100))
    expected = hashlib.sha256(model.read_bytes()).hexdigest()
    assert file_sha256(model, tmp_path) == expected  # control: the cache as written
    index = next(tmp_path.rglob("sha256.json"))
    index.write_text(damage.replace("%s", str(model.resolve())))
    assert file_sha256(model, tmp_path) == expected
    assert json.loads(index.read_text())[str(model.resolve())]["sha256"] == expected


def test_a_result_on_an_older_corpus_says_it_is_not_comparable() -> None:
    result = {
        "mean_kl": 0.01,
        "p99_kl": 0.1,
        "top1_agreement": 0.95,
        "reference_quant": "Q8_0",
        "date": "2026-11-30T10:00:00",
        "tool_call_fidelity": 1.0,
    }
    current = describe_result({**result, "corpus_version": shipped_corpus_version()})
    older = describe_result({**result, "corpus_version": "1"})
    assert "not comparable" not in current and current.endswith("local measurement)")
    assert "on corpus v1: not comparable" in older and "models check" in older
