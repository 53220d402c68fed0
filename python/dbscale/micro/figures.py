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

from dbscale.micro.results import CpuResult, DiskResult, NetResult


@dataclass(frozen=True)
class Figure:
    unit: str
    higher_is_better: bool
    values: list[float]


def cpu_figures(result: CpuResult) -> dict[str, Figure]:
    """Iterations per second of each run: one thread, every CPU, and that per vCPU."""
    return {
        "cpu one thread": Figure("iterations/s", True, list(result.single.runs)),
        "cpu all vCPUs": Figure("iterations/s", True, list(result.multi.runs)),
        "cpu per vCPU": Figure("iterations/s", True, list(result.per_vcpu.runs)),
    }


def disk_figures(result: DiskResult) -> dict[str, Figure]:
    """Per job and direction that moved data: IOPS, MiB/s and p99 completion latency; the
    fsync p99 where the job synced."""
    out: dict[str, Figure] = {}
    for job in result.jobs:
        for side, figures in (("read", job.read), ("write", job.write)):
            if not figures.iops:
                continue
            out[f"{job.job} {side} IOPS"] = Figure("IOPS", True, [figures.iops])
            mib = figures.bandwidth_kib_s / 1024
            out[f"{job.job} {side} MiB/s"] = Figure("MiB/s", True, [round(mib, 2)])
            if "99" in figures.latency_us:
                out[f"{job.job} {side} p99"] = Figure("us", False, [figures.latency_us["99"]])
        if job.fsync is not None and "99" in job.fsync.latency_us:
            out[f"{job.job} fsync p99"] = Figure("us", False, [job.fsync.latency_us["99"]])
    return out


def net_figures(result: NetResult) -> dict[str, Figure]:
    """Request/response rate and latency, and the streams' mean aggregate throughput."""
    out: dict[str, Figure] = {}
    rr = result.request_response
    if rr is not None and rr.transactions_per_s is not None:
        out["net request/response"] = Figure("transactions/s", True, [rr.transactions_per_s])
    for value, label in ((rr.p50_us, "p50"), (rr.p99_us, "p99")) if rr is not None else ():
        if value is not None:
            out[f"net request/response {label}"] = Figure("us", False, [value])
    if result.streams is not None and result.streams.mean_gbps is not None:
        out["net streams"] = Figure("Gbit/s", True, [result.streams.mean_gbps])
    return out


def figures_of(kind: str, result: Mapping[str, Any]) -> dict[str, Figure]:
    """The figures of a step's `result` (as micro.jsonl keeps it) of kind cpu, disk or net."""
    if kind == "cpu":
        return cpu_figures(CpuResult.model_validate(result))
    if kind == "disk":
        return disk_figures(DiskResult.model_validate(result))
    return net_figures(NetResult.model_validate(result))
