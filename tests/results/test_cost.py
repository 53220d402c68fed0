"""Price-performance arithmetic against values computed by hand."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from pydantic import BaseModel

from dbscale.results.cost import (
    add_price_performance,
    headline_throughput,
    monthly_cost,
    price_performance,
)
from dbscale.results.points import PointSummary
from dbscale.targets.spec import Prices

# A Cloud SQL-like custom tier, HA: 4 vCPUs, 16 GiB, 100 GB of SSD.
RATES = Prices(
    date=datetime.date(2024, 5, 1),
    source="example",
    vcpu_per_hour=0.0413,
    vcpu_per_hour_reserved=0.0330,
    gib_per_hour=0.0070,
    gib_per_hour_reserved=0.0056,
    storage_per_gb_month=0.17,
    ha_multiplier=2.0,
)
TARGET = {
    "info": {"vcpus": 4, "memory_gib": 16, "storage_gb": 100, "ha": True},
    "prices": RATES.model_dump(mode="json"),
}


def point(median: float, low: float | None, high: float | None, **extra: Any) -> PointSummary:
    ci = (
        {"low": low, "high": high, "confidence": 0.95, "method": "order-statistic"}
        if low is not None
        else None
    )
    return PointSummary.model_validate(
        {"point_key": "p", "target": "db", "workload": "tpcb",
         "tps": {"median": median, "median_ci": ci, "mean_ci": None}, **extra}
    )  # fmt: skip


def figures(model: BaseModel | None) -> dict[str, Any]:
    assert model is not None
    return model.model_dump(mode="json")


def test_monthly_cost_by_hand() -> None:
    cost = monthly_cost(RATES, vcpus=4, memory_gib=16, storage_gb=100, ha=True)
    # (4 x 0.0413 + 16 x 0.0070) x 2 (HA) x 730 h = 0.2772 x 2 x 730
    assert cost.compute_on_demand == pytest.approx(404.712)
    # (4 x 0.0330 + 16 x 0.0056) x 2 x 730 = 0.2216 x 1460
    assert cost.compute_reserved == pytest.approx(323.536)
    assert cost.storage == pytest.approx(34.0)  # 100 GB x 0.17 x 2 (HA)
    assert cost.total(reserved=False) == pytest.approx(438.712)
    assert cost.storage_share_pct(reserved=True) == pytest.approx(100 * 34 / 357.536)


def test_dollars_per_tpm_carries_the_interval_through() -> None:
    section = price_performance(point(1000.0, 900.0, 1100.0), TARGET)
    tpm, cost = figures(section.tpm), figures(section.cost)
    assert tpm["median"] == 60000.0  # TPS x 60
    assert tpm["median_ci"] == {"low": 54000.0, "high": 66000.0}
    assert tpm["per_vcpu"] == 15000.0
    assert tpm["per_vcpu_ci"] == {"low": 13500.0, "high": 16500.0}
    assert cost["per_tpm_on_demand"] == pytest.approx(438.712 / 60000, rel=1e-5)
    # Monotone decreasing: the high throughput bound gives the low cost bound.
    assert cost["per_tpm_on_demand_ci"]["low"] == pytest.approx(438.712 / 66000, rel=1e-5)
    assert cost["per_tpm_on_demand_ci"]["high"] == pytest.approx(438.712 / 54000, rel=1e-5)
    assert cost["per_tpm_reserved"] == pytest.approx(357.536 / 60000, rel=1e-5)
    assert cost["storage_share_on_demand_pct"] == pytest.approx(7.75, abs=0.01)
    assert cost["price_date"] == "2024-05-01"
    assert cost["notes"] == []


def test_whole_instance_prices_without_ha_or_reserved() -> None:
    prices = Prices(date=datetime.date(2022, 3, 1), source="s", compute_per_hour=1.0)
    target = {"info": {"vcpus": 8, "ha": False}, "prices": prices.model_dump(mode="json")}
    cost = figures(price_performance(point(50.0, None, None), target).cost)
    assert cost["total_on_demand_per_month"] == 730.0
    assert cost["per_tpm_on_demand"] == pytest.approx(730 / 3000, rel=1e-5)
    assert cost["per_tpm_on_demand_ci"] is None
    assert cost["per_tpm_reserved"] is None
    assert cost["storage_per_month"] is None
    assert "no confidence interval: too few runs" in cost["notes"]


def test_an_interval_reaching_zero_has_no_upper_cost_bound() -> None:
    cost = figures(price_performance(point(100.0, -20.0, 220.0), TARGET).cost)
    assert cost["per_tpm_on_demand_ci"]["high"] is None
    assert any("no upper bound" in n for n in cost["notes"])


def test_tpcc_uses_tpmc_and_unknown_targets_are_left_alone() -> None:
    tpcc = point(10.0, None, None, workload="tpcc", tpmc={"median": 1200.0, "median_ci": None})
    tput = headline_throughput(tpcc)
    assert tput is not None and (tput.metric, tput.median) == ("tpmC", 1200.0)
    [same] = add_price_performance([point(1.0, None, None, target="elsewhere")], {"db": TARGET})
    assert same.cost is None and same.tpm is None
