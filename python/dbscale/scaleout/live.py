"""The live view of a scaled-out run: the workers' intervals of the same index (seconds since the
common start) merged once every worker has finished it, counts summed and latency percentiles
read from the merged interval histograms (core.histogram_figures), never averaged. The record's
own intervals are merged again by the core at the end (engine/merge.rs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dbscale import core
from dbscale.values import JsonObject

QUANTILES = [0.5, 0.95, 0.99]
SUMMED = ("transactions", "failed", "errors", "retries", "clients_connected")


def _index(interval: Mapping[str, Any]) -> int | None:
    detail = interval.get("detail")
    return int(str(detail["index"])) if isinstance(detail, dict) else None


def merge_intervals(
    per_worker: Sequence[Sequence[Mapping[str, Any]]], interval_s: float, first: int = 0
) -> list[JsonObject]:
    """The measured intervals (not the drain) from index `first` on that every worker has,
    merged, in order; the ones before `first` were shown already and are not merged again."""
    if not per_worker:
        return []
    by_worker = [
        {
            i: x
            for x in intervals
            if not x.get("drain") and (i := _index(x)) is not None and i >= first
        }
        for intervals in per_worker
    ]
    merged: list[JsonObject] = []
    index = first
    while all(index in mine for mine in by_worker):
        merged.append(merge_one([mine[index] for mine in by_worker], index, interval_s))
        index += 1
    return merged


def merge_one(pieces: Sequence[Mapping[str, Any]], index: int, interval_s: float) -> JsonObject:
    t_s = max(float(str(p.get("t_s", 0.0))) for p in pieces)
    width = max(t_s - index * interval_s, 1e-9)
    out: JsonObject = {k: sum(int(str(p.get(k) or 0)) for p in pieces) for k in SUMMED}
    out["t_s"] = t_s
    out["tps"] = int(str(out["transactions"])) / width
    queries = {k: sum(int(str((p.get("queries") or {}).get(k, 0))) for p in pieces)
               for k in ("read", "write", "other", "total")}  # fmt: skip
    out["queries"] = queries
    out["qps"] = queries["total"] / width
    details = [p["detail"] for p in pieces if isinstance(p.get("detail"), dict)]
    blobs = [str(d["histogram"]) for d in details]
    figures = core.histogram_figures(blobs, QUANTILES)
    if figures.count:
        p50, p95, p99 = figures.values
        out["latency_ms"] = {"mean": figures.mean, "stddev": figures.stddev, "p50": p50,
                             "p95": p95, "p99": p99, "max": figures.max}  # fmt: skip
    lag_count = sum(int(str(d.get("lag_count", 0))) for d in details)
    if lag_count:
        lag_sum = sum(int(str(d.get("lag_sum_us", 0))) for d in details)
        out["lag_ms"] = lag_sum / lag_count / 1000.0
        out["lag_max_ms"] = max(int(str(d.get("lag_max_us", 0))) for d in details) / 1000.0
    return out
