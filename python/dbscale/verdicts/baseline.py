"""What `F * baseline` in a threshold refers to: the same metric of the same series (what was
run, where; the server's version aside) in a baseline, or, failing that, of the same point key.

- a results directory: the median of its measured runs there;
- `history:STORE`: the newest point of that series in a history store (the median of its runs).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from dbscale.errors import ConfigError
from dbscale.history.series import build_series
from dbscale.history.store import HistoryStore
from dbscale.results.measurements import collect_measurements

HISTORY_PREFIX = "history:"
HINT = "give a results directory `dbscale run` wrote, or history:STORE (a `dbscale history` store)"


@dataclass
class Baseline:
    """Reference values by (metric, series key) and by (metric, point key)."""

    source: str
    by_series: dict[tuple[str, str], float] = field(default_factory=dict)
    by_point: dict[tuple[str, str], float] = field(default_factory=dict)

    def value(self, metric: str, series_key: str, point_key: str) -> float | None:
        found = self.by_series.get((metric, series_key))
        return found if found is not None else self.by_point.get((metric, point_key))


def _from_directory(path: Path, metrics: Collection[str]) -> Baseline:
    found = collect_measurements(path, sorted(metrics))
    series: dict[tuple[str, str], list[float]] = defaultdict(list)
    points: dict[tuple[str, str], list[float]] = defaultdict(list)
    for m in found.items:
        series[(m.metric, m.series_key)].append(m.value)
        points[(m.metric, m.point_key)].append(m.value)
    return Baseline(
        str(path),
        {k: statistics.median(v) for k, v in series.items()},
        {k: statistics.median(v) for k, v in points.items()},
    )


def _from_history(path: Path, metrics: Collection[str]) -> Baseline:
    """Each series' newest point, by series and by the point key its runs had (what a run in
    progress knows of itself)."""
    store = HistoryStore(path)
    rows = store.rows()
    series = build_series(rows, store.exclusions(), metrics=set(metrics))
    newest = {(s.metric, s.series_key): s.points[-1] for s in series}
    by_point = {(r.metric, r.point_key): newest[(r.metric, r.series_key)].value for r in rows
                if (r.metric, r.series_key) in newest
                and r.ingest_id == newest[(r.metric, r.series_key)].ingest_id}  # fmt: skip
    by_series = {key: point.value for key, point in newest.items()}
    return Baseline(f"{HISTORY_PREFIX}{path}", by_series, by_point)


def check_baseline(source: str) -> None:
    """Before anything runs: the baseline is there to be read."""
    if source.startswith(HISTORY_PREFIX):
        store = HistoryStore(Path(source.removeprefix(HISTORY_PREFIX)))
        if not store.has_ingests:
            raise ConfigError(f"the baseline's history store {store.path} holds no ingest", HINT)
    elif not Path(source).is_dir():
        raise ConfigError(f"the baseline {source} is not a directory", HINT)


def load_baseline(source: str, metrics: Collection[str]) -> Baseline:
    """The baseline named by a plan's `thresholds.baseline` or `--baseline`."""
    check_baseline(source)
    if source.startswith(HISTORY_PREFIX):
        return _from_history(Path(source.removeprefix(HISTORY_PREFIX)), metrics)
    return _from_directory(Path(source), metrics)
