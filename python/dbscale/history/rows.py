"""The history store's rows: long, one value a row, like PerfKitBenchmarker's samples. A `run` row
is one run's value of one metric; a `point` row is what an ingest adds to a series: the median
of that ingest's runs of it, with n and its 95% interval. Both carry the series they belong to.

A series is what was run (workload, parameters, clients, rate, point axes, objectives) where it
ran (the target's name and facts, the client's CPU model), but not the server's version: a
version is what history follows, like the labels an ingest is given (`--label version=16.4`).
Its keys and words are the measurement's (results/measurements.py).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields

from dbscale.stats.confidence import mean_t_ci, median_order_statistic_ci

RUN, POINT = "run", "point"


@dataclass(frozen=True)
class HistoryRow:
    ingest_id: str
    ingested_at: str  # ISO 8601, UTC
    kind: str  # run | point
    series_key: str
    series: str  # what was run, as words
    target_key: str
    target: str  # where, as words
    labels: str  # a JSON object
    study: str
    point_key: str
    run_id: str  # "" on a point row
    time: str  # the run's start; a point's: its first run's
    metric: str
    value: float
    unit: str
    higher_is_better: bool
    n: int
    ci_low: float | None
    ci_high: float | None

    def to_json(self) -> dict[str, object]:
        return asdict(self)


COLUMNS = tuple(f.name for f in fields(HistoryRow))
SQL_TYPES = {"value": "DOUBLE", "ci_low": "DOUBLE", "ci_high": "DOUBLE", "n": "INTEGER",
             "higher_is_better": "BOOLEAN"}  # fmt: skip


def point_figures(values: Sequence[float]) -> tuple[float, float | None, float | None]:
    """An ingest's point of a series: the median of its runs, and the median's 95% interval
    (order statistics from 6 runs; the mean's t-interval with 2-5, which for a few spread runs
    of a metric that cannot be negative, as every history metric, stops at 0)."""
    ci = median_order_statistic_ci(values) or mean_t_ci(values)
    low = ci.low if ci else None
    if low is not None and low < 0 <= min(values):
        low = 0.0
    return statistics.median(values), low, (ci.high if ci else None)


def labels_text(labels: Mapping[str, str]) -> str:
    return json.dumps(dict(sorted(labels.items())), separators=(",", ":"))


def labels_of(row: HistoryRow) -> dict[str, str]:
    found = json.loads(row.labels or "{}")
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}
