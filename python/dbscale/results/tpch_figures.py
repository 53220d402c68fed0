"""The figures of a run of the TPC-H-derived workload, from its record alone: each query's time
(the mean over the run's streams), their geometric mean, and power-, throughput- and QphH-like
figures computed the way TPC-H computes its metrics but from the queries only (no refresh
functions) and on whatever the run was: derived from TPC-H, never comparable to published TPC-H
results, and always labelled so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dbscale import core
from dbscale.modes import WorkloadFamily
from dbscale.results.record import RunRecord

LABEL = "derived from TPC-H, not comparable to published TPC-H results"
QUERIES = tuple(range(1, 23))


@dataclass(frozen=True)
class TpchRunFigures:
    scale_factor: float
    streams: int
    query_s: dict[int, float]  # query number -> mean seconds over the streams that ran it
    geomean_s: float | None  # over the queries that ran, all 22 or the chosen ones
    power: float | None  # 3600 x SF / geomean: queries per hour at the scale, one stream's pace
    throughput: float | None  # streams x queries x 3600 / run seconds x SF
    qph: float | None  # the geometric mean of the two, TPC-H's QphH formula
    complete: bool  # every stream ran every chosen query once at least, none failed


def is_tpch(record: RunRecord) -> bool:
    return core.family_of(record.workload) is WorkloadFamily.TPCH


def run_figures(record: RunRecord) -> TpchRunFigures | None:
    """The run's figures, or None when it is not a TPC-H-derived run or ran no query."""
    if not is_tpch(record):
        return None
    times: dict[int, float] = {}
    failed = 0
    for number in QUERIES:
        entry = record.transaction_types.get(f"q{number}")
        if entry is None:
            continue
        failed += entry.failed
        if entry.transactions and entry.latency_ms is not None and entry.latency_ms.mean:
            times[number] = entry.latency_ms.mean / 1000.0
    if not times:
        return None
    try:
        sf = float(str(record.workload_params.get("scale_factor", 1.0)))
    except ValueError:
        sf = 1.0
    streams = record.clients
    geomean = math.exp(sum(math.log(t) for t in times.values()) / len(times))
    power = 3600.0 * sf / geomean
    throughput = (streams * len(times) * 3600.0 / record.duration_s * sf
                  if record.duration_s > 0 else None)  # fmt: skip
    qph = math.sqrt(power * throughput) if throughput else None
    complete = failed == 0 and all(
        (entry := record.transaction_types.get(f"q{n}")) is not None
        and entry.transactions >= streams
        for n in times
    )
    return TpchRunFigures(sf, streams, times, geomean, power, throughput, qph, complete)
