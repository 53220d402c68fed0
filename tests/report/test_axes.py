"""Axis detection: which facts a study swept, which only followed, for each shape of study."""

from __future__ import annotations

from pathlib import Path

from dbscale.report.axes import detect_axes, format_value
from dbscale.report.facts import run_facts
from tests.report.fixtures import record, sweep, view_of
from tests.synthetic import typed


def _axes(records: list[dict[str, object]]) -> list[tuple[str, bool, bool]]:
    """(key, numeric, swept) of each axis."""
    axes = detect_axes([run_facts(r) for r in typed(records)])
    return [(a.key, a.numeric, a.swept) for a in axes]


def test_a_single_configuration_has_no_axes() -> None:
    assert _axes([record(seed=1), record(seed=2)]) == []


def test_clients_are_swept_and_threads_follow_them() -> None:
    assert _axes(sweep((1, 2, 4))) == [("clients", True, True), ("threads", True, False)]


def test_targets_and_protocols_are_categorical_axes() -> None:
    records = sweep(
        (1, 4),
        targets=("postgresql://u@a:5432/db", "postgresql://u@b:5432/db"),
        protocols=("simple", "prepared"),
    )
    assert _axes(records) == [
        ("clients", True, True),
        ("target", False, True),
        ("protocol", False, True),
        ("threads", True, False),
    ]


def test_a_target_that_follows_its_vcpu_count_is_not_swept() -> None:
    def extra(target: str, *_: object) -> dict[str, object]:
        return {"target_info": {"vcpus": 8 if "db2" in target else 2}}

    records = sweep(
        (1, 4),
        targets=("postgresql://u@db1/x", "postgresql://u@db2/x"),
        extra_for=extra,
    )
    keys = {key: swept for key, _, swept in _axes(records)}
    assert keys == {"clients": True, "vcpus": True, "target": False, "threads": False}


def test_plan_axes_stand_for_the_facts_they_set() -> None:
    records = [
        record(clients=c, seed=c, extra={"point": {"clients": c, "tls": tls}, "point_key": k})
        for c, tls, k in ((1, "disable", "a"), (1, "require", "b"), (4, "disable", "c"))
    ]
    assert _axes(records) == [
        ("axis.clients", True, True),
        ("axis.tls", False, True),
        ("threads", True, False),
    ]
    study = view_of(records, Path("x"))
    assert [a.title for a in study.axes] == ["clients", "TLS", "threads"]


def test_zip_rows_are_series_even_when_no_axis_follows_another() -> None:
    rows = (("persistent", "disable"), ("per-transaction", "disable"), ("persistent", "require"))
    records = [
        record(clients=c, seed=10 * c + i, extra={"point": {"clients": c, "connect": co, "tls": t}})
        for c in (1, 2)
        for i, (co, t) in enumerate(rows)
    ]
    study = view_of(records, Path("x"))
    assert len(study.points) == 6
    series = {p.series(study.axes, "axis.clients") for p in study.points}
    assert series == {
        "connections=persistent, TLS=disable",
        "connections=per-transaction, TLS=disable",
        "connections=persistent, TLS=require",
    }


def test_values_are_ordered_numerically_and_categories_as_run() -> None:
    records = sweep((8, 1, 4), protocols=("prepared", "simple"))
    axes = detect_axes([run_facts(r) for r in typed(records)])
    assert axes[0].values == (1, 4, 8)
    assert axes[1].values == ("prepared", "simple")


def test_booleans_and_missing_values_read_as_words() -> None:
    assert format_value(True) == "on"
    assert format_value(None, "rate_tps") == "closed loop"
    assert format_value(2.5) == "2.5"


def test_warmups_cancelled_and_failed_runs_do_not_make_axes() -> None:
    records = [
        record(clients=8, warmup=True, seed=1),
        record(clients=1, seed=2),
        record(clients=2, cancelled=True, seed=3),
        record(clients=4, status="failed", seed=4),
    ]
    study = view_of(records, Path("x"))
    assert study.axes == []
    assert len(study.points) == 1
    assert any("cancelled" in w for w in study.warnings)
    assert any("failed" in w for w in study.warnings)


def test_a_counted_run_shows_its_transactions_not_its_time_limit() -> None:
    counted = record(seed=1)
    counted["config"] = {**counted.get("config", {}), "transactions": 500, "duration_s": 604800.0}
    [facts] = [run_facts(r) for r in typed([counted])]
    assert facts["transactions"] == 500 and "duration_s" not in facts
