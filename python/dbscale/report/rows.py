"""The study shaped into the flat rows the charts and tables draw: one row per point (against an
axis), per point and percentile, per configuration, per run and second, per point and quantile.
Numbers are rounded to 4 significant digits (far finer than any chart shows) to keep the page
small, and per-second series are thinned when a study has more seconds than MAX_TIMELINE_ROWS.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dbscale.report.axes import Axis
from dbscale.report.point_stats import spectrum_ms
from dbscale.report.view import Point, Run, Study

Row = dict[str, Any]

MAX_TIMELINE_ROWS = 12_000
LOAD_AXES = frozenset(
    {"clients", "rate_tps", "threads", "axis.clients", "axis.rate", "axis.threads"}
)
LATENCY_PERCENTILES = ("p50", "p95", "p99")


def r4(value: Any) -> float | None:
    """`value` rounded to 4 significant digits; None when it is not a finite number."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return None
    if value == 0:
        return 0.0
    return float(round(value, 3 - math.floor(math.log10(abs(value)))))


def x_value(point: Point, axis: Axis | None) -> Any:
    if axis is None:
        return point.label
    value = point.coords.get(axis.key)
    return value if axis.numeric else axis.format(value)


def point_rows(study: Study, axis: Axis | None) -> list[Row]:
    """One row per point: throughput median, CI, spread, merged-histogram latency."""
    rows: list[Row] = []
    for point in study.points:
        stats = point.stats
        row: Row = {
            "x": x_value(point, axis),
            "series": point.series(study.axes, axis.key if axis else None),
            "point": point.label,
            "n": stats.n_runs,
            "tput": r4(stats.median),
            # Throughput cannot go below zero; a t-interval of few runs can (the table keeps it).
            "tput_lo": r4(max(stats.ci.low, 0.0)) if stats.ci else None,
            "tput_hi": r4(stats.ci.high) if stats.ci else None,
            "mean": r4(stats.mean),
            "stddev": r4(stats.stddev),
            "cv_pct": r4(100 * stats.cv) if stats.cv is not None else None,
        }
        for name in LATENCY_PERCENTILES:
            row[name] = r4(stats.latency_ms.get(name))
        rows.append(row)
    return rows


def latency_rows(study: Study, axis: Axis | None) -> list[Row]:
    """One row per point and percentile; the whisker is the range of the per-run values."""
    rows: list[Row] = []
    for point in study.points:
        for name in LATENCY_PERCENTILES:
            low, high = point.stats.latency_run_range_ms.get(name, (None, None))
            rows.append(
                {
                    "x": x_value(point, axis),
                    "series": point.series(study.axes, axis.key if axis else None),
                    "point": point.label,
                    "percentile": name,
                    "latency_ms": r4(point.stats.latency_ms.get(name)),
                    "lo": r4(low) if point.stats.n_runs > 1 else None,
                    "hi": r4(high) if point.stats.n_runs > 1 else None,
                }
            )
    return rows


def series_title(study: Study, axis: Axis | None) -> str:
    """The legend title of series against `axis`: the other swept axes' names."""
    names = [a.title for a in study.axes if a.swept and (axis is None or a.key != axis.key)]
    return ", ".join(names) or "series"


def configuration(point: Point, axes: Sequence[Axis]) -> str:
    """The point's configuration: its swept axes except those that set the load."""
    parts = [
        f"{a.title}={a.format(point.coords.get(a.key))}"
        for a in axes
        if a.swept and a.key not in LOAD_AXES
    ]
    return ", ".join(parts)


def load_label(point: Point, axes: Sequence[Axis]) -> str:
    parts = [
        f"{a.title}={a.format(point.coords.get(a.key))}"
        for a in axes
        if a.swept and a.key in LOAD_AXES
    ]
    return ", ".join(parts) or "-"


def config_rows(study: Study) -> list[Row]:
    """Per configuration, its best point over the load axes (peak median throughput), with that
    point's CI, per-vCPU figures when the vCPU count is known, and price when recorded."""
    best: dict[str, Point] = {}
    for point in study.points:
        key = configuration(point, study.axes)
        if key not in best or point.stats.median > best[key].stats.median:
            best[key] = point
    rows: list[Row] = []
    for key, point in sorted(best.items(), key=lambda kv: -kv[1].stats.median):
        stats = point.stats
        lo, hi = (stats.ci.low, stats.ci.high) if stats.ci else (None, None)
        row: Row = {
            "config": key or point.label,
            "at": load_label(point, study.axes),
            "n": stats.n_runs,
            "tput": r4(stats.median),
            "tput_lo": r4(lo),
            "tput_hi": r4(hi),
        }
        vcpus = point.runs[0].facts.get("vcpus")
        if isinstance(vcpus, int) and vcpus > 0:
            row.update(
                vcpus=vcpus,
                per_vcpu=r4(stats.median / vcpus),
                per_vcpu_lo=r4(lo / vcpus) if lo is not None else None,
                per_vcpu_hi=r4(hi / vcpus) if hi is not None else None,
            )
        cost = point.stats.price.get("cost") or {}
        if cost.get("per_tpm_on_demand") is not None:
            # results.cost: monthly cost / TPM, its interval mapped through cost / x.
            ci = cost.get("per_tpm_on_demand_ci") or {}
            row.update(
                currency=cost.get("currency"),
                usd_per_month=r4(cost.get("total_on_demand_per_month")),
                cost=r4(cost["per_tpm_on_demand"]),
                cost_lo=r4(ci.get("low")),
                cost_hi=r4(ci.get("high")),
                cost_reserved=r4(cost.get("per_tpm_reserved")),
                price_source=f"{cost.get('price_source')} ({cost.get('price_date')})",
            )
        rows.append(row)
    return rows


def variation_rows(study: Study, axis: Axis | None) -> list[Row]:
    """Run-to-run CV (%) of throughput and of each latency percentile, per point."""
    rows: list[Row] = []
    for point in study.points:
        metrics: list[tuple[str, float | None]] = [("throughput", point.stats.cv)]
        metrics += [(f"{n} latency", point.stats.latency_cv.get(n)) for n in LATENCY_PERCENTILES]
        for metric, cv in metrics:
            if cv is None:
                continue
            rows.append(
                {
                    "x": x_value(point, axis),
                    "series": point.series(study.axes, axis.key if axis else None),
                    "point": point.label,
                    "metric": metric,
                    "cv_pct": r4(100 * cv),
                    "n": point.stats.n_runs,
                }
            )
    return rows


def timeline_step(runs: Sequence[Run], max_rows: int = MAX_TIMELINE_ROWS) -> int:
    """How many seconds one timeline row stands for (1 unless the study is long)."""
    total = sum(len(_intervals(run)) for run in runs)
    return max(1, math.ceil(total / max_rows)) if max_rows > 0 else 1


def timeline_rows(study: Study, max_rows: int = MAX_TIMELINE_ROWS) -> list[Row]:
    """Per run and second: throughput and latency; seconds are merged in buckets (mean TPS,
    worst percentile) when the study has more than `max_rows` of them."""
    step = timeline_step(study.runs, max_rows)
    point_of = {id(run): point.label for point in study.points for run in point.runs}
    rows: list[Row] = []
    for run in study.runs:
        point = "warm-up" if run.warmup else point_of.get(id(run), f"{run.label} ({run.status})")
        intervals = _intervals(run)
        for start in range(0, len(intervals), step):
            rows.append(_bucket(run, intervals[start : start + step], point))
    return rows


def _intervals(run: Run) -> list[Mapping[str, Any]]:
    items = run.record.get("intervals") or []
    return [i for i in items if isinstance(i, Mapping)]


def _bucket(run: Run, items: Sequence[Mapping[str, Any]], point: str) -> Row:
    latency = [i.get("latency_ms") or {} for i in items]
    row: Row = {
        "run": run.label,
        "point": point,
        "t_s": r4(items[-1].get("t_s")),
        "tps": r4(_mean(i.get("tps") for i in items)),
        "errors": sum(int(i.get("errors") or 0) for i in items),
    }
    for name in LATENCY_PERCENTILES:
        row[name] = r4(_max(lat.get(name) for lat in latency))
    return row


def _mean(values: Iterable[Any]) -> float | None:
    numbers = [float(v) for v in values if isinstance(v, int | float)]
    return sum(numbers) / len(numbers) if numbers else None


def _max(values: Iterable[Any]) -> float | None:
    numbers = [float(v) for v in values if isinstance(v, int | float)]
    return max(numbers) if numbers else None


def spectrum_rows(study: Study) -> list[Row]:
    """The percentile spectrum of each point's merged histogram, x as "nines" (-log10(1-q))."""
    rows: list[Row] = []
    for point in study.points:
        histogram = point.stats.histogram
        if histogram is None or not histogram.total_count:
            continue
        # The max (q = 1) has no finite position on this axis; the table shows it.
        for quantile, latency_ms in spectrum_ms(histogram):
            rows.append(
                {
                    "point": point.label,
                    "nines": r4(-math.log10(1.0 - quantile)),
                    "percentile": r4(100 * quantile),
                    "latency_ms": r4(latency_ms),
                }
            )
    return rows
