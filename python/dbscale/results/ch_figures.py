"""The figures of CH-benCHmark runs, from their records alone: per run tpmC beside the analytic
queries per hour and each query's mean time; per study, the tpmC a point's analytic streams cost
against the same terminals without streams (`analytic_streams=0`, same target and parameters),
as the change of the medians with its bootstrap 95% interval (stats/comparison.py)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dbscale import core
from dbscale.modes import WorkloadFamily
from dbscale.results.record import RunRecord
from dbscale.stats.comparison import median_ratio_interval

QUERIES = tuple(range(1, 23))
STREAMS = "analytic_streams"
_QUERY_TYPES = frozenset(f"q{n}" for n in QUERIES)


@dataclass(frozen=True)
class ChRunFigures:
    streams: int
    terminals: int
    tpmc: float | None
    queries_per_hour: float
    query_s: dict[int, float]  # query number -> mean seconds over the run's streams
    failed_queries: int


@dataclass(frozen=True)
class TpmcCost:
    """What a point's streams cost its terminals: tpmC's median change against the baseline."""

    baseline: str
    point: str
    streams: int
    change_pct: float
    low_pct: float | None
    high_pct: float | None
    runs: tuple[int, int]  # baseline's, the point's


def is_ch(record: RunRecord) -> bool:
    return core.family_of(record.workload) is WorkloadFamily.CH


def streams_of(record: RunRecord) -> int:
    try:
        return int(str(record.workload_params.get(STREAMS, 1)))
    except ValueError:
        return 0


def is_query_type(name: str) -> bool:
    """Whether a transaction type is one of the analytic queries (`q1`..`q22`)."""
    return name in _QUERY_TYPES


def terminal_types(record: RunRecord) -> frozenset[str]:
    """The run's TPC-C terminals' transaction types (every type but the analytic queries)."""
    seen = set(record.transaction_types)
    for interval in record.intervals:
        seen.update(interval.by_type, interval.failed_by_type)
    return frozenset(name for name in seen if not is_query_type(name))


def run_figures(record: RunRecord) -> ChRunFigures | None:
    """The run's figures, or None when it is not a CH-benCHmark run."""
    if not is_ch(record):
        return None
    streams = streams_of(record)
    times: dict[int, float] = {}
    done = failed = 0
    for number in QUERIES:
        entry = record.transaction_types.get(f"q{number}")
        if entry is None:
            continue
        done += entry.transactions
        failed += entry.failed
        if entry.transactions and entry.latency_ms is not None and entry.latency_ms.mean:
            times[number] = entry.latency_ms.mean / 1000.0
    per_hour = done * 3600.0 / record.duration_s if record.duration_s > 0 else 0.0
    return ChRunFigures(streams, max(record.clients - streams, 0), record.tpmc, per_hour, times,
                        failed)  # fmt: skip


def _alike(record: RunRecord) -> tuple[object, ...]:
    """What a baseline shares with the point it is one for: all but the streams."""
    params = {k: str(v) for k, v in record.workload_params.items() if k != STREAMS}
    return (record.target_name, tuple(sorted(params.items())), record.clients - streams_of(record))


def tpmc_costs(points: Mapping[str, Sequence[RunRecord]]) -> list[TpmcCost]:
    """For each point with analytic streams whose baseline (no streams, alike otherwise) ran
    too, tpmC's change from the baseline's median, with its interval (None: too few runs)."""
    baselines: dict[tuple[object, ...], tuple[str, list[float]]] = {}
    for label, runs in points.items():
        ch = [r for r in runs if is_ch(r) and r.tpmc is not None]
        if ch and streams_of(ch[0]) == 0:
            baselines[_alike(ch[0])] = (label, [r.tpmc for r in ch if r.tpmc is not None])
    costs: list[TpmcCost] = []
    for label, runs in points.items():
        ch = [r for r in runs if is_ch(r) and r.tpmc is not None]
        if not ch or streams_of(ch[0]) == 0 or _alike(ch[0]) not in baselines:
            continue
        base_label, base = baselines[_alike(ch[0])]
        mine = [r.tpmc for r in ch if r.tpmc is not None]
        if not base or not mine or min(*base, *mine) <= 0:
            continue
        interval = median_ratio_interval(base, mine)
        change = statistics.median(mine) / statistics.median(base) - 1.0
        low, high = (interval[1], interval[2]) if interval else (None, None)
        costs.append(TpmcCost(
            base_label, label, streams_of(ch[0]), 100.0 * change,
            None if low is None else 100.0 * low, None if high is None else 100.0 * high,
            (len(base), len(mine)),
        ))  # fmt: skip
    return costs
