"""From a level's run record to what the judge reads: its measured seconds after the settle, each
with its transactions, failures and transactions over each objective's limit (counted in the
second's own histogram, which capacity runs keep), and whether the load generator fell behind.

A level can be judged on some of its transaction types only (`types`): CH-benCHmark's terminals
while its analytic streams are the knob. Each second then counts those types' transactions and
failures, and their own histograms (capacity runs keep one per type and second).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from dbscale import core
from dbscale.capacity.judge import LevelFacts, Second
from dbscale.core.answers import HistogramFigures
from dbscale.core.result import Interval
from dbscale.plan.objectives import Objective
from dbscale.results.record import RunRecord

QUANTILES = (0.5, 0.95, 0.99, 0.999)


def _blobs(interval: Interval, types: Collection[str] | None) -> list[str] | None:
    """The second's histograms to judge (None: it has none to judge by)."""
    detail = interval.detail
    if detail is None or not detail.histogram:
        return None
    if types is None:
        return [detail.histogram]
    blobs = [detail.histograms_by_type[t] for t in types if t in detail.histograms_by_type]
    done = sum(interval.by_type.get(t, 0) for t in types)
    if done and not blobs:
        return None  # recorded without the histograms per type
    return blobs


def _counts(interval: Interval, types: Collection[str] | None) -> tuple[int, int]:
    if types is None:
        return interval.transactions, interval.failed
    return (sum(interval.by_type.get(t, 0) for t in types),
            sum(interval.failed_by_type.get(t, 0) for t in types))  # fmt: skip


def measured_seconds(record: RunRecord, settle_s: float) -> list[Interval]:
    return [i for i in record.window_intervals if i.t_s > settle_s + 1e-9]


def level_facts(
    record: RunRecord,
    objectives: Sequence[Objective],
    *,
    offered: float | None,
    settle_s: float,
    types: Collection[str] | None = None,
) -> LevelFacts:
    """The seconds of `record` after its first `settle_s`, as the judge reads them; `types`: the
    transaction types judged (None: all)."""
    measured = measured_seconds(record, settle_s)
    blobs = [_blobs(i, types) for i in measured]
    flat = [b for found in blobs if found is not None for b in found]
    counts = iter(core.histogram_counts_above(flat, [o.limit_ms for o in objectives]))
    seconds = []
    for interval, found in zip(measured, blobs, strict=True):
        over = [0 for _ in objectives]
        for _ in found or ():
            for index, n in enumerate(next(counts).above):
                over[index] += n
        seconds.append(Second(*_counts(interval, types), tuple(over)))
    span = (measured[-1].t_s - settle_s) if measured else 0.0
    achieved = sum(s.transactions for s in seconds) / span if span > 0 else 0.0
    verdict = record.observe.limited_by if record.observe is not None else None
    bound = verdict is not None and verdict.client_bound
    extra: tuple[str, ...] = ()
    if record.verdict.status in ("failed", "outage"):
        extra = (f"the run {record.verdict.status}: {record.verdict.message}",)
    elif any(found is None for found in blobs):
        extra = ("some seconds have no histogram: the level cannot be judged",)
    elif record.tpcc is not None and not record.tpcc.passed:  # TPC-C's own rule holds too
        extra = (f"TPC-C {record.tpcc.rule.name} rule: " + "; ".join(record.tpcc.reasons),)
    return LevelFacts(
        offered=offered,
        achieved=achieved,
        seconds=seconds,
        measured_s=span,
        generator_bound=bound,
        generator_note=verdict.evidence if bound and verdict is not None else "",
        extra_reasons=extra,
    )


def judged_latency(record: RunRecord, settle_s: float, types: Collection[str]) -> HistogramFigures:
    """The judged types' latency over the seconds after the settle (one merged histogram):
    what a level judged on some types reports as its percentiles."""
    blobs = [b for i in measured_seconds(record, settle_s) for b in (_blobs(i, types) or ())]
    return core.histogram_figures(blobs, QUANTILES)
