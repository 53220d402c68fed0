"""A history store holding a planted series: ingests of a few runs each around a level that
steps by a known amount at a known ingest, in known noise (written through the real store)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dbscale.history.ingest import point_row
from dbscale.history.rows import RUN, HistoryRow, labels_text
from dbscale.history.store import HistoryStore

START = datetime(2026, 1, 1, tzinfo=UTC)


def planted_store(
    path: Path,
    *,
    points: int,
    step_at: int | None,
    step: float,
    noise: float = 0.01,
    runs: int = 3,
    seed: int = 1,
    metric: str = "tps",
    higher_is_better: bool = True,
    level: float = 1000.0,
) -> HistoryStore:
    """`points` ingests of `runs` runs; from ingest `step_at` on, the level is x (1 + step)."""
    rng = random.Random(seed)
    store = HistoryStore(path)
    for index in range(points):
        at = START + timedelta(days=index)
        centre = level * (1 + (step if step_at is not None and index >= step_at else 0.0))
        rows = [
            _row(index, r, at, centre * (1 + rng.gauss(0, noise)), metric, higher_is_better)
            for r in range(runs)
        ]
        store.add([*rows, point_row(rows)])
    return store


def _row(
    index: int, run: int, at: datetime, value: float, metric: str, higher_is_better: bool
) -> HistoryRow:
    stamp = at.isoformat().replace("+00:00", "Z")
    return HistoryRow(
        ingest_id=f"ingest{index:03d}", ingested_at=stamp, kind=RUN, series_key="planted0001",
        series="tpcb scale=1 clients=4", target_key="target00001", target="pg (vcpus=2)",
        labels=labels_text({"version": f"1.{index}"}), study=f"study{index}",
        point_key="default", run_id=f"run-{index}-{run}", time=stamp, metric=metric,
        value=value, unit="transactions/s", higher_is_better=higher_is_better, n=1,
        ci_low=None, ci_high=None,
    )  # fmt: skip


def values(store: HistoryStore) -> Sequence[float]:
    return [r.value for r in store.rows() if r.kind != RUN]
