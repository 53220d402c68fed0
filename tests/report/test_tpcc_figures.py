"""The Cloud Report's TPC-C figures: when a study gets them, what their rows say, which warehouse
count the bars compare at, and that a failing point is marked and never compared as passing."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from dbscale.report import tpcc_figures
from dbscale.report.charts import plan_charts
from dbscale.report.view import ResultsView
from tests.report.fixtures import record, sweep, view_of

PRICES = {"date": "2026-01-01", "source": "list", "compute_per_hour": 0.2,
          "compute_per_hour_reserved": 0.12}  # fmt: skip


def _tpcc_run(target: str, per_vcpu: float, repetition: int, passed: bool) -> dict[str, Any]:
    vcpus = 4 if target == "big" else 2
    tpmc = 6000.0 * per_vcpu * vcpus * (1 + 0.02 * repetition)
    seed = int(per_vcpu * 100) + repetition + (1000 if target == "big" else 0)
    return record(
        clients=int(per_vcpu * vcpus), tps=tpmc / 60 / 0.45, workload="tpcc", seed=seed,
        target=f"postgresql://u@{target}:5432/tpcc",
        extra={
            "point": {"warehouses_per_vcpu": per_vcpu}, "point_key": f"{target}|{per_vcpu}",
            "target_name": target, "target_info": {"vcpus": vcpus},
            "tpcc": {"warehouses": 8, "active_warehouses": int(per_vcpu * vcpus), "wait": False,
                     "tpmc": tpmc, "pass": passed, "reasons": [] if passed else ["p95 over"]},
        },
    )  # fmt: skip


def _study(
    fails: Collection[tuple[str, float]] = (),
    priced: bool = True,
    prices: dict[str, Any] | None = None,
    storage_gb: float | None = None,
) -> ResultsView:
    records = [
        _tpcc_run(target, per_vcpu, rep, (target, per_vcpu) not in fails or rep == 0)
        for target in ("small", "big")
        for per_vcpu in (1.0, 2.0, 3.0)
        for rep in range(3)
    ]
    info: dict[str, Any] = {} if storage_gb is None else {"storage_gb": storage_gb}
    targets = {t: {"name": t, "info": {"vcpus": 4 if t == "big" else 2, **info},
                   "prices": prices or PRICES}
               for t in ("small", "big")} if priced else None  # fmt: skip
    return view_of(records, Path("results/tpcc"), targets=targets)


def test_a_tpcc_sweep_gets_the_cloud_report_figures_instead_of_peak_bars() -> None:
    ids = [c.id for c in plan_charts(_study())]
    assert list(tpcc_figures.IDS) == [i for i in ids if i.startswith("tpcc-")]
    assert "throughput-per-configuration" not in ids
    assert "price-performance" not in ids
    # Not a TPC-C sweep: no TPC-C figures.
    assert not any(c.id.startswith("tpcc-") for c in plan_charts(view_of(sweep((1, 2)), Path("x"))))


def test_scaling_rows_are_tpmc_per_vcpu_with_each_points_verdict() -> None:
    points = tpcc_figures.tpcc_points(_study(fails={("big", 3.0)}))
    rows = {(r["target"], r["x"]): r for r in tpcc_figures.scaling_rows(points)}
    assert len(rows) == 6
    small = rows[("small", 2.0)]
    assert small["per_vcpu"] == small["tpmc"] / 2
    assert abs(small["per_vcpu"] - 6000 * 2 * 1.02) < 1
    assert small["per_vcpu_lo"] <= small["per_vcpu"] <= small["per_vcpu_hi"]
    # A point fails when any of its runs failed, even if another passed.
    assert rows[("big", 3.0)]["verdict"] == "fail"
    assert {r["verdict"] for k, r in rows.items() if k != ("big", 3.0)} == {"pass"}


def test_bars_compare_at_the_highest_count_every_target_passed() -> None:
    assert tpcc_figures.comparison_count(tpcc_figures.tpcc_points(_study())) == (3.0, True)
    failing_big = tpcc_figures.tpcc_points(_study(fails={("big", 3.0)}))
    assert tpcc_figures.comparison_count(failing_big) == (2.0, True)
    nothing = {(t, w) for t in ("small", "big") for w in (1.0, 2.0, 3.0)}
    none_passed = tpcc_figures.tpcc_points(_study(fails=nothing))
    assert tpcc_figures.comparison_count(none_passed) == (1.0, False)
    charts = {c.id: c for c in tpcc_figures.tpcc_charts(_study(fails=nothing))}
    bars = charts["tpcc-per-vcpu-at-count"]
    assert "no count passed on every target" in bars.caption
    assert {r["verdict"] for r in bars.spec["data"]["values"]} == {"fail"}


def test_price_bars_have_on_demand_and_reserved_per_target() -> None:
    charts = {c.id: c for c in tpcc_figures.tpcc_charts(_study(fails={("big", 3.0)}))}
    rows = charts["tpcc-price-performance"].spec["data"]["values"]
    assert {(r["target"], r["pricing"]) for r in rows} == {
        (t, p) for t in ("small", "big") for p in ("on-demand", "reserved")
    }
    small = {r["pricing"]: r for r in rows if r["target"] == "small"}
    # 0.2 $/h x 730 h over the tpmC at 2 warehouses per vCPU; reserved at 0.12 $/h.
    tpmc = 6000 * 2 * 2 * 1.02
    assert abs(small["on-demand"]["cost"] - 146 / tpmc) < 1e-5
    assert abs(small["reserved"]["cost"] - 87.6 / tpmc) < 1e-5
    assert "at 2 warehouses per vCPU" in charts["tpcc-price-performance"].title
    unpriced = {c.id for c in tpcc_figures.tpcc_charts(_study(priced=False))}
    assert unpriced == {"tpcc-scaling", "tpcc-per-vcpu-at-count"}


def test_failing_points_are_drawn_as_crosses_and_every_spec_compiles() -> None:
    import vl_convert

    charts = tpcc_figures.tpcc_charts(_study(fails={("big", 3.0)}))
    scaling = charts[0].spec
    shape = scaling["layer"][-1]["encoding"]["shape"]
    assert shape["scale"] == {"domain": ["pass", "fail"], "range": ["circle", "cross"]}
    for chart in charts:
        assert vl_convert.vegalite_to_vega(chart.spec)["marks"], chart.id


def test_storage_priced_targets_get_the_cost_breakdown_with_storage_share() -> None:
    study = _study(prices={**PRICES, "storage_per_gb_month": 0.1}, storage_gb=500)
    charts = {c.id: c for c in tpcc_figures.tpcc_charts(study)}
    rows = charts[tpcc_figures.COST_BREAKDOWN_ID].spec["data"]["values"]
    small = {(r["pricing"], r["part"]): r for r in rows if r["target"] == "small"}
    # 500 GB x 0.1 = 50 a month beside 0.2 x 730 = 146 of compute: 25.5% of 196.
    assert small[("on-demand", "storage")]["monthly"] == 50.0
    assert small[("on-demand", "compute")]["monthly"] == 146.0
    assert small[("on-demand", "storage")]["label"] == "storage 26%"
    assert small[("reserved", "storage")]["share_pct"] == round(100 * 50 / (87.6 + 50), 2)


def test_the_tpcc_section_states_the_rule_the_verdicts_the_types_and_the_audits() -> None:
    from dbscale.report.tpcc_section import audit_rows, run_rows, tpcc_section, type_rows

    study = _study(fails={("big", 3.0)})
    html = tpcc_section(study)
    assert html.startswith('<h2 id="tpcc">')
    assert "16 of 18 measured runs passed" in html
    assert "New-Order&#x27;s 95th percentile under 10 s" in html
    headers, rows = run_rows(study)
    failed = [r for r in rows if r[headers.index("verdict")] == "FAIL"]
    assert len(failed) == 2 and failed[0][headers.index("reasons")] == "p95 over"
    assert type_rows(study)[1] == []  # these records have no per-type histograms
    assert audit_rows(study)[1] == []  # none judged: the section says so in words
    assert "No run was long enough to judge the audits" in html
    assert tpcc_section(view_of(sweep((1, 2)), Path("x"))) == ""


def test_the_headline_compares_tpmc_per_vcpu() -> None:
    """The Cloud Report's metric leads (issue 42): tpmC per vCPU at the best point, with the raw
    tpmC beside it."""
    from dbscale.report.headline import sentences

    lines = sentences(_study())
    assert lines[0].startswith("tpmC per vCPU peaks at "), lines
    assert "vCPUs): 18,360 [" in lines[0] and "(36,720 tpmC in all)" in lines[0], lines[0]
