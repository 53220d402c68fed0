"""`dbscale.load_results(dir)`: a results directory as pandas DataFrames, for notebooks and
scripts. pandas is an optional dependency (`pip install 'dbscale[analysis]'`); nothing else in
dbscale needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbscale.errors import DbscaleError, ResultsError
from dbscale.results.directory import RUNS_FILE, read_runs
from dbscale.results.points import flatten, record_point_key, run_steady_state, summarize_points

if TYPE_CHECKING:
    import pandas as pd

# Run fields that are bulky or nested and have their own frames (intervals) or no tabular use.
_RUN_SKIP = ("histogram", "intervals", "transaction_types", "config", "point")


class AnalysisDependencyError(DbscaleError):
    default_hint = "install the analysis extra: pip install 'dbscale[analysis]' (pandas)"


@dataclass(frozen=True)
class Results:
    """One results directory: `runs` (one row per run), `intervals` (one row per run and
    second), `summary` (one row per point, over measured runs)."""

    runs: pd.DataFrame
    intervals: pd.DataFrame
    summary: pd.DataFrame


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise AnalysisDependencyError("load_results needs pandas, which is not installed") from None
    return pandas


def load_results(directory: str | Path) -> Results:
    """Reads `runs.jsonl` of `directory` into DataFrames; statistics as in summary.json."""
    pd = _pandas()
    path = Path(directory) / RUNS_FILE
    if not path.is_file():
        raise ResultsError(f"{directory} holds no {RUNS_FILE}", "name a `dbscale run` results dir")
    records = read_runs(path)
    runs, intervals = [], []
    for record in records:
        row = flatten({k: v for k, v in record.items() if k not in _RUN_SKIP})
        row["point_key"] = record_point_key(record)
        for axis, value in (record.get("point") or {}).items():
            row[f"point_{axis}"] = value
        steady = run_steady_state(record)
        row["steady_state"], row["steady_state_cutoff_s"] = steady["status"], steady["cutoff_s"]
        runs.append(row)
        for interval in record.get("intervals") or []:
            flat = flatten({k: v for k, v in interval.items() if k != "queries"})
            intervals.append(
                {"run_id": record.get("run_id"), "point_key": row["point_key"], **flat}
            )
    summary = [flatten(p) for p in summarize_points(records)]
    return Results(pd.DataFrame(runs), pd.DataFrame(intervals), pd.DataFrame(summary))
