"""The figures of a run of the TPC-H-derived workload, from its record alone: each query's time
(the mean over the run's streams), the refresh functions' times when the run had them, their
geometric mean, and power-, throughput- and QphH-like figures computed the way TPC-H computes
its metrics (the power figure over the queries and RF1/RF2 when they ran, over the queries
alone otherwise) on whatever the run was: derived from TPC-H, never comparable to published
TPC-H results, and always labelled so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dbscale import core
from dbscale.modes import WorkloadFamily
from dbscale.results.record import RunRecord

LABEL = "derived from TPC-H, not comparable to published TPC-H results"
QUERIES = tuple(range(1, 23))
REFRESH_FUNCTIONS = ("rf1", "rf2")


@dataclass(frozen=True)
class TpchRunFigures:
    scale_factor: float
    streams: int
    query_s: dict[int, float]  # query number -> mean seconds over the streams that ran it
    refresh_s: dict[str, float]  # rf1/rf2 -> mean seconds, when the run had refresh functions
    geomean_s: float | None  # over the queries that ran (all 22 or the chosen ones) and RF1/RF2
    power: float | None  # 3600 x SF / geomean: queries per hour at the scale, one stream's pace
    throughput: float | None  # streams x queries x 3600 / run seconds x SF
    qph: float | None  # the geometric mean of the two, TPC-H's QphH formula
    complete: bool  # every stream ran every chosen query once at least, none failed


def is_tpch(record: RunRecord) -> bool:
    return core.family_of(record.workload) is WorkloadFamily.TPCH


def _mean_s(record: RunRecord, name: str) -> tuple[float | None, int]:
    """The type's mean seconds (None when it never succeeded) and its failures."""
    entry = record.transaction_types.get(name)
    if entry is None:
        return None, 0
    if entry.transactions and entry.latency_ms is not None and entry.latency_ms.mean:
        return entry.latency_ms.mean / 1000.0, entry.failed
    return None, entry.failed


def run_figures(record: RunRecord) -> TpchRunFigures | None:
    """The run's figures, or None when it is not a TPC-H-derived run or ran no query."""
    if not is_tpch(record):
        return None
    times: dict[int, float] = {}
    refresh: dict[str, float] = {}
    failed = 0
    for number in QUERIES:
        mean, failures = _mean_s(record, f"q{number}")
        failed += failures
        if mean is not None:
            times[number] = mean
    for name in REFRESH_FUNCTIONS:
        mean, failures = _mean_s(record, name)
        failed += failures
        if mean is not None:
            refresh[name] = mean
    if not times:
        return None
    try:
        sf = float(str(record.workload_params.get("scale_factor", 1.0)))
    except ValueError:
        sf = 1.0
    streams = record.clients
    timed = [*times.values(), *refresh.values()]
    geomean = math.exp(sum(math.log(t) for t in timed) / len(timed))
    power = 3600.0 * sf / geomean
    throughput = (streams * len(times) * 3600.0 / record.duration_s * sf
                  if record.duration_s > 0 else None)  # fmt: skip
    qph = math.sqrt(power * throughput) if throughput else None
    complete = failed == 0 and all(
        (entry := record.transaction_types.get(f"q{n}")) is not None
        and entry.transactions >= streams
        for n in times
    )
    return TpchRunFigures(sf, streams, times, refresh, geomean, power, throughput, qph, complete)
