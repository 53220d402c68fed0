"""Stored HDR V2 deflate histograms read back by the core (`dbscale.core.histogram_figures`,
`stats/stored.rs`): checked against what the core reported for the same runs when it recorded
them, against blobs and a rank reference written here independently of it, and for exact merging.
"""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from types import ModuleType

import pytest

from dbscale.core import histogram_figures, merge_histograms
from dbscale.errors import ResultsError
from dbscale.results.points import PERCENTILES, latency_figures
from tests.synthetic import encode_histogram as _encode
from tests.synthetic import hdr_index as _index

DATA = Path(__file__).parent / "data" / "rust_histograms.json"
QUANTILES = list(PERCENTILES.values())


@pytest.fixture(autouse=True)
def _native(core: ModuleType) -> None:
    """Every test here reads histograms through the native module."""


def _highest_equivalent(index: int) -> int:
    """The largest value counted in bucket `index` (3 significant digits, unit 1 us)."""
    bucket = (index >> 10) - 1
    sub = (index & 1023) + 1024
    if bucket < 0:
        return index
    return ((sub + 1) << bucket) - 1


def _quantile_by_rank(values: list[int], quantile: float) -> int:
    """The crate's definition: the highest value equivalent to the value of the rank-th one."""
    ordered = sorted(values)
    rank = max(math.ceil(min(quantile, 1.0) * len(ordered)), 1)
    value = ordered[rank - 1]
    if quantile == 0.0:
        return (
            value
            if value < 2048
            else value >> (value.bit_length() - 11) << (value.bit_length() - 11)
        )
    return _highest_equivalent(_index(value))


def test_decoding_matches_the_rust_summary_exactly() -> None:
    runs = json.loads(DATA.read_text())
    assert runs
    for run in runs:
        summary = latency_figures(histogram_figures([run["histogram"]], QUANTILES))
        rust = run["latency_ms"]
        for key in ("count", "min", "p50", "p90", "p95", "p99", "p999", "max"):
            assert getattr(summary, key) == rust[key], key
        for key in ("mean", "stddev"):
            assert getattr(summary, key) == pytest.approx(rust[key], rel=1e-12), key
        assert summary.count == run["transactions"]


def test_round_trip_and_quantiles_within_three_digits() -> None:
    values = list(range(1, 20_001))
    figures = histogram_figures([_encode(values)], [0.5, 0.99])
    assert figures.count == 20_000
    assert figures.values[0] == pytest.approx(10.0, rel=1e-3)  # ms
    assert figures.values[1] == pytest.approx(19.8, rel=1e-3)
    assert figures.min == 0.001
    assert figures.max == pytest.approx(20.0, rel=1e-3)


def test_quantiles_match_the_rank_definition_in_any_order() -> None:
    values = [1 + (i * 7919) % 50_000 for i in range(5_000)] + [3_000_000]
    quantiles = [0.9, 0.0, 0.001, 0.5, 0.25, 0.5, 1.0, 0.999]
    figures = histogram_figures([_encode(values)], quantiles)
    expected = [_quantile_by_rank(values, q) / 1000.0 for q in quantiles]
    assert list(figures.values) == expected
    assert figures.values[1] == figures.min and figures.values[6] == figures.max
    empty = histogram_figures([], [0.5, 1.0])
    assert (empty.count, empty.values) == (0, (None, None))


def test_merging_is_exact_and_percentiles_are_not_averaged() -> None:
    fast = [100 + i % 50 for i in range(9_000)]
    slow = [5_000 + i for i in range(1_000)]
    merged = histogram_figures([_encode(fast), _encode(slow)], QUANTILES)
    together = histogram_figures([_encode(fast + slow)], QUANTILES)
    assert merged == together
    again = histogram_figures([merge_histograms([_encode(fast), _encode(slow)])], QUANTILES)
    assert again == together
    p99 = merged.values[QUANTILES.index(0.99)]
    averaged = (
        histogram_figures([_encode(fast)], [0.99]).values[0]
        + histogram_figures([_encode(slow)], [0.99]).values[0]
    ) / 2
    assert p99 is not None and averaged is not None
    assert p99 > 5.0 and abs(p99 - averaged) > 0.1


def test_reference_bucket_arithmetic() -> None:
    assert _highest_equivalent(_index(2047)) == 2047
    assert _highest_equivalent(_index(2048)) == 2049
    assert _highest_equivalent(_index(123_456)) >= 123_456


def test_garbage_is_a_results_error() -> None:
    with pytest.raises(ResultsError):
        histogram_figures(["not base64!"], [0.5])
    with pytest.raises(ResultsError):
        histogram_figures([base64.b64encode(b"\x00" * 60).decode()], [0.5])
    assert latency_figures(histogram_figures([], QUANTILES)).p99 is None
