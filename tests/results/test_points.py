"""Per-point statistics of summary.json/summary.csv, and `dbscale.load_results`."""

from __future__ import annotations

import csv
import json
import random
import statistics
from pathlib import Path

import pytest

import dbscale
from dbscale.core import histogram_figures
from dbscale.results.directory import ResultsDir
from dbscale.results.points import PERCENTILES, SummarySettings, latency_figures, summarize_points
from tests.synthetic import make_record, study_records, typed, write_results


def test_point_statistics_from_measured_runs_only() -> None:
    records = study_records({"a": 1000}, runs=6, cv=0.01, seed=1)
    rng = random.Random(0)
    records.insert(0, make_record({"tls": "a"}, 10.0, rng=rng, warmup=True))
    cancelled = make_record({"tls": "a"}, 5.0, rng=rng, repetition=9)
    cancelled["cancelled"] = True
    records.append(cancelled)
    [point] = summarize_points(typed(records))
    measured = [r for r in records if not r["warmup"] and not r["cancelled"]]
    tps = sorted(r["tps"] for r in measured)
    assert point.tps.median_ci is not None and point.tps.mean_ci is not None
    assert point.runs == 6
    assert point.tps.median == statistics.median(tps)
    assert point.tps.median_ci.low == tps[0]  # n = 6: [min, max]
    assert point.tps.median_ci.high == tps[-1]
    assert point.tps.mean_ci.method == "student-t"
    merged = latency_figures(
        histogram_figures([r["histogram"] for r in measured], list(PERCENTILES.values()))
    )
    assert point.latency_ms == merged  # pooled, never averaged
    p99s = [r["latency_ms"]["p99"] for r in measured]
    assert point.per_run_latency_ms["p99"].model_dump() == {"min": min(p99s), "max": max(p99s)}
    assert "1 cancelled run(s) left out" in point.flags
    assert point.transaction_types["tpcb-like"].p99 == merged.p99


def test_flags_for_few_runs_high_cv_and_no_steady_state() -> None:
    records = study_records({"a": 1000}, runs=3, cv=0.2, seed=2)
    for i, interval in enumerate(records[0]["intervals"]):
        interval["tps"] = 100.0 + 50 * i  # still climbing at the end
    [point] = summarize_points(typed(records), SummarySettings(cv_threshold_pct=5))
    flags = " | ".join(point.flags)
    assert point.tps.median_ci is None
    assert "needs at least 6" in flags
    assert "fewer than 4 runs" in flags
    assert "above 5%" in flags
    assert "never reached steady state" in flags


def test_summary_files_and_load_results(tmp_path: Path) -> None:
    records = study_records({"a": 1000, "b": 1200}, runs=6, cv=0.01, seed=3)
    directory = write_results(tmp_path / "r", records)
    results = ResultsDir(directory, resume=True)
    results.write_summary(points=summarize_points(results.records))
    rows = list(csv.DictReader((directory / "summary.csv").open()))
    assert [r["point_key"] for r in rows] == ["tls=a", "tls=b"]
    assert float(rows[1]["tps_median_ci_low"]) > 1000
    pytest.importorskip("pandas")
    loaded = dbscale.load_results(directory)
    assert len(loaded.runs) == 12
    assert set(loaded.runs["point_tls"]) == {"a", "b"}
    assert len(loaded.intervals) == 12 * 30
    assert list(loaded.summary["point_key"]) == ["tls=a", "tls=b"]
    assert loaded.summary["tps_median"][0] == pytest.approx(float(rows[0]["tps_median"]))


def test_load_results_has_every_summary_column_and_the_micro_figures(tmp_path: Path) -> None:
    # A target with a size and prices: summary.csv gets the price-performance columns, and the
    # summary frame has every column summary.csv has; micro.jsonl's figures are frames too.
    from dbscale.results.cost import add_price_performance
    from dbscale.results.micro_records import MicroRecord, append_micro
    from dbscale.targets.facts import load_target_records
    from tests.results.test_cost import TARGET

    records = study_records({"a": 1000}, runs=6, cv=0.01, seed=3)
    for record in records:
        record["target_name"] = "main"
    directory = write_results(tmp_path / "r", records)
    (directory / "targets").mkdir()
    (directory / "targets" / "main.json").write_text(json.dumps({"name": "main", **TARGET}))
    results = ResultsDir(directory, resume=True)
    points = add_price_performance(
        summarize_points(results.records), load_target_records(directory)
    )
    results.write_summary(points=points)
    csv_columns = set(next(csv.DictReader((directory / "summary.csv").open())))
    assert any(c.startswith("cost_") for c in csv_columns), csv_columns
    append_micro(directory, MicroRecord(
        key="micro:cpu:main#0", kind="cpu", place="main", repetition=0,
        figures={"cpu per vCPU": {"unit": "iterations/s", "higher_is_better": True,
                                  "values": [100.0, 102.0, 98.0]}},
    ))  # fmt: skip
    pytest.importorskip("pandas")
    loaded = dbscale.load_results(directory)
    assert csv_columns <= set(loaded.summary.columns), csv_columns - set(loaded.summary.columns)
    assert list(loaded.micro["figure"]) == ["cpu per vCPU"]
    assert loaded.micro["median"][0] == 100.0
    assert sorted(loaded.micro_samples["value"]) == [98.0, 100.0, 102.0]


def test_load_results_is_ready_for_analysis(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    from dbscale.core import histogram_figures
    from tests.report.fixtures import record

    observe = {
        "resources": {"interval_s": 1.0, "columns": ["t_s", "client_cpu_cores"],
                      "rows": [[1.0, 0.25], [2.0, None]], "mean": {"client_cpu_cores": 0.25}},
    }  # fmt: skip
    runs = [
        record(seed=1, warmup=True, seconds=2),
        record(seed=2, seconds=3, extra={"observe": observe}),
        record(seed=3, seconds=3),
    ]
    directory = write_results(tmp_path / "r", runs)
    loaded = dbscale.load_results(directory)
    assert str(loaded.runs["started_at"].dtype).startswith("datetime64")
    assert pd.api.types.is_float_dtype(loaded.runs["latency_ms_p99"])
    assert list(loaded.intervals["warmup"]) == [True] * 2 + [False] * 6
    assert pd.api.types.is_float_dtype(loaded.summary["tps_median_ci_low"])  # NaN: 2 runs
    assert loaded.summary["tps_median_ci_low"].isna().all()
    assert list(loaded.resources["client_cpu_cores"].isna()) == [False, True]
    assert loaded.resources["run_id"].tolist() == ["run-2", "run-2"]
    one = loaded.percentiles("run-2", [0.5, 0.99])
    assert one[0.99] == histogram_figures([runs[1]["histogram"]], [0.99]).values[0]
    both = loaded.percentiles(["run-2", "run-3"], [0.99])
    merged = histogram_figures([runs[1]["histogram"], runs[2]["histogram"]], [0.99])
    assert both[0.99] == merged.values[0]
    with pytest.raises(dbscale.errors.ResultsError, match="no run 'nope'"):
        loaded.percentiles("nope")


def test_a_throughput_interval_never_reaches_below_zero() -> None:
    from dbscale.results.points import throughput_summary

    summary = throughput_summary([20.0, 1000.0], 0.95)  # t with 1 dof: mean 510 +- 6,200
    assert summary.mean_ci is not None
    assert summary.mean_ci.low == 0.0 and summary.mean_ci.high > 1000
