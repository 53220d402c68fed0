"""`dbscale.load_results(dir)`: a results directory as pandas DataFrames, for notebooks and
scripts, with the same statistics summary.json holds. Numbers are numeric columns (missing ones
NaN, confidence bounds included), times are UTC datetimes, and every interval row says whether it
belongs to a warm-up. pandas is an optional dependency (`pip install 'dbscale[analysis]'`);
nothing else in dbscale needs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbscale import core
from dbscale.errors import DbscaleError, ResultsError
from dbscale.results.capacity_file import CAPACITY_COLUMNS, capacity_rows
from dbscale.results.cost import add_price_performance
from dbscale.results.directory import RUNS_FILE, read_runs
from dbscale.results.expectations import flag_contradictions
from dbscale.results.measurements import ALL_MICRO, ROW_COLUMNS, collect_measurements
from dbscale.results.metrics import METRICS
from dbscale.results.micro_records import micro_summary, read_micro
from dbscale.results.points import (
    PERCENTILES,
    Cell,
    FlatRow,
    flatten,
    run_steady_state,
    summarize_points,
)
from dbscale.results.record import RunRecord
from dbscale.targets.facts import load_target_records

if TYPE_CHECKING:
    import pandas as pd

# Run fields that are bulky or nested and have their own frames (intervals) or no tabular use.
_RUN_SKIP = ("histogram", "intervals", "transaction_types", "config", "point", "observe")
_TIME_COLUMNS = ("started_at", "ended_at")


class AnalysisDependencyError(DbscaleError):
    default_hint = "install the analysis extra: pip install 'dbscale[analysis]' (pandas)"


@dataclass(frozen=True)
class Results:
    """One results directory: `runs` (one row per run), `intervals` (one row per run and
    second), `summary` (one row per point, over measured runs: summary.csv's columns, the
    price-performance ones included), `resources` (one row per run and observed second, when
    runs were observed), `micro` (one row per micro-benchmark figure and host, micro.jsonl's
    statistics), `micro_samples` (one row per figure sample), `metrics` (one row per
    measured run and metric, as `rank` and `history` read them: the history store's frame has
    the same columns), `capacity` (one row per capacity level run and objective: phase,
    offered, achieved, verdict, the share over the limit with its 95% interval) and
    `statements` (one row per run and statement the server's figures name: calls, server time,
    rows and counters over the window, per transaction, and the client's time where joined)."""

    runs: pd.DataFrame
    intervals: pd.DataFrame
    summary: pd.DataFrame
    resources: pd.DataFrame
    records: tuple[RunRecord, ...]
    micro: pd.DataFrame
    micro_samples: pd.DataFrame
    metrics: pd.DataFrame
    capacity: pd.DataFrame
    statements: pd.DataFrame

    def percentiles(
        self, run_id: str | Sequence[str], quantiles: Sequence[float] = tuple(PERCENTILES.values())
    ) -> pd.Series:
        """Latency (ms) at `quantiles` from a run's histogram, or from the exact merge of several
        runs' histograms (never an average of percentiles)."""
        pandas = _pandas()
        wanted = [run_id] if isinstance(run_id, str) else list(run_id)
        by_id = {r.run_id: r for r in self.records}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise ResultsError(f"no run {missing[0]!r} in these results", "see `.runs.run_id`")
        blobs = [by_id[i].histogram for i in wanted if by_id[i].histogram]
        figures = core.histogram_figures(blobs, list(quantiles))
        series: pd.Series = pandas.Series(
            list(figures.values), index=list(quantiles), dtype="float64"
        )
        return series


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise AnalysisDependencyError("load_results needs pandas, which is not installed") from None
    return pandas


def frame_of(
    rows: Sequence[Mapping[str, Cell]],
    times: Sequence[str] = (),
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Columns that hold numbers (None where absent) become float or int; `times` datetimes;
    `columns`, when given, are there even without rows."""
    pandas = _pandas()
    frame: pd.DataFrame = pandas.DataFrame(rows, columns=columns)
    for column in frame.columns:
        if column in times:
            frame[column] = pandas.to_datetime(frame[column], utc=True, errors="coerce")
            continue
        values = [v for v in frame[column] if v is not None]
        if all(_is_number(v) for v in values):  # all missing too: NaN, pandas' missing value
            frame[column] = pandas.to_numeric(frame[column], errors="coerce")
    return frame


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def load_results(directory: str | Path) -> Results:
    """Reads `runs.jsonl` of `directory` into DataFrames; statistics as in summary.json."""
    _pandas()
    path = Path(directory) / RUNS_FILE
    if not path.is_file():
        raise ResultsError(f"{directory} holds no {RUNS_FILE}", "name a `dbscale run` results dir")
    records = read_runs(path)
    runs: list[FlatRow] = []
    intervals: list[FlatRow] = []
    resources: list[FlatRow] = []
    statements: list[FlatRow] = []
    for record in records:
        data = record.model_dump(mode="json")
        row = flatten({k: v for k, v in data.items() if k not in _RUN_SKIP})
        row["point_key"] = record.group_key
        for axis, value in record.point.items():
            row[f"point_{axis}"] = value
        steady = run_steady_state(record)
        row["steady_state"], row["steady_state_cutoff_s"] = steady.status, steady.cutoff_s
        runs.append(row)
        ids = {"run_id": record.run_id, "point_key": row["point_key"], "warmup": record.warmup}
        for interval in record.intervals:
            flat = flatten(interval.model_dump(mode="json", exclude={"queries"}))
            intervals.append({**ids, **flat})
        resources.extend({**ids, **sample} for sample in _resource_rows(record))
        statements.extend({**ids, **line} for line in _statement_rows(record))
    points = add_price_performance(
        flag_contradictions(summarize_points(records)), load_target_records(Path(directory))
    )
    summary = [flatten(p.to_json()) for p in points]
    micro = read_micro(Path(directory))
    micro_rows = [flatten(row.model_dump(mode="json")) for row in micro_summary(micro)]
    samples: list[FlatRow] = [
        {"key": m.key, "place": m.place, "kind": m.kind, "repetition": m.repetition,
         "vcpus": m.vcpus, "figure": name, "unit": figure.unit, "sample": i, "value": value}
        for m in micro
        for name, figure in m.figures.items()
        for i, value in enumerate(figure.values)
    ]  # fmt: skip
    measured = collect_measurements(Path(directory), [*METRICS, ALL_MICRO])
    return Results(
        metrics=frame_of([m.row() for m in measured.items], ("time",), ROW_COLUMNS),
        runs=frame_of(runs, _TIME_COLUMNS),
        intervals=frame_of(intervals),
        summary=frame_of(summary),
        resources=frame_of(resources),
        records=tuple(records),
        micro=frame_of(micro_rows),
        micro_samples=frame_of(samples),
        capacity=frame_of(capacity_rows(Path(directory)), columns=CAPACITY_COLUMNS),
        statements=frame_of(statements, columns=STATEMENT_COLUMNS if not statements else None),
    )


def _resource_rows(record: RunRecord) -> list[dict[str, int | float | None]]:
    table = record.observe.resources if record.observe is not None else None
    return table.as_rows() if table is not None else []


STATEMENT_COLUMNS = ("run_id", "point_key", "warmup", "fingerprint", "id", "text", "calls",
                     "total_ms", "mean_ms", "rows", "calls_per_txn", "ms_per_txn",
                     "client_mean_ms", "client_count")  # fmt: skip


def _statement_rows(record: RunRecord) -> list[FlatRow]:
    section = record.observe.statements if record.observe is not None else None
    if section is None:
        return []
    committed = record.transactions
    rows: list[FlatRow] = []
    for item in section.statements:
        rows.append(
            {
                "fingerprint": item.fingerprint,
                "id": item.id,
                "text": item.text,
                "calls": item.calls,
                "total_ms": item.total_ms,
                "mean_ms": item.mean_ms,
                "rows": item.rows,
                "calls_per_txn": item.calls / committed if committed else None,
                "ms_per_txn": item.total_ms / committed if committed else None,
                "client_mean_ms": item.client.mean_ms if item.client else None,
                "client_count": item.client.count if item.client else None,
                **item.counters,
            }
        )
    return rows
