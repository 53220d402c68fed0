"""Per-point statistics over a results directory's runs, for summary.json and summary.csv: the
median TPS with its distribution-free 95% interval (when there are enough runs for one), the mean
with its t-interval, standard deviation, CV, min and max; latency percentiles read from the merged
histograms of all runs (never averaged), the spread of per-run p95/p99; and the flags a reader
must see: too few runs, a CV above the threshold, runs that never reached steady state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from dbscale.stats.confidence import (
    ConfidenceInterval,
    mean_t_ci,
    median_order_statistic_ci,
    min_runs_for_median_ci,
    spread,
)
from dbscale.stats.hdr import HdrHistogram, latency_summary_ms
from dbscale.stats.steady_state import steady_state

Record = Mapping[str, Any]
MIN_RUNS_WARNING = 4  # below this not even a large difference can be told apart at 5%


@dataclass(frozen=True)
class SummarySettings:
    confidence: float = 0.95
    cv_threshold_pct: float = 5.0


@dataclass
class HistogramCache:
    """Decoded histograms by run id, so rewriting the summary after each run stays cheap."""

    decoded: dict[tuple[str, str], HdrHistogram] = field(default_factory=dict)

    def get(self, record: Record, kind: str = "") -> HdrHistogram | None:
        blob = (
            record.get("histogram")
            if not kind
            else ((record.get("transaction_types") or {}).get(kind, {}).get("histogram"))
        )
        if not isinstance(blob, str) or not blob:
            return None
        key = (str(record.get("run_id")), kind)
        if key not in self.decoded:
            self.decoded[key] = HdrHistogram.from_base64(blob)
        return self.decoded[key]


def record_point_key(record: Record) -> str:
    """The point a run belongs to; runs recorded before studies existed group by clients."""
    key = record.get("point_key")
    return str(key) if key else f"clients={record.get('clients')}"


def is_measured(record: Record) -> bool:
    """Counts in statistics: not a warm-up, not cancelled, not failed."""
    status = (record.get("verdict") or {}).get("status")
    return not record.get("warmup") and not record.get("cancelled") and status != "failed"


def run_steady_state(record: Record) -> dict[str, Any]:
    intervals = record.get("intervals") or []
    tps = [float(i.get("tps") or 0.0) for i in intervals]
    interval_s = float((record.get("config") or {}).get("interval_s") or 1.0)
    return asdict(steady_state(tps, interval_s))


def summarize_points(
    records: Sequence[Record],
    settings: SummarySettings | None = None,
    cache: HistogramCache | None = None,
) -> list[dict[str, Any]]:
    """One summary per point, in the order points first appear."""
    settings = settings or SummarySettings()
    cache = cache or HistogramCache()
    groups: dict[str, list[Record]] = {}
    for record in records:
        if record.get("warmup_kind") == "data":
            continue
        groups.setdefault(record_point_key(record), []).append(record)
    return [_summarize(key, runs, settings, cache) for key, runs in groups.items()]


def _ci(interval: ConfidenceInterval | None) -> dict[str, Any] | None:
    return asdict(interval) if interval is not None else None


def _summarize(
    key: str, records: list[Record], settings: SummarySettings, cache: HistogramCache
) -> dict[str, Any]:
    measured = [r for r in records if is_measured(r)]
    warmups = [r for r in records if r.get("warmup")]
    excluded = [r for r in records if not r.get("warmup") and not is_measured(r)]
    tps = [float(r.get("tps") or 0.0) for r in measured]
    described = spread(tps)
    median_ci = median_order_statistic_ci(tps, settings.confidence)
    first = (measured or records)[0]
    merged = _merge([cache.get(r) for r in measured])
    flags: list[str] = []
    need = min_runs_for_median_ci(settings.confidence)
    if len(measured) < need:
        flags.append(
            f"{len(measured)} run{'s' if len(measured) != 1 else ''}: a {settings.confidence:.0%} "
            f"CI for the median needs at least {need}"
        )
    if 0 < len(measured) < MIN_RUNS_WARNING:
        flags.append(f"fewer than {MIN_RUNS_WARNING} runs: too few to detect a difference")
    if described and described.cv_pct is not None and described.cv_pct > settings.cv_threshold_pct:
        flags.append(f"CV {described.cv_pct:.1f}% above {settings.cv_threshold_pct:g}%")
    unsteady = [r for r in measured if run_steady_state(r)["status"] == "none"]
    if unsteady:
        flags.append(f"{len(unsteady)} run(s) never reached steady state (MSER-5)")
    if any(run_steady_state(r)["status"] == "none" for r in warmups):
        flags.append("the warm-up ended before throughput settled (MSER-5): lengthen it")
    if excluded:
        flags.append(f"{len(excluded)} cancelled or failed run(s) left out")
    return {
        "point_key": key,
        "point": dict(first.get("point") or {}),
        "target": first.get("target_name"),
        "workload": first.get("workload"),
        "runs": len(measured),
        "run_ids": [r.get("run_id") for r in measured],
        "tps": {
            "median": described.median if described else None,
            "median_ci": _ci(median_ci),
            "mean": described.mean if described else None,
            "mean_ci": _ci(mean_t_ci(tps, settings.confidence)),
            "stddev": described.stddev if described else None,
            "cv_pct": described.cv_pct if described else None,
            "min": described.min if described else None,
            "max": described.max if described else None,
        },
        "latency_ms": latency_summary_ms(merged),
        "per_run_latency_ms": {
            name: _range([(r.get("latency_ms") or {}).get(name) for r in measured])
            for name in ("p95", "p99")
        },
        "transaction_types": _per_type(measured, cache),
        "steady_state": {
            "runs_without": [r.get("run_id") for r in unsteady],
            "per_run": [run_steady_state(r) for r in measured],
        },
        "flags": flags,
    }


def _merge(histograms: Sequence[HdrHistogram | None]) -> HdrHistogram | None:
    merged: HdrHistogram | None = None
    for histogram in histograms:
        if histogram is None:
            continue
        if merged is None:
            merged = HdrHistogram(histogram.layout, dict(histogram.counts))
        else:
            merged.add(histogram)
    return merged


def _range(values: Sequence[Any]) -> dict[str, float | None]:
    present = [float(v) for v in values if v is not None]
    return {"min": min(present) if present else None, "max": max(present) if present else None}


def _per_type(records: Sequence[Record], cache: HistogramCache) -> dict[str, Any]:
    names: list[str] = []
    for record in records:
        for name in record.get("transaction_types") or {}:
            if name not in names:
                names.append(name)
    out: dict[str, Any] = {}
    for name in names:
        summary = latency_summary_ms(_merge([cache.get(r, name) for r in records]))
        out[name] = {k: summary[k] for k in ("count", "mean", "p50", "p95", "p99", "max")}
    return out


def flatten(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested summary row as CSV columns: `tps_median_ci_low`, `point_clients`, ..."""
    flat: dict[str, Any] = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if key in ("run_ids", "per_run", "transaction_types"):
            continue
        if key.endswith("_ci") and value is None:
            flat[f"{name}_low"] = flat[f"{name}_high"] = None
        elif key.endswith("_ci") and isinstance(value, Mapping):
            flat[f"{name}_low"], flat[f"{name}_high"] = value.get("low"), value.get("high")
        elif isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}_"))
        elif isinstance(value, list):
            flat[name] = "; ".join(str(v) for v in value)
        else:
            flat[name] = value
    return flat
