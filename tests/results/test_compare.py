"""`dbscale compare` on synthetic result sets with and without a real difference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbscale.cli.app import run_cli
from dbscale.errors import ConfigError
from dbscale.results.compare import ComparisonOptions, compare_dirs
from tests.synthetic import study_records, write_results


def test_two_directories_with_a_real_difference(tmp_path: Path) -> None:
    a = write_results(
        tmp_path / "a", study_records({"x": 1000, "y": 2000}, runs=6, cv=0.01, seed=1)
    )
    b = write_results(
        tmp_path / "b", study_records({"x": 1150, "y": 2000}, runs=6, cv=0.01, seed=2)
    )
    result = compare_dirs(a, b, ComparisonOptions()).model_dump()
    by_point = {row["point"]: row for row in result["points"]}
    assert by_point["tls=x"]["tps"]["verdict"] == "better"
    assert by_point["tls=x"]["tps"]["change_pct"] == pytest.approx(15, abs=3)
    assert by_point["tls=x"]["p99_ms"]["verdict"] in ("better", "no significant change")
    assert by_point["tls=y"]["tps"]["verdict"] == "no significant change"
    assert result["unmatched"] == []


def test_two_points_of_one_study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = study_records({"disable": 1000, "require": 800}, runs=6, cv=0.01, seed=3)
    d = write_results(tmp_path / "one", records)
    options = ComparisonOptions("tls=disable", "tls=require", noise_pct=1)
    result = compare_dirs(d, None, options).model_dump()
    [row] = result["points"]
    assert row["tps"]["verdict"] == "worse"
    assert row["tps"]["ci_high_pct"] < -1
    code = run_cli(["compare", str(d), "--a", "tls=disable", "--b", "tls=require", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["points"][0]["tps"]["verdict"] == "worse"
    assert run_cli(["compare", str(d), "--a", "tls=disable", "--b", "tls=require"]) == 0
    table = capsys.readouterr().out
    assert "worse" in table and "p (Holm)" in table


def test_no_difference_gives_no_verdict(tmp_path: Path) -> None:
    a = write_results(tmp_path / "a", study_records({"x": 1000}, runs=10, cv=0.004, seed=4))
    b = write_results(tmp_path / "b", study_records({"x": 1000}, runs=10, cv=0.004, seed=5))
    [row] = compare_dirs(a, b, ComparisonOptions()).model_dump()["points"]
    assert row["tps"]["verdict"] == "no significant change"


def test_two_identical_quick_studies_are_inconclusive_not_unchanged(tmp_path: Path) -> None:
    # 4 noisy runs a side over two points: no verdict could come of them, so none is claimed.
    records = {"x": 1000, "y": 2000}
    a = write_results(tmp_path / "a", study_records(records, runs=4, cv=0.1, seed=11))
    b = write_results(tmp_path / "b", study_records(records, runs=4, cv=0.1, seed=12))
    rows = compare_dirs(a, b, ComparisonOptions()).model_dump()["points"]
    assert {r["tps"]["verdict"] for r in rows} == {"inconclusive"}
    assert all(r["tps"]["runs_needed"] > 4 for r in rows)


def test_compare_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_results(tmp_path / "d", study_records({"x": 1000}, runs=2, cv=0.02, seed=6))
    with pytest.raises(ConfigError, match="two results directories"):
        compare_dirs(d, None, ComparisonOptions())
    with pytest.raises(ConfigError, match="no axis clients"):
        compare_dirs(d, None, ComparisonOptions("clients=1", "clients=2"))
    code = run_cli(["compare", str(tmp_path / "missing"), str(d)])
    err = capsys.readouterr().err
    assert code != 0 and err.startswith("error: ") and "hint: " in err
