"""Scale-out's exact split of a run into workers' shares."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dbscale.core.config import RunConfig, TargetConfig, WorkloadConfig
from dbscale.core.result import Interval
from dbscale.errors import ConfigError
from dbscale.scaleout.split import split_evenly, split_run, worker_seed


def config(**fields: object) -> RunConfig:
    base = {"target": TargetConfig(url="postgresql://u@h/db"),
            "workload": WorkloadConfig(name="tpcc", params={"connections": 5})}  # fmt: skip
    return RunConfig(**{**base, **fields})  # type: ignore[arg-type]


@given(st.integers(min_value=0, max_value=100_000), st.integers(min_value=1, max_value=64))
def test_shares_add_up_and_differ_by_one_at_most(total: int, parts: int) -> None:
    shares = split_evenly(total, parts)
    assert sum(shares) == total and len(shares) == parts
    assert max(shares) - min(shares) <= 1


def test_a_run_split_over_three_workers() -> None:
    run = config(clients=10, threads=4, rate_tps=1000.0, seed=42)
    shares = split_run(run, 3, 42)
    assert [s.clients for s in shares] == [4, 3, 3]
    assert [s.first_client for s in shares] == [0, 4, 7]  # contiguous ids: the run's terminals
    assert all(s.config.share is not None and s.config.share.total_clients == 10 for s in shares)
    assert [s.config.threads for s in shares] == [2, 1, 1]
    rates = [s.config.rate_tps for s in shares]
    assert rates == pytest.approx([400.0, 300.0, 300.0]) and sum(rates) == pytest.approx(1000.0)
    assert [s.config.workload.params["connections"] for s in shares] == [2, 2, 1]
    seeds = [s.config.seed for s in shares]
    assert len(set(seeds)) == 3 and seeds == [s.config.seed for s in split_run(run, 3, 42)]
    assert worker_seed(42, 0) != worker_seed(43, 0)


def test_more_workers_than_clients_is_refused() -> None:
    with pytest.raises(ConfigError, match="more than the run's 2 clients"):
        split_run(config(clients=2), 3, 1)


def _interval(index: int, latencies_us: list[int]) -> Interval:
    """A worker's interval as its polls bring it, the histogram made by HdrHistogram's package."""
    from hdrh.histogram import HdrHistogram

    histogram = HdrHistogram(1, 3_600_000_000, 3)
    for value in latencies_us:
        histogram.record_value(value)
    return Interval.model_validate(
        {"t_s": index + 1.0, "transactions": len(latencies_us), "failed": 0, "errors": 0,
         "retries": 0, "clients_connected": 2, "queries": {"total": len(latencies_us)},
         "detail": {"index": index, "histogram": histogram.encode().decode(),
                    "lag_sum_us": 0, "lag_max_us": 0, "lag_count": 0}}
    )  # fmt: skip


@pytest.mark.native
def test_the_live_view_merges_each_interval_once_when_every_worker_has_it() -> None:
    from dbscale.scaleout.live import merge_intervals

    one = [_interval(0, [100, 200]), _interval(1, [300]), _interval(2, [400])]
    two = [_interval(0, [1000]), _interval(1, [2000, 3000])]  # its third second is not in yet
    merged = merge_intervals([one, two], 1.0)
    assert [m.transactions for m in merged] == [3, 3]
    latency = merged[1].latency_ms
    assert latency is not None and latency.p50 == pytest.approx(2.0, rel=1e-3)
    later = merge_intervals([one, two], 1.0, first=1)
    assert later == merged[1:]  # from `first` on, the same figures, nothing merged twice
    assert merge_intervals([one, two], 1.0, first=2) == []
