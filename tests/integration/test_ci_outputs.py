"""What a CI reads, from a real study (issue 45): a plan with one passing and one failing
threshold exits 11 with a JUnit file of two testcases and one failure; runs.jsonl, summary.json
and thresholds.json validate against the published schemas; the report says which passed;
`--abort-on-fail` stops a study once its grace is over, keeping the runs; compare and history
detect write JUnit; the history export's NDJSON rows fit their BigQuery schema; the TPC-B runs
export in PostgresBench's shape."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from junitparser import Failure, JUnitXml

from dbscale.errors import EXIT_THRESHOLD
from tests.conftest import REPO
from tests.integration.conftest import dbscale, read_runs

pytestmark = [pytest.mark.server, pytest.mark.native]

PLAN = """
name: ci-proof
targets: [{{name: pg, url: {url}}}]
workload: tpcb-select-only
load: {{clients: 2, duration: 1s}}
repeat: 3
warmup_runs: 0
thresholds:
  - p99_ms < 1000
  - tps >= 1000000000
"""
# PostgresBench's result files (ClickHouse/PostgresBench, rds/results/*.json) have these keys.
POSTGRESBENCH_KEYS = {"system", "date", "machine", "instance", "cluster_size", "tuned", "comment",
                      "postgres_version", "benchmark", "load", "results"}  # fmt: skip
POSTGRESBENCH_RUN = {"run", "tps", "transactions", "failed_transactions", "latency_avg_ms",
                     "latency_stddev_ms", "initial_connection_time_ms", "latency_p95_ms",
                     "latency_p99_ms"}  # fmt: skip
BQ_TYPES: dict[str, tuple[type, ...]] = {"STRING": (str,), "FLOAT64": (float, int),
                                         "INT64": (int,), "BOOL": (bool,)}  # fmt: skip


def _validator(name: str) -> jsonschema.Draft202012Validator:
    found = json.loads((REPO / "schemas" / f"{name}.schema.json").read_text())
    return jsonschema.Draft202012Validator(found)


@pytest.fixture(scope="module")
def judged(tpcb_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    where = tmp_path_factory.mktemp("ci")
    plan = where / "plan.yml"
    plan.write_text(PLAN.format(url=tpcb_url))
    out, junit = where / "study", where / "junit.xml"
    done = dbscale("run", str(plan), "--out", str(out), "--junit", str(junit))
    return {"done": done, "out": out, "junit": junit, "where": where}


def test_one_failing_threshold_fails_the_build(judged: dict[str, Any]) -> None:
    done = judged["done"]
    assert done.code == EXIT_THRESHOLD, done.text
    done.assert_user_error()
    assert "error: threshold tps >= 1000000000 fail at tpcb-select-only @ pg" in done.err
    assert "threshold p99_ms < 1000 @ tpcb-select-only @ pg: pass:" in done.out
    assert "thresholds: failed (1 of 2)" in done.out
    [suite] = list(JUnitXml.fromfile(str(judged["junit"])))
    cases = list(suite)
    assert len(cases) == 2 and suite.failures == 1
    [failure] = [r for case in cases for r in case.result if isinstance(r, Failure)]
    # The failure text: the value, its interval over the runs and the limit.
    assert " over 3 runs against >= 1,000,000,000" in (failure.message or "")
    page = (judged["out"] / "report.html").read_text()
    assert "Thresholds: 1 of 2 passed, 1 failed" in page


def test_the_files_validate_against_the_published_schemas(judged: dict[str, Any]) -> None:
    out = judged["out"]
    runs = read_runs(out / "runs.jsonl")
    assert len(runs) == 3 and all(r["schema_version"] == 1 for r in runs)
    for record in runs:
        _validator("runs").validate(record)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["schema_version"] == 1
    _validator("summary").validate(summary)
    thresholds = json.loads((out / "thresholds.json").read_text())
    _validator("thresholds").validate(thresholds)
    assert [v["verdict"] for v in thresholds["verdicts"]] == ["pass", "fail"]
    # The schema is not a rubber stamp: a record with a wrong type is refused.
    with pytest.raises(jsonschema.ValidationError):
        _validator("runs").validate({**runs[0], "tps": "fast"})


def test_postgresbench_export_has_their_shape(judged: dict[str, Any]) -> None:
    target = judged["where"] / "postgresbench"
    dbscale("export", "postgresbench", str(judged["out"]), "--out", str(target),
            "--system", "dbscale test PostgreSQL").assert_ok()  # fmt: skip
    [path] = list(target.glob("*.json"))
    found = json.loads(path.read_text())
    assert set(found) == POSTGRESBENCH_KEYS
    assert found["system"] == "dbscale test PostgreSQL"
    assert found["benchmark"]["workload"] == "TPC-B (select-only)"
    assert found["benchmark"]["scale_factor"] == 1 and found["benchmark"]["clients"] == 2
    assert [r["run"] for r in found["results"]] == [1, 2, 3]
    runs = read_runs(judged["out"] / "runs.jsonl")
    for row, record in zip(found["results"], runs, strict=True):
        assert set(row) == POSTGRESBENCH_RUN
        assert row["transactions"] == record["transactions"]
        assert row["tps"] == pytest.approx(record["tps"], rel=1e-6)
        assert 0 < row["latency_avg_ms"] <= row["latency_p95_ms"] <= row["latency_p99_ms"]


def test_compare_and_history_write_junit(judged: dict[str, Any]) -> None:
    where, out = judged["where"], judged["out"]
    junit = where / "compare.xml"
    dbscale("compare", str(out), str(out), "--junit", str(junit)).assert_ok()
    [suite] = list(JUnitXml.fromfile(str(junit)))
    assert {case.name for case in suite} == {"tps @ default", "p95_ms @ default",
                                             "p99_ms @ default"}  # fmt: skip
    assert suite.failures == 0
    store = where / "history"
    dbscale("history", "add", str(out), "--store", str(store), "--label", "v=1").assert_ok()
    junit = where / "history.xml"
    done = dbscale("history", "detect", "--store", str(store), "--fail-on", "regression",
                   "--junit", str(junit))  # fmt: skip
    done.assert_ok()
    [suite] = list(JUnitXml.fromfile(str(junit)))
    assert suite.tests == 2 and suite.failures == 0  # tps and p99_ms, one point each: skipped


def test_the_history_export_fits_its_bigquery_schema(judged: dict[str, Any]) -> None:
    where = judged["where"]
    store = where / "history-bq"
    dbscale("history", "add", str(judged["out"]), "--store", str(store)).assert_ok()
    rows_file, schema_file = where / "rows.ndjson", where / "bq.json"
    dbscale("history", "export", "--store", str(store), "--format", "ndjson", "--out",
            str(rows_file), "--bq-schema", str(schema_file)).assert_ok()  # fmt: skip
    fields = json.loads(schema_file.read_text())
    rows = [json.loads(line) for line in rows_file.read_text().splitlines()]
    assert rows
    for row in rows:
        assert set(row) == {f["name"] for f in fields}
        for field in fields:
            value = row[field["name"]]
            if value is None:
                assert field["mode"] == "NULLABLE", field
                continue
            assert isinstance(value, BQ_TYPES[field["type"]]), (field, value)
            assert not (field["type"] != "BOOL" and isinstance(value, bool)), (field, value)
        _validator("history-row").validate(row)


ABORT_PLAN = """
name: abort-proof
targets: [{{name: pg, url: {url}}}]
workload:
  name: script
  scripts: [{{file: one.sql}}]
load: {{clients: 1, duration: {duration}}}
repeat: {repeat}
warmup_runs: 0
thresholds:
  checks: [{check}]
  abort_on_fail: true
  grace: 2s
"""


def _abort(live: Any, tmp_path: Path, **plan: object) -> tuple[list[dict[str, Any]], float]:
    (tmp_path / "one.sql").write_text("SELECT 1;\n")
    (tmp_path / "plan.yml").write_text(ABORT_PLAN.format(url=live.url, **plan))
    started = time.monotonic()
    done = dbscale("run", "plan.yml", "--out", "out", cwd=tmp_path)
    took = time.monotonic() - started
    assert done.code == EXIT_THRESHOLD, done.text
    thresholds = json.loads((tmp_path / "out" / "thresholds.json").read_text())
    assert "by --abort-on-fail" in thresholds["aborted"] and "stopped after" in done.out
    return read_runs(tmp_path / "out" / "runs.jsonl"), took


def test_abort_on_fail_stops_a_run_as_it_goes(live: Any, tmp_path: Path) -> None:
    """A threshold no second can meet, 5 runs of 20 s planned, a grace of 2 s: the first run
    stops once the grace is over and two seconds in a row broke it (k6 looks every 2 s), kept
    as a cancelled run; nothing more runs; exit 11."""
    runs, took = _abort(live, tmp_path, duration="20s", repeat=5, check="tps >= 1000000000")
    [run] = runs
    assert run["cancelled"] is True
    assert run["duration_s"] <= 2 + 2 + 1, run["duration_s"]  # grace + two seconds + a poll
    assert took < 20, took


def test_abort_on_fail_judges_a_point_as_its_runs_end(live: Any, tmp_path: Path) -> None:
    """A threshold a second cannot say (p999_ms: from the whole run's histogram) is judged as
    each run ends: the study stops after the first run past the grace."""
    runs, took = _abort(live, tmp_path, duration="1s", repeat=20, check="p999_ms < 0.0001")
    assert 2 <= len(runs) <= 5, len(runs)  # 20 planned
    assert not any(r["cancelled"] for r in runs)
    assert took < 20, took
