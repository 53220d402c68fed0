"""Data shaping: the rows the charts draw carry the study's statistics, merged (never averaged)
percentiles, the right CI bounds, thinned per-second series and a monotone spectrum."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from dbscale.core import histogram_figures
from dbscale.report import rows
from dbscale.results.points import summarize_points
from tests.report.fixtures import record, sweep, view_of
from tests.synthetic import typed


def test_r4_keeps_four_significant_digits() -> None:
    assert rows.r4(123456.7) == 123457.0  # the whole part is kept: counts are exact
    assert rows.r4(30532) == 30532.0 and rows.r4(1234.56) == 1235.0 and rows.r4(123.456) == 123.5
    assert rows.r4(0.0123456) == 0.01235
    assert rows.r4(float("nan")) is None
    assert rows.r4(None) is None
    assert rows.r4(True) is None


def test_point_rows_carry_the_studys_own_statistics() -> None:
    records = sweep((1, 2), repeats=6)
    study = view_of(records, Path("x"))
    axis = study.swept[0]
    got = {r["x"]: r for r in rows.point_rows(study, axis)}
    expected = summarize_points(
        typed([{**r, "point_key": f"c{r['clients']}"} for r in records if r["clients"] == 2])
    )[0]
    assert expected.tps.median_ci is not None
    assert got[2]["n"] == 6
    assert got[2]["tput"] == rows.r4(expected.tps.median)
    assert got[2]["tput_lo"] == rows.r4(expected.tps.median_ci.low)
    assert got[2]["p99"] == rows.r4(expected.latency_ms.p99)


def test_latency_comes_from_the_merged_histogram_not_an_average() -> None:
    records = [record(clients=1, latency_ms=1.0, seed=1), record(clients=1, latency_ms=9.0, seed=2)]
    study = view_of(records, Path("x"))
    merged = histogram_figures([r["histogram"] for r in records], [0.99])
    assert merged.count > 0
    p99 = study.points[0].summary.latency_ms.p99
    assert p99 is not None
    assert p99 == merged.values[0]
    averaged = (records[0]["latency_ms"]["p99"] + records[1]["latency_ms"]["p99"]) / 2
    assert not math.isclose(p99, averaged, rel_tol=0.01)


def test_latency_whiskers_span_the_runs_only_when_repeated() -> None:
    once = view_of(sweep((1, 2)), Path("x"))
    assert all(r["lo"] is None for r in rows.latency_rows(once, once.swept[0]))
    twice = view_of(sweep((1, 2), repeats=2), Path("x"))
    repeated = rows.latency_rows(twice, twice.swept[0])
    assert all(r["lo"] <= r["hi"] for r in repeated)


def test_configuration_rows_keep_each_configurations_best_load_level() -> None:
    def extra(target: str, *_: object) -> dict[str, object]:
        return {"target_name": target[-3], "target_info": {"vcpus": 4}}

    prices = {"date": "2025-01-01", "source": "list", "compute_per_hour": 1.0}
    targets = {name: {"name": name, "info": {"vcpus": 4}, "prices": prices} for name in "ab"}
    study = view_of(
        sweep((1, 8), repeats=3, targets=("postgresql://u@a/x", "postgresql://u@b/x"),
              extra_for=extra),
        Path("x"),
        targets=targets,
    )  # fmt: skip
    table = rows.config_rows(study)
    assert [r["config"] for r in table] == ["target=b", "target=a"]  # best first
    assert all(r["at"] == "clients=8" for r in table)
    best = table[0]
    assert best["per_vcpu"] == rows.r4(best["tput"] / 4)
    # price over throughput: the CI's high throughput is the low cost
    assert best["cost_lo"] <= best["cost"] <= best["cost_hi"]
    assert best["cost"] == rows.r4(730.0 / (60 * best["tput"]))  # per TPM, TPM = 60 TPS


def test_timeline_has_one_row_per_run_second_and_thins_long_studies() -> None:
    study = view_of(sweep((1, 2), repeats=2, seconds=30), Path("x"))
    full = rows.timeline_rows(study)
    assert len(full) == 4 * 30
    assert {r["point"] for r in full} == {"clients=1", "clients=2"}
    thinned = rows.timeline_rows(study, max_rows=40)
    assert len(thinned) <= 40 + 4
    assert rows.timeline_step(study.runs, max_rows=40) == 3


def test_warmups_are_in_the_timeline_under_their_own_name() -> None:
    study = view_of([record(warmup=True, seed=1), record(seed=2)], Path("x"))
    assert {r["point"] for r in rows.timeline_rows(study)} == {"warm-up", "all runs"}


def test_spectrum_is_monotone_per_point() -> None:
    study = view_of(sweep((1, 4)), Path("x"))
    spectrum = rows.spectrum_rows(study)
    for point in ("clients=1", "clients=4"):
        values = [r["latency_ms"] for r in spectrum if r["point"] == point]
        assert values == sorted(values)
        assert len(values) > 20


def test_runs_on_a_shared_host_are_listed_in_the_warnings() -> None:
    def extra(_t: str, _p: object, clients: int, _r: object) -> dict[str, Any]:
        limited = {"verdict": "server-cpu"}
        if clients == 2:
            limited["host_warning"] = "other processes used 0.50 of the host's 2 CPUs (25%, ..."
        return {"observe": {"version": 1, "limited_by": limited}}

    study = view_of(sweep((1, 2), extra_for=extra), Path("x"))
    [warning] = [w for w in study.warnings if "host's CPU" in w]
    assert warning.endswith(": run #2 clients=2"), warning

    def more(_t: str, _p: object, clients: int, _r: object) -> dict[str, Any]:
        return extra(_t, _p, 2 if clients > 1 else 1, _r)

    # Several runs: one line with their count and range, not each run's full label.
    study = view_of(sweep((1, 2, 3, 4), extra_for=more), Path("x"))
    [warning] = [w for w in study.warnings if "host's CPU" in w]
    assert warning.endswith(": 3 runs (#2 to #4)"), warning


def test_a_local_server_beside_the_client_is_a_caveat() -> None:
    local = {"name": "main", "local": {"dir": "/x", "port": 5432, "postmaster_pid": 1}}
    study = view_of(sweep((1, 2)), Path("x"), targets={"main": local})
    [caveat] = [w for w in study.warnings if "beside the load generator" in w]
    assert caveat.startswith("main ran on this machine"), caveat
    remote = view_of(sweep((1, 2)), Path("x"), targets={"main": {"name": "main"}})
    assert not any("beside the load generator" in w for w in remote.warnings)
