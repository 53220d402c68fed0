"""The store's rows as series: per series and metric, its points in time order (a point's time
is its first run's start; two ingests of the same moment go in the order they were added), each
with the runs behind it. Excluded runs are taken out and their point recomputed from the runs
left (a point with none left is dropped)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from dbscale.history.ingest import point_row
from dbscale.history.rows import POINT, RUN, HistoryRow, labels_of
from dbscale.history.store import Exclusion


@dataclass(frozen=True)
class SeriesPoint:
    ingest_id: str
    ingested_at: str
    time: str
    labels: dict[str, str]
    value: float
    n: int
    ci_low: float | None
    ci_high: float | None
    runs: tuple[float, ...]
    run_ids: tuple[str, ...]

    def label_words(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.labels.items()) or self.time[:19]


@dataclass(frozen=True)
class Series:
    series_key: str
    series: str
    target_key: str
    target: str
    metric: str
    unit: str
    higher_is_better: bool
    points: tuple[SeriesPoint, ...]
    excluded_runs: int = 0


def _point(row: HistoryRow, runs: Sequence[HistoryRow]) -> SeriesPoint:
    return SeriesPoint(
        ingest_id=row.ingest_id, ingested_at=row.ingested_at, time=row.time,
        labels=labels_of(row), value=row.value, n=row.n, ci_low=row.ci_low, ci_high=row.ci_high,
        runs=tuple(r.value for r in runs), run_ids=tuple(r.run_id for r in runs),
    )  # fmt: skip


def build_series(
    rows: Sequence[HistoryRow],
    exclusions: Sequence[Exclusion],
    *,
    metrics: Collection[str] | None = None,
    last: int | None = None,
) -> list[Series]:
    excluded = {e.run_id for e in exclusions}
    runs: dict[tuple[str, str, str], list[HistoryRow]] = defaultdict(list)
    points: dict[tuple[str, str], list[HistoryRow]] = defaultdict(list)
    for row in rows:
        if metrics is not None and row.metric not in metrics:
            continue
        if row.kind == RUN:
            runs[(row.ingest_id, row.series_key, row.metric)].append(row)
        elif row.kind == POINT:
            points[(row.series_key, row.metric)].append(row)
    found = []
    for (_key, _metric), point_rows in points.items():
        made, dropped = [], 0
        for row in point_rows:
            behind = runs[(row.ingest_id, row.series_key, row.metric)]
            kept = [r for r in behind if r.run_id not in excluded]
            dropped += len(behind) - len(kept)
            if not kept:
                continue
            made.append(_point(row if len(kept) == len(behind) else point_row(kept), kept))
        made.sort(key=lambda p: (p.time, p.ingested_at))
        if last is not None:
            made = made[-last:]
        if not made:
            continue
        first = point_rows[0]
        found.append(Series(
            first.series_key, first.series, first.target_key, first.target, first.metric,
            first.unit, first.higher_is_better, tuple(made), dropped,
        ))  # fmt: skip
    found.sort(key=lambda s: (s.series, s.target, s.metric))
    return found
