"""The numbers the report shows for one point (one configuration, one or more runs): throughput
median with its 95% CI, mean, standard deviation and CV across runs, and latency percentiles read
from the runs' merged histogram, with the range and CV of the per-run values.

The statistics are the study's own (`dbscale.results.points.summarize_points`, the same figures
summary.json holds: the median's order-statistic CI when there are enough runs, else the
Student-t CI of the mean; percentiles from merged histograms, never averaged; its flags). This
module only gathers what the charts and tables need, and re-reads throughput in tpmC when the
study's unit is tpmC, with the same `dbscale.stats` functions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TypeGuard

from dbscale.errors import DbscaleError
from dbscale.results.points import HistogramCache, SummarySettings, summarize_points
from dbscale.stats.confidence import mean_t_ci, median_order_statistic_ci, spread
from dbscale.stats.hdr import HdrHistogram

PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50", 0.50), ("p90", 0.90), ("p95", 0.95), ("p99", 0.99), ("p999", 0.999), ("max", 1.0),
)  # fmt: skip
# Quantiles of the percentile spectrum: HdrHistogram's classic plot, thinned to what a reader uses.
SPECTRUM_QUANTILES: tuple[float, ...] = (
    0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.925, 0.95, 0.9625, 0.975,
    0.98, 0.99, 0.9925, 0.995, 0.9975, 0.999, 0.99925, 0.9995, 0.99975, 0.9999, 0.99999,
)  # fmt: skip


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    method: str  # "order-statistic" or "student-t"


@dataclass
class PointStats:
    """One point's figures. Throughput is in the study's unit (TPS, or tpmC for TPC-C)."""

    n_runs: int
    median: float
    mean: float
    stddev: float | None
    cv: float | None
    minimum: float
    maximum: float
    ci: Interval | None
    latency_ms: dict[str, float] = field(default_factory=dict)  # merged histogram percentiles
    latency_run_range_ms: dict[str, tuple[float, float]] = field(default_factory=dict)
    latency_cv: dict[str, float] = field(default_factory=dict)  # run-to-run CV of p50/p95/p99
    histogram: HdrHistogram | None = field(default=None, repr=False)
    warnings: list[str] = field(default_factory=list)  # the statistics' flags
    summary: dict[str, Any] = field(default_factory=dict, repr=False)  # summary.json's point
    price: dict[str, Any] = field(default_factory=dict)  # dbscale.results.cost's `tpm` and `cost`


def compute(
    throughputs: Sequence[float],
    records: Sequence[Mapping[str, Any]],
    *,
    unit: str = "TPS",
    settings: SummarySettings | None = None,
    cache: HistogramCache | None = None,
) -> PointStats:
    """The figures of one point from its counted runs (`throughputs` in `unit`, one per record)."""
    cache = cache or HistogramCache()
    # One group whatever the records' own point keys say: the report decides what a point is.
    same_point = [{**r, "point_key": "point"} for r in records]
    try:
        summary = summarize_points(same_point, settings, cache)[0]
    except DbscaleError:  # an unreadable histogram: the run's own figures still show
        summary = summarize_points(
            [{k: v for k, v in r.items() if k != "histogram"} for r in same_point], settings
        )[0]
    tput = dict(summary.get("tps") or {})
    if unit != "TPS":
        tput = _throughput_in(throughputs, settings or SummarySettings())
    ci = tput.get("median_ci") or tput.get("mean_ci")
    stats = PointStats(
        n_runs=int(summary.get("runs") or 0),
        median=_float(tput.get("median")),
        mean=_float(tput.get("mean")),
        stddev=tput.get("stddev"),
        cv=tput["cv_pct"] / 100.0 if tput.get("cv_pct") is not None else None,
        minimum=_float(tput.get("min")),
        maximum=_float(tput.get("max")),
        ci=Interval(ci["low"], ci["high"], ci["method"]) if ci else None,
        latency_ms={
            name: float(value)
            for name, _ in PERCENTILES
            if _num(value := (summary.get("latency_ms") or {}).get(name))
        },
        warnings=[str(f) for f in summary.get("flags") or []],
        summary=summary,
    )
    stats.histogram = _merged(records, cache)
    if not stats.latency_ms and len(records) == 1:  # no histogram: the run's own figures
        latency = records[0].get("latency_ms") or {}
        stats.latency_ms = {k: float(latency[k]) for k, _ in PERCENTILES if _num(latency.get(k))}
    _add_run_spread(stats, records)
    return stats


def _throughput_in(values: Sequence[float], settings: SummarySettings) -> dict[str, Any]:
    described = spread(values)
    median_ci = median_order_statistic_ci(values, settings.confidence)
    mean_ci = mean_t_ci(values, settings.confidence)
    if described is None:
        return {}
    return {
        "median": described.median, "mean": described.mean, "stddev": described.stddev,
        "cv_pct": described.cv_pct, "min": described.min, "max": described.max,
        "median_ci": asdict(median_ci) if median_ci else None,
        "mean_ci": asdict(mean_ci) if mean_ci else None,
    }  # fmt: skip


def _merged(records: Sequence[Mapping[str, Any]], cache: HistogramCache) -> HdrHistogram | None:
    merged: HdrHistogram | None = None
    for record in records:
        try:
            histogram = cache.get(record)
        except DbscaleError:
            return None
        if histogram is None:
            return None  # a partial merge would misstate the point's distribution
        if merged is None:
            merged = HdrHistogram(histogram.layout, dict(histogram.counts))
        else:
            try:
                merged.add(histogram)
            except DbscaleError:
                return None
    return merged


def _add_run_spread(stats: PointStats, records: Sequence[Mapping[str, Any]]) -> None:
    for name in ("p50", "p95", "p99"):
        per_run = [float(v) for r in records if _num(v := (r.get("latency_ms") or {}).get(name))]
        if per_run:
            stats.latency_run_range_ms[name] = (min(per_run), max(per_run))
        described = spread(per_run)
        if described is not None and described.cv_pct is not None:
            stats.latency_cv[name] = described.cv_pct / 100.0


def _float(value: Any) -> float:
    return float(value) if _num(value) else math.nan


def spectrum_ms(histogram: HdrHistogram) -> list[tuple[float, float]]:
    """(quantile, latency in ms) pairs of the percentile spectrum."""
    return [(q, histogram.value_at_quantile(q) / 1000.0) for q in SPECTRUM_QUANTILES]


def _num(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
