"""HDR V2 deflate decoding, checked against what the Rust core reported for the same runs, and
exact merging."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path

import pytest

from dbscale.errors import ResultsError
from dbscale.stats.hdr import HdrHistogram, HdrLayout, latency_summary_ms, merge
from tests.synthetic import encode_histogram as _encode
from tests.synthetic import hdr_index as _index

DATA = Path(__file__).parent / "data" / "rust_histograms.json"
LAYOUT = HdrLayout(lowest=1, highest=3_600_000_000, significant_digits=3)


def test_decoding_matches_the_rust_summary_exactly() -> None:
    runs = json.loads(DATA.read_text())
    assert runs
    for run in runs:
        summary = latency_summary_ms(HdrHistogram.from_base64(run["histogram"]))
        rust = run["latency_ms"]
        for key in ("count", "min", "p50", "p90", "p95", "p99", "p999", "max"):
            assert summary[key] == rust[key], key
        for key in ("mean", "stddev"):
            assert summary[key] == pytest.approx(rust[key], rel=1e-12), key
        assert summary["count"] == run["transactions"]


def test_round_trip_and_quantiles_within_three_digits() -> None:
    values = list(range(1, 20_001))
    histogram = HdrHistogram.from_base64(_encode(values))
    assert histogram.total_count == 20_000
    assert histogram.value_at_quantile(0.5) == pytest.approx(10_000, rel=1e-3)
    assert histogram.value_at_quantile(0.99) == pytest.approx(19_800, rel=1e-3)
    assert histogram.min() == 1
    assert histogram.max() == pytest.approx(20_000, rel=1e-3)


def _quantile_by_rank(histogram: HdrHistogram, quantile: float) -> int:
    """The crate's definition, walked bucket by bucket for one quantile (the reference)."""
    rank = max(math.ceil(min(quantile, 1.0) * histogram.total_count), 1)
    running = 0
    for index in sorted(histogram.counts):
        running += histogram.counts[index]
        if running >= rank:
            value = histogram.layout.value_for(index)
            if quantile == 0.0:
                return histogram.layout.lowest_equivalent(value)
            return histogram.layout.highest_equivalent(value)
    return 0


def test_one_walk_quantiles_match_the_rank_definition_in_any_order() -> None:
    values = [1 + (i * 7919) % 50_000 for i in range(5_000)] + [3_000_000]
    histogram = HdrHistogram.from_base64(_encode(values))
    quantiles = [0.9, 0.0, 0.001, 0.5, 0.25, 0.5, 1.0, 0.999]
    walked = histogram.values_at_quantiles(quantiles)
    assert walked == [_quantile_by_rank(histogram, q) for q in quantiles]
    assert walked[1] == histogram.min() and walked[6] == histogram.max()
    assert HdrHistogram(LAYOUT).values_at_quantiles([0.5, 1.0]) == [0, 0]


def test_merging_is_exact_and_percentiles_are_not_averaged() -> None:
    fast = [100 + i % 50 for i in range(9_000)]
    slow = [5_000 + i for i in range(1_000)]
    merged = merge([_encode(fast), _encode(slow)])
    assert merged is not None
    together = HdrHistogram.from_base64(_encode(fast + slow))
    assert merged.counts == together.counts
    p99 = merged.value_at_quantile(0.99)
    averaged = (
        HdrHistogram.from_base64(_encode(fast)).value_at_quantile(0.99)
        + HdrHistogram.from_base64(_encode(slow)).value_at_quantile(0.99)
    ) / 2
    assert p99 > 5_000 and abs(p99 - averaged) > 100


def test_layout_arithmetic() -> None:
    assert LAYOUT.sub_bucket_half_count == 1024
    assert LAYOUT.value_for(_index(123_456)) == LAYOUT.lowest_equivalent(123_456)
    assert LAYOUT.highest_equivalent(2047) == 2047
    assert LAYOUT.highest_equivalent(2048) == 2049


def test_garbage_is_a_results_error() -> None:
    with pytest.raises(ResultsError):
        HdrHistogram.from_base64("not base64!")
    with pytest.raises(ResultsError):
        HdrHistogram.from_base64(base64.b64encode(b"\x00" * 60).decode())
    assert merge([]) is None
    assert latency_summary_ms(None)["p99"] is None
