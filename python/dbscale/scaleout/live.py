"""The live view of a scaled-out run: the workers' intervals of the same index (seconds since the
common start) merged once every worker has finished it, counts summed and latency percentiles
read from the merged interval histograms (core.histogram_figures), never averaged. The record's
own intervals are merged again by the core at the end (engine/merge.rs)."""

from __future__ import annotations

from collections.abc import Sequence

from dbscale import core
from dbscale.core.result import Interval, IntervalLatency, QueryCounts

QUANTILES = [0.5, 0.95, 0.99]


def merge_intervals(
    per_worker: Sequence[Sequence[Interval]], interval_s: float, first: int = 0
) -> list[Interval]:
    """The measured intervals (not the drain) from index `first` on that every worker has,
    merged, in order; the ones before `first` were shown already and are not merged again."""
    if not per_worker:
        return []
    by_worker = [
        {
            x.detail.index: x
            for x in intervals
            if not x.drain and x.detail is not None and x.detail.index >= first
        }
        for intervals in per_worker
    ]
    merged: list[Interval] = []
    index = first
    while all(index in mine for mine in by_worker):
        merged.append(merge_one([mine[index] for mine in by_worker], index, interval_s))
        index += 1
    return merged


def merge_one(pieces: Sequence[Interval], index: int, interval_s: float) -> Interval:
    """One interval of the whole run from the workers' pieces of it."""
    t_s = max(p.t_s for p in pieces)
    width = max(t_s - index * interval_s, 1e-9)
    transactions = sum(p.transactions for p in pieces)
    queries = QueryCounts(
        read=sum(p.queries.read for p in pieces),
        write=sum(p.queries.write for p in pieces),
        other=sum(p.queries.other for p in pieces),
        total=sum(p.queries.total for p in pieces),
    )
    details = [p.detail for p in pieces if p.detail is not None]
    figures = core.histogram_figures([d.histogram for d in details], QUANTILES)
    latency = None
    if figures.count:
        p50, p95, p99 = figures.values
        latency = IntervalLatency(mean=figures.mean, stddev=figures.stddev, p50=p50, p95=p95,
                                  p99=p99, max=figures.max)  # fmt: skip
    lag_count = sum(d.lag_count for d in details)
    return Interval(
        t_s=t_s,
        transactions=transactions,
        tps=transactions / width,
        failed=sum(p.failed for p in pieces),
        errors=sum(p.errors for p in pieces),
        retries=sum(p.retries for p in pieces),
        clients_connected=sum(p.clients_connected or 0 for p in pieces),
        queries=queries,
        qps=queries.total / width,
        latency_ms=latency,
        lag_ms=sum(d.lag_sum_us for d in details) / lag_count / 1000.0 if lag_count else None,
        lag_max_ms=max(d.lag_max_us for d in details) / 1000.0 if lag_count else None,
    )
