"""Which charts a study gets, by its shape, and that each spec is what vl-convert can draw."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dbscale.report.charts import Chart, plan_charts, primary_axis
from dbscale.report.headline import sentences
from tests.report.fixtures import record, sweep, view_of

TWO_TARGETS = ("postgresql://u@db1:5432/x", "postgresql://u@db2:5432/x")


def _charts(
    records: list[dict[str, Any]], targets: dict[str, dict[str, Any]] | None = None
) -> list[Chart]:
    return plan_charts(view_of(records, Path("results/x"), targets=targets))


def _ids(
    records: list[dict[str, Any]], targets: dict[str, dict[str, Any]] | None = None
) -> list[str]:
    return [c.id for c in _charts(records, targets)]


def _observe(clients: int) -> dict[str, Any]:
    columns = ["t_s", "client_cpu_cores", "server_cpu_user_cores", "server_cpu_system_cores",
               "host_idle_pct", "net.lo.rx_bytes_per_s", "net.lo.tx_bytes_per_s"]  # fmt: skip
    rows = [[t, 0.1 * clients, 0.2 * clients, 0.05, 80.0, 1e6, 1e6] for t in (1, 2, 3)]
    return {
        "version": 1,
        "host": {"cpu_model": "Test CPU", "logical_cpus": 2},
        "resources": {"interval_s": 1.0, "columns": columns, "rows": rows},
        "server": {"dialect": "postgresql", "local": True, "vcpus": 2},
        "waits": {"samples": 10, "events": {"CPU": 7, "LWLock:WALWrite": clients}},
        "limited_by": {"verdict": "server-cpu", "client_bound": False},
    }


def test_a_single_run_gets_its_timeline_and_latency_spectrum() -> None:
    assert _ids([record()]) == ["timeline", "latency-spectrum"]


def test_a_clients_sweep_gets_throughput_and_latency_against_clients() -> None:
    assert _ids(sweep((1, 2, 4))) == [
        "throughput-vs-clients", "latency-vs-clients", "timeline", "latency-spectrum",
    ]  # fmt: skip


def test_repeated_runs_add_the_variation_chart_and_error_bars() -> None:
    charts = {c.id: c for c in _charts(sweep((1, 2), repeats=3))}
    assert "variation" in charts
    layers = charts["throughput-vs-clients"].spec["layer"]
    assert [layer["mark"]["type"] for layer in layers] == ["line", "errorbar"]


def test_single_runs_draw_no_empty_error_bars() -> None:
    charts = {c.id: c for c in _charts(sweep((1, 2)))}
    assert [layer["mark"]["type"] for layer in charts["throughput-vs-clients"].spec["layer"]] == [
        "line"
    ]
    assert "variation" not in charts


def test_only_categories_swept_gives_bars_per_category() -> None:
    charts = {c.id: c for c in _charts(sweep((4,), protocols=("simple", "prepared")))}
    assert list(charts) == [
        "throughput-vs-protocol", "latency-vs-protocol", "timeline", "latency-spectrum",
    ]  # fmt: skip
    assert charts["throughput-vs-protocol"].spec["layer"][0]["mark"]["type"] == "bar"


def test_targets_with_clients_get_one_line_per_target_and_peak_bars() -> None:
    charts = {c.id: c for c in _charts(sweep((1, 2, 4), targets=TWO_TARGETS))}
    assert "throughput-per-configuration" in charts
    assert "throughput-per-vcpu" not in charts
    values = charts["throughput-vs-clients"].spec["data"]["values"]
    assert {v["series"] for v in values} == {"target=db1:5432/x", "target=db2:5432/x"}


def test_vcpus_and_prices_add_per_vcpu_and_price_performance() -> None:
    def extra(target: str, *_: object) -> dict[str, Any]:
        big = "db2" in target
        return {"target_name": "big" if big else "small", "target_info": {"vcpus": 8 if big else 4}}

    prices = {"date": "2025-01-01", "source": "list", "vcpu_per_hour": 0.05}
    targets = {
        name: {"name": name, "info": {"vcpus": vcpus}, "prices": prices}
        for name, vcpus in (("big", 8), ("small", 4))
    }
    ids = _ids(sweep((1, 4), targets=TWO_TARGETS, extra_for=extra), targets)
    assert ids[:4] == [
        "throughput-vs-clients", "latency-vs-clients", "throughput-vs-vcpus", "latency-vs-vcpus",
    ]  # fmt: skip
    assert {"throughput-per-configuration", "throughput-per-vcpu", "price-performance"} <= set(ids)


def test_observed_runs_add_resource_use_and_wait_events() -> None:
    ids = _ids(sweep((1, 2), extra_for=lambda _t, _p, c, _r: {"observe": _observe(c)}))
    assert "resource-use" in ids
    assert "wait-events" in ids


def test_the_primary_axis_is_the_first_numeric_swept_one() -> None:
    study = view_of(sweep((1, 2), protocols=("simple", "prepared")), Path("x"))
    axis = primary_axis(study)
    assert axis is not None
    assert axis.key == "clients"
    assert primary_axis(view_of([record()], Path("x"))) is None


def test_chart_ids_are_unique_and_file_name_safe() -> None:
    ids = _ids(sweep((1, 2), repeats=2, targets=TWO_TARGETS, protocols=("simple", "prepared")))
    assert len(ids) == len(set(ids))
    assert all(i.replace("-", "").isalnum() for i in ids)


@pytest.mark.parametrize(
    "records",
    [
        [record()],
        sweep((1, 2, 4), repeats=3),
        sweep((2,), protocols=("simple", "prepared"), repeats=2),
        sweep((1, 2), extra_for=lambda _t, _p, c, _r: {"observe": _observe(c)}),
    ],
    ids=["single", "clients-repeated", "categorical", "observed"],
)
def test_every_spec_compiles_with_vega_lite(records: list[dict[str, Any]]) -> None:
    import vl_convert

    for chart in _charts(records):
        vega = vl_convert.vegalite_to_vega(chart.spec)
        assert vega["marks"], chart.id


def test_a_sweep_of_local_sizes_gets_the_figures_by_vcpu_and_a_header_without_none() -> None:
    """Seed 000's Fig. 1 and 2: the plan sweeps targets (one per size), vCPUs follow them."""

    def extra(target: str, _p: object, clients: int, _r: object) -> dict[str, Any]:
        size = 2 if "db2" in target else 1
        name = f"main-{size}vcpu"
        return {
            "target_name": name,
            "target_info": {"vcpus": size},
            "point": {"target": name, "clients": clients},
            "observe": _observe(clients),
        }

    study = view_of(sweep((2, 8), targets=TWO_TARGETS, extra_for=extra), Path("x"))
    charts = {c.id: c for c in plan_charts(study)}
    assert {"by-vcpus", "resources-by-vcpus"} <= set(charts)
    figures = charts["by-vcpus"].spec["data"]["values"]
    assert {v["x"] for v in figures} == {1, 2}
    assert {v["series"] for v in figures} == {"clients=2", "clients=8"}  # a line per client count
    assert {v["metric"] for v in figures} == {"TPS (median of runs)", "mean latency (ms)"}
    use = charts["resources-by-vcpus"].spec["data"]["values"]
    assert {"client CPU (cores)", "network in+out (Mbit/s)"} <= {v["metric"] for v in use}
    targets = [t["target"] for t in study.header.targets]
    assert targets == ["main-1vcpu", "main-2vcpu"]
    assert [t["vCPUs"] for t in study.header.targets] == ["1", "2"]
    assert study.header.workloads == ["tpcb"]
    assert sentences(study)[0].startswith("TPS peaks at target=main-2vcpu, clients=8 (2 vCPUs): ")


def test_one_size_gets_no_figures_by_vcpu() -> None:
    def extra(_t: str, _p: object, clients: int, _r: object) -> dict[str, Any]:
        return {"target_name": "main", "target_info": {"vcpus": 2}}

    assert "by-vcpus" not in _ids(sweep((2, 8), extra_for=extra))
