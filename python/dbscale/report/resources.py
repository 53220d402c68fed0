"""Resource use from the `observe` section of run records (written by `dbscale.observe`):
per-second resource columns and their window means (`observe.resources`), the server sessions'
wait events (`observe.waits.events`, backend-samples), and the `limited_by` verdict. Shaped here
for seed 000's Fig. 2 (CPU and network against the swept axis), a wait-event breakdown per point,
and the "limited by" column of the point table. Runs without `observe` contribute nothing, and a
study without any draws no resource charts.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeGuard

from dbscale.report.axes import Axis
from dbscale.report.rows import Row, r4, x_value
from dbscale.report.view import PointView, ResultsView, RunView
from dbscale.results.record import RunRecord

MAX_WAIT_PARTS = 8


def window_means(record: RunRecord) -> dict[str, float]:
    """The run's resource columns averaged over its measured window."""
    resources = record.observe.resources if record.observe is not None else None
    if resources is None:
        return {}
    if resources.mean:
        return dict(resources.mean)
    out: dict[str, float] = {}
    for index, column in enumerate(resources.columns):
        values = [row[index] for row in resources.rows if index < len(row)]
        numbers = [float(v) for v in values if _number(v)]
        if numbers and column not in ("t_s", "interval_s"):
            out[column] = statistics.fmean(numbers)
    return out


def utilization(means: Mapping[str, float], server_vcpus: int | None) -> dict[str, float]:
    """The few figures that say which side is busy, named with their units."""
    out: dict[str, float] = {}
    if "client_cpu_cores" in means:
        out["client CPU (cores)"] = means["client_cpu_cores"]
    server_parts = [means[k] for k in ("server_cpu_user_cores", "server_cpu_system_cores")
                    if k in means]  # fmt: skip
    if server_parts:
        cores = sum(server_parts)
        if server_vcpus:
            out["server CPU (% of its vCPUs)"] = 100.0 * cores / server_vcpus
        else:
            out["server CPU (cores)"] = cores
    if "host_idle_pct" in means:
        out["host CPU busy (%)"] = 100.0 - means["host_idle_pct"] - means.get("host_iowait_pct", 0)
    moved = ("rx_bytes_per_s", "tx_bytes_per_s")
    network = [v for k, v in means.items() if k.startswith("net.") and k.endswith(moved)]
    if network:
        out["network in+out (Mbit/s)"] = 8.0 * sum(network) / 1e6
    disk = [means[k] for k in ("server_read_bytes_per_s", "server_write_bytes_per_s") if k in means]
    if disk:
        out["server disk (MB/s)"] = sum(disk) / 1e6
    return out


def _server_vcpus(record: RunRecord) -> int | None:
    vcpus = record.observe.server.vcpus if record.observe is not None else None
    return vcpus if vcpus is not None and vcpus > 0 else None


def point_utilization(point: PointView) -> dict[str, float]:
    """Each figure's mean over the point's observed runs."""
    per_run = [
        utilization(window_means(run.record), _server_vcpus(run.record)) for run in point.runs
    ]
    names = [name for figures in per_run for name in figures]
    return {
        name: statistics.fmean(f[name] for f in per_run if name in f)
        for name in dict.fromkeys(names)
    }


def resource_rows(study: ResultsView, axis: Axis | None) -> list[Row]:
    """One row per point and figure."""
    rows: list[Row] = []
    for point in study.points:
        for metric, value in point_utilization(point).items():
            rows.append(
                {
                    "x": x_value(point, axis),
                    "series": point.series(study.axes, axis.key if axis else None),
                    "point": point.label,
                    "metric": metric,
                    "value": r4(value),
                }
            )
    return rows


def wait_events(record: RunRecord) -> dict[str, float]:
    """Wait event -> backend-samples of active sessions over the run (CPU: running)."""
    waits = record.observe.waits if record.observe is not None else None
    return {k: v for k, v in waits.events.items() if v} if waits is not None else {}


def wait_rows(study: ResultsView) -> list[Row]:
    """Per point, its wait events' shares (the biggest few overall, the rest as "other")."""
    per_point = {p.label: _sum_maps(wait_events(r.record) for r in p.runs) for p in study.points}
    overall = _sum_maps(per_point.values())
    top = [name for name, _ in sorted(overall.items(), key=lambda kv: -kv[1])[:MAX_WAIT_PARTS]]
    rows: list[Row] = []
    for point in study.points:
        totals = per_point[point.label]
        whole = sum(totals.values())
        if whole <= 0:
            continue
        other = whole - sum(totals.get(n, 0.0) for n in top)
        for name, amount in [(n, totals.get(n, 0.0)) for n in top] + [("other", other)]:
            if amount > 0:
                rows.append(
                    {"point": point.label, "part": name, "share": r4(amount / whole),
                     "amount": r4(amount)}
                )  # fmt: skip
    return rows


def _sum_maps(maps: Iterable[Mapping[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for m in maps:
        for key, value in m.items():
            out[key] = out.get(key, 0.0) + value
    return out


def limited_by(record: RunRecord) -> str:
    """The run's verdict, e.g. `server-cpu`; "" when the run was not observed."""
    return record.limited_by.verdict if record.limited_by is not None else ""


def point_limited_by(runs: Sequence[RunView]) -> str:
    """The verdicts of a point's runs, most frequent first (`server-cpu x3, client-cpu x1`)."""
    counts: dict[str, int] = {}
    for run in runs:
        verdict = limited_by(run.record)
        if verdict:
            counts[verdict] = counts.get(verdict, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    if len(ranked) == 1 and ranked[0][1] == len(runs):
        return ranked[0][0]
    return ", ".join(f"{v} x{n}" for v, n in ranked)


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
