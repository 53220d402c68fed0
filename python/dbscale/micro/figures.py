"""The figures of a micro-benchmark's result, by name, each with its unit, which way is better
and its samples: the CPU score of each of its runs, fio's IOPS, bandwidth and p99 latencies per
job, the network's request/response rate and latencies and the streams' aggregate throughput.
Records keep them (micro.jsonl) and the summary's statistics are computed over them, pooled over
a host's repetitions, as a point's are over its runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dbscale.values import JsonObject


@dataclass(frozen=True)
class Figure:
    unit: str
    higher_is_better: bool
    values: list[float]

    def as_json(self) -> JsonObject:
        return {"unit": self.unit, "higher_is_better": self.higher_is_better,
                "values": list(self.values)}  # fmt: skip


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def cpu_figures(result: Mapping[str, Any]) -> dict[str, Figure]:
    """Iterations per second of each run: one thread, every CPU, and that per vCPU."""
    out: dict[str, Figure] = {}
    for key, name in (("single", "cpu one thread"), ("multi", "cpu all vCPUs"),
                      ("per_vcpu", "cpu per vCPU")):  # fmt: skip
        runs = (result.get(key) or {}).get("runs") or []
        out[name] = Figure("iterations/s", True, [float(v) for v in runs])
    return out


def disk_figures(result: Mapping[str, Any]) -> dict[str, Figure]:
    """Per job and direction that moved data: IOPS, MiB/s and p99 completion latency; the
    fsync p99 where the job synced."""
    out: dict[str, Figure] = {}
    for job in result.get("jobs") or []:
        name = str(job.get("job"))
        for side in ("read", "write"):
            figures = job.get(side) or {}
            if not figures.get("iops"):
                continue
            out[f"{name} {side} IOPS"] = Figure("IOPS", True, [float(figures["iops"])])
            mib = float(figures.get("bandwidth_kib_s", 0.0)) / 1024
            out[f"{name} {side} MiB/s"] = Figure("MiB/s", True, [round(mib, 2)])
            p99 = _number((figures.get("latency_us") or {}).get("99"))
            if p99 is not None:
                out[f"{name} {side} p99"] = Figure("us", False, [p99])
        sync_p99 = _number(((job.get("fsync") or {}).get("latency_us") or {}).get("99"))
        if sync_p99 is not None:
            out[f"{name} fsync p99"] = Figure("us", False, [sync_p99])
    return out


def net_figures(result: Mapping[str, Any]) -> dict[str, Figure]:
    """Request/response rate and latency, and the streams' mean aggregate throughput."""
    rr = result.get("request_response") or {}
    streams = result.get("streams") or {}
    out: dict[str, Figure] = {}
    rate = _number(rr.get("transactions_per_s"))
    if rate is not None:
        out["net request/response"] = Figure("transactions/s", True, [rate])
    for key, label in (("p50_us", "p50"), ("p99_us", "p99")):
        value = _number(rr.get(key))
        if value is not None:
            out[f"net request/response {label}"] = Figure("us", False, [value])
    mean = _number(streams.get("mean_gbps"))
    if mean is not None:
        out["net streams"] = Figure("Gbit/s", True, [mean])
    return out


def figures_of(kind: str, result: Mapping[str, Any]) -> dict[str, Figure]:
    reader = {"cpu": cpu_figures, "disk": disk_figures, "net": net_figures}[kind]
    return reader(result)
