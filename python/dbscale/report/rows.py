"""The study shaped into the flat rows the charts and tables draw: one row per point (against an
axis), per point and percentile, per configuration, per run and second, per point and quantile.
Numbers are rounded to 4 significant digits (far finer than any chart shows) to keep the page
small, and per-second series are thinned when a study has more seconds than MAX_TIMELINE_ROWS.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dbscale import core
from dbscale.core.result import Interval
from dbscale.report.axes import Axis
from dbscale.report.view import PointView, ResultsView, RunView

Row = dict[str, Any]

MAX_TIMELINE_ROWS = 12_000
LOAD_AXES = frozenset(
    {"clients", "rate_tps", "threads", "axis.clients", "axis.rate", "axis.threads"}
)
LATENCY_PERCENTILES = ("p50", "p95", "p99")
# What the latency charts show per point: the mean (pgbench's and sysbench's average), then
# the percentiles.
LATENCY_FIGURES = ("mean", *LATENCY_PERCENTILES)
# Quantiles of the percentile spectrum: HdrHistogram's classic plot, thinned to what a reader uses.
SPECTRUM_QUANTILES: tuple[float, ...] = (
    0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.925, 0.95, 0.9625, 0.975,
    0.98, 0.99, 0.9925, 0.995, 0.9975, 0.999, 0.99925, 0.9995, 0.99975, 0.9999, 0.99999,
)  # fmt: skip


def r4(value: Any) -> float | None:
    """`value` rounded to 4 significant digits, but never inside its whole part (30,532 stays
    30,532: a count is exact); None when it is not a finite number."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return None
    if value == 0:
        return 0.0
    if abs(value) >= 1000:
        return float(round(value))
    return float(round(value, 3 - math.floor(math.log10(abs(value)))))


def x_value(point: PointView, axis: Axis | None) -> Any:
    if axis is None:
        return point.label
    value = point.coords.get(axis.key)
    return value if axis.numeric else axis.format(value)


def point_rows(study: ResultsView, axis: Axis | None) -> list[Row]:
    """One row per point: throughput median, CI, spread, merged-histogram latency."""
    rows: list[Row] = []
    for point in study.points:
        tput = point.summary.throughput
        ci = tput.ci
        row: Row = {
            "x": x_value(point, axis),
            "series": point.series(study.axes, axis.key if axis else None),
            "point": point.label,
            "n": point.summary.runs,
            "tput": r4(tput.median),
            # Throughput cannot go below zero; a t-interval of few runs can (the table keeps it).
            "tput_lo": r4(max(ci.low, 0.0)) if ci else None,
            "tput_hi": r4(ci.high) if ci else None,
            "mean": r4(tput.mean),
            "stddev": r4(tput.stddev),
            "cv_pct": r4(tput.cv_pct),
        }
        for name in LATENCY_FIGURES:
            row[name] = r4(point.summary.latency_ms.percentile(name))
        rows.append(row)
    return rows


def latency_rows(study: ResultsView, axis: Axis | None) -> list[Row]:
    """One row per point and percentile; the whisker is the range of the per-run values."""
    rows: list[Row] = []
    for point in study.points:
        many = point.summary.runs > 1
        for name in LATENCY_FIGURES:
            spread = point.summary.per_run_latency_ms.get(name)
            low, high = (spread.min, spread.max) if spread else (None, None)
            rows.append(
                {
                    "x": x_value(point, axis),
                    "series": point.series(study.axes, axis.key if axis else None),
                    "point": point.label,
                    "percentile": name,
                    "latency_ms": r4(point.summary.latency_ms.percentile(name)),
                    "lo": r4(low) if many else None,
                    "hi": r4(high) if many else None,
                }
            )
    return rows


def series_title(study: ResultsView, axis: Axis | None) -> str:
    """The legend title of series against `axis`: the other swept axes' names."""
    names = [a.title for a in study.axes if a.swept and (axis is None or a.key != axis.key)]
    return ", ".join(names) or "series"


def configuration(point: PointView, axes: Sequence[Axis]) -> str:
    """The point's configuration: its swept axes except those that set the load."""
    parts = [
        f"{a.title}={a.format(point.coords.get(a.key))}"
        for a in axes
        if a.swept and a.key not in LOAD_AXES
    ]
    return ", ".join(parts)


def load_label(point: PointView, axes: Sequence[Axis]) -> str:
    parts = [
        f"{a.title}={a.format(point.coords.get(a.key))}"
        for a in axes
        if a.swept and a.key in LOAD_AXES
    ]
    return ", ".join(parts) or "-"


def config_rows(study: ResultsView) -> list[Row]:
    """Per configuration, its best point over the load axes (peak median throughput), with that
    point's CI, per-vCPU figures when the vCPU count is known, and price when recorded."""
    best: dict[str, PointView] = {}
    for point in study.points:
        key = configuration(point, study.axes)
        if key not in best or _median(point) > _median(best[key]):
            best[key] = point
    rows: list[Row] = []
    for key, point in sorted(best.items(), key=lambda kv: -_median(kv[1])):
        median = _median(point)
        ci = point.summary.throughput.ci
        lo, hi = (ci.low, ci.high) if ci else (None, None)
        row: Row = {
            "config": key or point.label,
            "at": load_label(point, study.axes),
            "n": point.summary.runs,
            "tput": r4(median),
            "tput_lo": r4(lo),
            "tput_hi": r4(hi),
        }
        vcpus = point.runs[0].facts.get("vcpus")
        if isinstance(vcpus, int) and vcpus > 0:
            row.update(
                vcpus=vcpus,
                per_vcpu=r4(median / vcpus),
                per_vcpu_lo=r4(lo / vcpus) if lo is not None else None,
                per_vcpu_hi=r4(hi / vcpus) if hi is not None else None,
            )
        cost = point.summary.cost
        if cost is not None and cost.per_tpm_on_demand is not None:
            # results.cost: monthly cost / TPM, its interval mapped through cost / x.
            bounds = cost.per_tpm_on_demand_ci
            row.update(
                currency=cost.currency,
                usd_per_month=r4(cost.total_on_demand_per_month),
                cost=r4(cost.per_tpm_on_demand),
                cost_lo=r4(bounds.low if bounds else None),
                cost_hi=r4(bounds.high if bounds else None),
                cost_reserved=r4(cost.per_tpm_reserved),
                price_source=f"{cost.price_source} ({cost.price_date})",
            )
        rows.append(row)
    return rows


def variation_rows(study: ResultsView, axis: Axis | None) -> list[Row]:
    """Run-to-run CV (%) of throughput and of each latency percentile, per point."""
    rows: list[Row] = []
    for point in study.points:
        summary = point.summary
        metrics: list[tuple[str, float | None]] = [("throughput", summary.throughput.cv_pct)]
        metrics += [
            (f"{n} latency", summary.per_run_latency_cv_pct.get(n)) for n in LATENCY_PERCENTILES
        ]
        for metric, cv_pct in metrics:
            if cv_pct is None:
                continue
            rows.append(
                {
                    "x": x_value(point, axis),
                    "series": point.series(study.axes, axis.key if axis else None),
                    "point": point.label,
                    "metric": metric,
                    "cv_pct": r4(cv_pct),
                    "n": summary.runs,
                }
            )
    return rows


def timeline_step(runs: Sequence[RunView], max_rows: int = MAX_TIMELINE_ROWS) -> int:
    """How many seconds one timeline row stands for (1 unless the study is long)."""
    total = sum(len(_intervals(run)) for run in runs)
    return max(1, math.ceil(total / max_rows)) if max_rows > 0 else 1


def timeline_rows(study: ResultsView, max_rows: int = MAX_TIMELINE_ROWS) -> list[Row]:
    """Per run and second: throughput and latency; seconds are merged in buckets (mean TPS,
    worst percentile) when the study has more than `max_rows` of them."""
    step = timeline_step(study.runs, max_rows)
    point_of = {id(run): point.label for point in study.points for run in point.runs}
    rows: list[Row] = []
    for run in study.runs:
        point = (
            "warm-up"
            if run.record.warmup
            else point_of.get(id(run), f"{run.label} ({run.record.status})")
        )
        intervals = _intervals(run)
        for start in range(0, len(intervals), step):
            rows.append(_bucket(run, intervals[start : start + step], point))
    return rows


def _intervals(run: RunView) -> list[Interval]:
    return run.record.window_intervals  # the drain after the window is not a second of it


def _bucket(run: RunView, items: Sequence[Interval], point: str) -> Row:
    row: Row = {
        "run": run.label,
        "point": point,
        "t_s": r4(items[-1].t_s),
        "tps": r4(sum(i.tps for i in items) / len(items)),
        "errors": sum(i.errors for i in items),
    }
    for name in LATENCY_PERCENTILES:
        values = [getattr(i.latency_ms, name) for i in items if i.latency_ms is not None]
        row[name] = r4(max((v for v in values if v is not None), default=None))
    return row


def _median(point: PointView) -> float:
    median = point.summary.throughput.median
    return median if median is not None else -math.inf


def spectrum_rows(study: ResultsView) -> list[Row]:
    """The percentile spectrum of each point's merged histogram, x as "nines" (-log10(1-q))."""
    rows: list[Row] = []
    for point in study.points:
        blobs = [run.record.histogram for run in point.runs]
        if not blobs or not all(blobs):
            continue  # a partial merge would misstate the point's distribution
        figures = core.histogram_figures(blobs, SPECTRUM_QUANTILES)
        if not figures.count:
            continue
        # The max (q = 1) has no finite position on this axis; the table shows it.
        for quantile, latency_ms in zip(figures.quantiles, figures.values, strict=True):
            rows.append(
                {
                    "point": point.label,
                    "nines": r4(-math.log10(1.0 - quantile)),
                    "percentile": r4(100 * quantile),
                    "latency_ms": r4(latency_ms),
                }
            )
    return rows
