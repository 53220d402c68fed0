"""`dbscale history detect` and `show` on stores with planted series: the change found at the
ingest it was planted in, with its size and label; a regression in the newest ingest fails with
exit 9; few points fall back to A/B and say so; exclusions recompute a point; export."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from dbscale.cli.app import run_cli
from dbscale.errors import EXIT_OK, EXIT_REGRESSION, EXIT_USAGE
from dbscale.history.detect import A_B, CHANGE_POINTS, DetectSettings, detect
from dbscale.history.rows import point_figures
from dbscale.history.series import build_series
from tests.history.planted import planted_store


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_planted_drop_is_found_at_its_ingest(tmp_path: Path) -> None:
    store = planted_store(tmp_path / "h", points=20, step_at=12, step=-0.06)
    series = build_series(store.rows(), store.exclusions())
    (result,) = detect(series, DetectSettings(), newest="ingest019")
    assert result.method == CHANGE_POINTS
    (found,) = result.findings
    assert found.index == 12 and found.point.labels == {"version": "1.12"}
    assert found.direction == "regression" and not found.in_newest
    assert found.change_pct == pytest.approx(-6.0, abs=1.0)
    assert found.ci_low_pct is not None and found.ci_high_pct is not None
    assert found.ci_low_pct < -4.5 and found.ci_high_pct > -7.5 and found.ci_high_pct < 0
    assert found.p_value is not None and found.p_value < 0.001


def test_latency_up_is_a_regression_and_the_newest_fails_ci(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = planted_store(tmp_path / "h", points=15, step_at=14, step=0.25, metric="p99_ms",
                          higher_is_better=False, level=10.0)  # fmt: skip
    code, out, err = _run(capsys, "history", "detect", "--store", str(store.path), "--metric",
                          "p99_ms", "--fail-on", "regression")  # fmt: skip
    assert code == EXIT_REGRESSION, err
    assert "regression" in out and "version=1.14 (newest)" in out
    assert err.startswith("error: regression in the newest ingest: p99_ms of tpcb scale=1")
    assert "near version=1.14" in err and "\nhint: " in err
    code, out, _ = _run(capsys, "history", "detect", "--store", str(store.path), "--metric",
                        "p99_ms")  # fmt: skip
    assert code == EXIT_OK


def test_a_flat_series_has_no_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = planted_store(tmp_path / "h", points=20, step_at=None, step=0.0)
    code, out, err = _run(capsys, "history", "detect", "--store", str(store.path), "--fail-on",
                          "regression", "--json")  # fmt: skip
    assert code == EXIT_OK, err
    (entry,) = json.loads(out)
    assert entry["changes"] == [] and len(entry["points"]) == 20
    assert entry["method"] == CHANGE_POINTS
    # Said in words too, on the console and on the page, rather than an empty table.
    for command in ("detect", "show"):
        code, out, err = _run(capsys, "history", command, "--store", str(store.path))
        assert code == EXIT_OK and "no changes found in 1 series" in out, out + err
    page = tmp_path / "flat.html"
    _run(capsys, "history", "show", "--store", str(store.path), "--html", str(page))
    assert "No changes found in 1 series." in page.read_text()


def test_a_points_interval_of_a_positive_metric_stops_at_zero() -> None:
    median, low, high = point_figures([1.0, 100.0])  # the mean's t-interval reaches far below 0
    assert median == 50.5 and low == 0.0 and high is not None and high > 100
    assert point_figures([-5.0, 5.0])[1] is not None and point_figures([-5.0, 5.0])[1] < 0  # type: ignore[operator]


def test_few_points_fall_back_to_a_b(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = planted_store(tmp_path / "h", points=3, step_at=2, step=-0.2, runs=5)
    (result,) = detect(build_series(store.rows(), []), DetectSettings(), newest="ingest002")
    assert result.method == A_B
    assert "3 points (change points need 6): the last against the one before: worse" in result.note
    (found,) = result.findings
    assert found.in_newest and found.direction == "regression"
    assert found.change_pct == pytest.approx(-20, abs=2)
    code, _out, err = _run(capsys, "history", "detect", "--store", str(store.path), "--fail-on",
                           "regression")  # fmt: skip
    assert code == EXIT_REGRESSION and "-20." in err
    # Three runs a side cannot reach significance: said, and not failed on.
    small = planted_store(tmp_path / "s", points=2, step_at=1, step=-0.2, runs=3)
    (result,) = detect(build_series(small.rows(), []), DetectSettings(), newest="ingest001")
    assert result.findings == [] and "inconclusive" in result.note


def test_exclusion_recomputes_the_point(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = planted_store(tmp_path / "h", points=8, step_at=None, step=0.0, runs=3)
    before = build_series(store.rows(), [])[0].points[3]
    code, _out, err = _run(capsys, "history", "exclude", "run-3-0", "--reason", "noisy neighbour",
                          "--store", str(store.path))  # fmt: skip
    assert code == EXIT_OK, err
    (series,) = build_series(store.rows(), store.exclusions())
    after = series.points[3]
    assert (before.n, after.n) == (3, 2) and series.excluded_runs == 1
    assert after.value == pytest.approx(
        sorted(before.runs[1:])[0] / 2 + sorted(before.runs[1:])[1] / 2
    )
    assert after.run_ids == ("run-3-1", "run-3-2")
    code, _out, err = _run(capsys, "history", "exclude", "no-such-run", "--reason", "x",
                           "--store", str(store.path))  # fmt: skip
    assert code == EXIT_USAGE and "error: no run no-such-run in the history store" in err
    code, _out, err = _run(capsys, "history", "export", "--store", str(store.path), "--format",
                           "csv", "--out", str(tmp_path / "h.csv"))  # fmt: skip
    assert code == EXIT_OK, err
    rows = list(csv.DictReader(io.StringIO((tmp_path / "h.csv").read_text())))
    assert len(rows) == 8 * 4
    marked = [r for r in rows if r["excluded"] == "True"]
    assert [r["run_id"] for r in marked] == ["run-3-0"]
    assert marked[0]["exclude_reason"] == "noisy neighbour"
    code, _out, err = _run(capsys, "history", "export", "--store", str(store.path), "--format",
                           "ndjson", "--out", str(tmp_path / "h.ndjson"))  # fmt: skip
    lines = (tmp_path / "h.ndjson").read_text().splitlines()
    assert code == EXIT_OK and len(lines) == 32 and json.loads(lines[0])["metric"] == "tps"


def test_the_store_is_immutable_files(tmp_path: Path) -> None:
    store = planted_store(tmp_path / "h", points=3, step_at=None, step=0.0)
    files = sorted((tmp_path / "h" / "ingests").iterdir())
    assert len(files) == 3 and all(f.suffix == ".parquet" for f in files)
    assert not list((tmp_path / "h" / "ingests").glob(".*"))  # no partial file left
    frame = store.frame()
    assert {"series_key", "metric", "value", "run_id", "excluded"} <= set(frame.columns)
    assert str(frame["time"].dtype).startswith("datetime64")


def test_the_page_draws_each_series(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = planted_store(tmp_path / "h", points=20, step_at=12, step=-0.06)
    page = tmp_path / "history.html"
    code, _out, err = _run(capsys, "history", "show", "--store", str(store.path), "--html",
                           str(page))  # fmt: skip
    assert code == EXIT_OK, err
    text = page.read_text()
    assert "dbscale history" in text and "near version=1.12" in text
    assert "1 (1 regressions)" in text
    # One tick per point, labelled with the point's labels, never 0.5 steps.
    assert '"labelExpr"' in text and '"values":[1,2,3,' in text and "version=1.19" in text


def test_without_duckdb_one_error_and_a_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = planted_store(tmp_path / "h", points=2, step_at=None, step=0.0)
    monkeypatch.setitem(__import__("sys").modules, "duckdb", None)  # import duckdb fails
    code, out, err = _run(capsys, "history", "show", "--store", str(store.path))
    assert code == 1 and out == ""
    assert err.splitlines() == [
        "error: dbscale history needs DuckDB, which is not installed",
        "hint: install the history extra: pip install 'dbscale[history]' (DuckDB)",
    ]
