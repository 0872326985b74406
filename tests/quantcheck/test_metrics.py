"""The quant check's arithmetic on hand-made distributions."""

from __future__ import annotations

import numpy as np
import pytest

from frogdesk.quantcheck.evaluate import log_softmax
from frogdesk.quantcheck.metrics import (
    MetricAccumulator,
    called_tool,
    compact,
    kl_to_compact,
    tool_call_fidelity,
)


def _random_logp(rows: int, vocab: int, seed: int, scale: float = 3.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return log_softmax((rng.standard_normal((rows, vocab)) * scale).astype(np.float32))


def _exact_kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    p64, q64 = p.astype(np.float64), q.astype(np.float64)
    out: np.ndarray = (np.exp(p64) * (p64 - q64)).sum(axis=-1)
    return out


def test_a_distribution_against_itself_has_zero_kl() -> None:
    p = _random_logp(20, 300, seed=1)
    ids, top, rest, _ = compact(p, 16)
    assert np.all(kl_to_compact(ids, top, rest, p) == 0.0)


def test_with_the_whole_vocabulary_kept_the_kl_is_exact() -> None:
    p = _random_logp(10, 50, seed=2)
    q = _random_logp(10, 50, seed=3)
    ids, top, rest, _ = compact(p, 50)
    np.testing.assert_allclose(
        kl_to_compact(ids, top, rest, q), _exact_kl(p, q), rtol=1e-4, atol=1e-5
    )


def test_top_k_kl_is_a_lower_bound_that_tightens_with_k() -> None:
    p = _random_logp(30, 400, seed=4)
    q = _random_logp(30, 400, seed=5)
    exact = _exact_kl(p, q)
    previous = np.zeros_like(exact)
    for k in (4, 32, 128):
        ids, top, rest, _ = compact(p, k)
        kl = kl_to_compact(ids, top, rest, q)
        assert np.all(kl <= exact + 1e-5)
        assert kl.mean() >= previous.mean() - 1e-6
        previous = kl
    assert previous.mean() > 0.5 * exact.mean()


def test_compact_orders_top_k_and_keeps_the_rest_mass() -> None:
    p = _random_logp(5, 100, seed=6)
    ids, top, rest, argmax = compact(p, 8)
    assert np.all(np.diff(top, axis=-1) <= 0)
    assert np.array_equal(ids[:, 0], argmax)
    np.testing.assert_allclose(np.exp(top).sum(-1) + np.exp(rest), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(np.take_along_axis(p, ids.astype(np.int64), -1), top)


def test_accumulator_summary() -> None:
    p = _random_logp(8, 40, seed=7)
    q = _random_logp(8, 40, seed=8)
    targets = np.arange(8, dtype=np.int32)
    ids, top, rest, argmax = compact(p, 40)
    target_logp = p[np.arange(8), targets]
    acc = MetricAccumulator()
    acc.add(q[:5], targets[:5], ids[:5], top[:5], rest[:5], argmax[:5], target_logp[:5])
    acc.add(q[5:], targets[5:], ids[5:], top[5:], rest[5:], argmax[5:], target_logp[5:])
    s = acc.summary()
    assert acc.count == 8
    assert s["mean_kl"] == pytest.approx(_exact_kl(p, q).mean(), rel=1e-4)
    assert s["top1_agreement"] == pytest.approx(np.mean(q.argmax(-1) == p.argmax(-1)))
    assert s["ppl"] == pytest.approx(
        np.exp(-q[np.arange(8), targets].astype(np.float64).mean()), rel=1e-6
    )
    assert s["ref_ppl"] == pytest.approx(np.exp(-target_logp.astype(np.float64).mean()), rel=1e-6)
    assert s["p99_kl"] >= s["mean_kl"]
    with pytest.raises(ValueError):
        MetricAccumulator().summary()


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("<tool_call>\n<function=Read>\n<parameter=file_path>\na.py\n</parameter>", "Read"),
        ("  \n<tool_call>\n<function=Bash>\n", "Bash"),
        ("I will read it.\n<tool_call>\n<function=Read>\n", None),
        ("<tool_call>\n<function=>\n", None),
        ("<tool_call>\n<function=Read", None),
        ("", None),
    ],
)
def test_called_tool(text: str, tool: str | None) -> None:
    assert called_tool(text) == tool


def test_tool_call_fidelity_counts_only_cases_where_the_reference_calls() -> None:
    call = "<tool_call>\n<function={}>\n"
    reference = [call.format("Read"), call.format("Bash"), "no call", call.format("Edit")]
    quant = [call.format("Read"), call.format("Read"), call.format("Glob"), "garbage"]
    share, cases = tool_call_fidelity(reference, quant)
    assert share == pytest.approx(1 / 3) and cases == 3
    assert tool_call_fidelity(reference, reference) == (1.0, 3)
    assert tool_call_fidelity(["x", "y"], [call.format("Read"), "y"]) == (None, 0)
    with pytest.raises(ValueError):
        tool_call_fidelity(["a"], [])
