"""Price-performance on the console: the per-point table at the end of a study (TPM, TPM per
vCPU, monthly cost, storage share, $/TPM on-demand and reserved with their intervals), and the
same figures side by side in `dbscale compare`, with the server settings that differ between
the two studies' targets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import JsonValue
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from dbscale.results.cost import Bounds, add_price_performance
from dbscale.results.points import PointSummary, summarize_point
from dbscale.results.record import RunRecord
from dbscale.results.text_tables import text_table
from dbscale.targets.facts import TargetDifference, TargetRecord, load_target_records


def _num(value: float | int | None, digits: int) -> str:
    return "-" if value is None else f"{float(value):,.{digits}f}"


def _sig(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _money_per_tpm(value: float | None, ci: Bounds | None) -> str:
    if value is None:
        return "-"
    text = _sig(value)
    if ci is not None:
        text += f" [{_sig(ci.low)}, {'∞' if ci.high is None else _sig(ci.high)}]"
    return text


def has_price_performance(points: Sequence[PointSummary]) -> bool:
    return any(p.cost is not None or (p.tpm is not None and p.tpm.vcpus) for p in points)


def price_performance_table(points: Sequence[PointSummary], title: str | None = None) -> Table:
    currency = next((p.cost.currency for p in points if p.cost is not None), "USD")
    metrics = {p.tpm.metric for p in points if p.tpm is not None}
    # TPC-C points count New-Orders (tpmC); the others all transactions (TPS x 60).
    meaning = {
        frozenset({"tpmC"}): "TPM = tpmC (New-Orders per minute)",
        frozenset({"tpmC", "tpm"}): "TPM = tpmC for TPC-C, TPS x 60 for the others",
    }.get(frozenset(metrics), "TPM = TPS x 60")
    table = text_table(
        ("point", "vCPUs", "TPM", "TPM/vCPU", "on-demand/mo", "reserved/mo", "storage %",
         "$/TPM on-demand", "$/TPM reserved"),
        left={"point"},
        title=title or escape(
            f"price-performance ({currency} per month of 730 h; {meaning}; "
            "[interval] from the throughput's CI)"
        ),
    )  # fmt: skip
    for point in points:
        tpm, cost = point.tpm, point.cost
        table.add_row(
            escape(point.point_key),
            _sig(tpm.vcpus if tpm else None),
            _num(tpm.median if tpm else None, 0),
            _num(tpm.per_vcpu if tpm else None, 0),
            _num(cost.total_on_demand_per_month if cost else None, 2),
            _num(cost.total_reserved_per_month if cost else None, 2),
            _num(cost.storage_share_on_demand_pct if cost else None, 1),
            escape(
                _money_per_tpm(cost.per_tpm_on_demand, cost.per_tpm_on_demand_ci) if cost else "-"
            ),
            escape(
                _money_per_tpm(cost.per_tpm_reserved, cost.per_tpm_reserved_ci) if cost else "-"
            ),
        )
    return table


def print_price_performance(console: Console, points: Sequence[PointSummary]) -> None:
    """The table, when some target has a vCPU count or prices; then where the prices are from."""
    if not has_price_performance(points):
        return
    console.print(price_performance_table(points))
    sources = {(p.cost.price_date, p.cost.price_source) for p in points if p.cost is not None}
    for price_date, source in sorted(sources):
        console.print(f"prices as of {price_date}: {source}", highlight=False, soft_wrap=True)


# -- dbscale compare ---------------------------------------------------------------------------


def _side(records: Sequence[RunRecord], targets: Mapping[str, TargetRecord]) -> PointSummary:
    [point] = add_price_performance([summarize_point(records[0].group_key, records)], targets)
    return point


def _side_json(point: PointSummary) -> dict[str, JsonValue]:
    return {k: v for k, v in point.to_json().items() if k in ("point_key", "target", "tpm", "cost")}


def compare_price_performance(
    pairs: Sequence[tuple[str, Sequence[RunRecord], Sequence[RunRecord]]], a: Path, b: Path | None
) -> list[dict[str, JsonValue]]:
    """Each compared pair's TPM, TPM per vCPU and $/TPM on both sides, as `compare --json`
    prints them (empty when no target of either study has a vCPU count or prices)."""
    targets_a = load_target_records(a)
    targets_b = targets_a if b is None else load_target_records(b)
    rows = [(key, _side(ra, targets_a), _side(rb, targets_b)) for key, ra, rb in pairs]
    if not has_price_performance([side for _, pa, pb in rows for side in (pa, pb)]):
        return []
    return [{"point": key, "a": _side_json(pa), "b": _side_json(pb)} for key, pa, pb in rows]


def print_price_performance_comparison(console: Console, rows: Sequence[Mapping[str, Any]]) -> None:
    if not rows:
        return
    flat = [
        PointSummary.model_validate({**row[side], "point_key": f"{row['point']} [{side.upper()}]"})
        for row in rows
        for side in ("a", "b")
    ]
    console.print(price_performance_table(flat, title="price-performance, A and B"))


def print_target_differences(console: Console, diffs: Sequence[TargetDifference]) -> None:
    """Server versions and settings that differ between the same-named targets of A and B."""
    if not diffs:
        return
    columns = ("target", "setting", "A", "B")
    table = text_table(
        columns, left=columns, title="target settings that differ (targets/<name>.json)"
    )
    for diff in diffs:
        table.add_row(diff.target, diff.setting, str(diff.a), str(diff.b))
    console.print(table)
