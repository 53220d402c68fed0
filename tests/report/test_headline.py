"""The report's opening sentences and penalty charts, from synthetic studies with known answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbscale.report.charts import plan_charts
from dbscale.report.headline import sentences
from tests.report.fixtures import record, view_of


def tls_study(cost: float, runs: int = 6, clients: tuple[int, ...] = (8,)) -> list[dict[str, Any]]:
    """Runs with and without TLS; TLS's TPS `cost` lower (a fraction), 1% run-to-run spread."""
    out = []
    seed = 0
    for c in clients:
        for tls in ("disable", "require"):
            for r in range(runs):
                seed += 1
                tps = 1000.0 * c * (1 - cost if tls == "require" else 1.0) * (1 + 0.01 * (r - 2.5))
                out.append(record(clients=c, tps=tps, seed=seed,
                                  extra={"point": {"clients": c, "tls": tls}}))  # fmt: skip
    return out


def test_a_significant_tls_cost_reads_as_a_percentage_with_its_interval() -> None:
    study = view_of(tls_study(0.18), Path("x"))
    lines = sentences(study)
    assert lines[0].startswith("TPS peaks at TLS=disable: 8,0")
    [cost] = [s for s in lines if s.startswith("TLS (tls=require) costs 18% [")]
    assert "of TPS (p=" in cost
    charts = {c.id: c for c in plan_charts(study)}
    [row] = charts["cost-of-tls"].spec["data"]["values"]
    assert abs(row["cost"] - 18.0) < 0.5 and row["cost_lo"] <= row["cost"] <= row["cost_hi"]


def test_no_difference_says_how_many_more_runs_would_find_one() -> None:
    study = view_of(tls_study(0.0, runs=4), Path("x"))
    # Not a finding either way: said in the words the chart's label and `compare` use.
    [line] = [s for s in sentences(study) if s.startswith("TLS (tls=require)")]
    assert "inconclusive: too few runs to detect a change of this size (" in line
    assert "runs per side would)" in line


def test_per_load_level_the_cost_is_stated_at_each() -> None:
    study = view_of(tls_study(0.2, clients=(2, 8)), Path("x"))
    costs = [s for s in sentences(study) if s.startswith("TLS")]
    assert len(costs) == 2 and costs[0].endswith(")") and " at clients=2 " in costs[0]


def editions_study(ratio: float, runs: int = 6) -> list[dict[str, Any]]:
    """Seed 001's shape: editions (targets) at two thread counts; the second `ratio` times the
    first's TPS, 1% run-to-run spread."""
    out = []
    seed = 0
    for clients in (128, 256):
        for edition, factor in (("ee", 1.0), ("eeplus", ratio)):
            for r in range(runs):
                seed += 1
                tps = 1000.0 * factor * (1 + 0.01 * (r - 2.5))
                point = {"target": edition, "clients": clients}
                out.append(record(clients=clients, tps=tps, seed=seed,
                                  target=f"mysql://u@{edition}/db",
                                  extra={"target_name": edition, "point": point}))  # fmt: skip
    return out


def test_several_targets_are_compared_as_multiples_with_intervals() -> None:
    lines = sentences(view_of(editions_study(2.6), Path("x")))
    ratios = [s for s in lines if s.startswith("eeplus is ")]
    assert len(ratios) == 2, lines
    assert ratios[0].startswith("eeplus is 2.60x ee [2.") and " at clients=128 (p=" in ratios[0]
    same = sentences(view_of(editions_study(1.0, runs=3), Path("x")))
    [few, _] = [s for s in same if s.startswith("eeplus is ")]
    assert "too few for a test" in few
