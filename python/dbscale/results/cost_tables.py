"""Price-performance on the console: the per-point table at the end of a study (TPM, TPM per
vCPU, monthly cost, storage share, $/TPM on-demand and reserved with their intervals), and the
same figures side by side in `dbscale compare`, with the server settings that differ between
the two studies' targets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from dbscale.results.cost import add_price_performance
from dbscale.results.points import summarize_points
from dbscale.targets.facts import load_target_records

Record = Mapping[str, Any]


def _num(value: Any, digits: int) -> str:
    return "-" if value is None else f"{float(value):,.{digits}f}"


def _money_per_tpm(cost: Mapping[str, Any], label: str) -> str:
    value = cost.get(f"per_tpm_{label}")
    if value is None:
        return "-"
    text = _sig(value)
    ci = cost.get(f"per_tpm_{label}_ci")
    if isinstance(ci, Mapping):
        text += f" [{_sig(ci.get('low'))}, {'∞' if ci.get('high') is None else _sig(ci['high'])}]"
    return text


def _sig(value: Any) -> str:
    return "-" if value is None else f"{float(value):.4g}"


def has_price_performance(points: Sequence[Record]) -> bool:
    return any(p.get("cost") or (p.get("tpm") or {}).get("vcpus") for p in points)


def price_performance_table(points: Sequence[Record], title: str | None = None) -> Table:
    currency = next((p["cost"]["currency"] for p in points if p.get("cost")), "USD")
    table = Table(
        title=title or escape(
            f"price-performance ({currency} per month of 730 h; TPM = TPS x 60; "
            "[interval] from the throughput's CI)"
        ),
        title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False,
    )  # fmt: skip
    for name in ("point", "vCPUs", "TPM", "TPM/vCPU", "on-demand/mo", "reserved/mo",
                 "storage %", "$/TPM on-demand", "$/TPM reserved"):  # fmt: skip
        table.add_column(name, justify="left" if name == "point" else "right")
    for point in points:
        tpm = point.get("tpm") or {}
        cost = point.get("cost") or {}
        table.add_row(
            escape(str(point.get("point_key"))),
            _num(tpm.get("vcpus"), 0),
            _num(tpm.get("median"), 0),
            _num(tpm.get("per_vcpu"), 0),
            _num(cost.get("total_on_demand_per_month"), 2),
            _num(cost.get("total_reserved_per_month"), 2),
            _num(cost.get("storage_share_on_demand_pct"), 1),
            escape(_money_per_tpm(cost, "on_demand")),
            escape(_money_per_tpm(cost, "reserved")),
        )
    return table


def print_price_performance(console: Console, points: Sequence[Record]) -> None:
    """The table, when some target has a vCPU count or prices; then where the prices are from."""
    if not has_price_performance(points):
        return
    console.print(price_performance_table(points))
    sources = {(c.get("price_date"), c.get("price_source")) for p in points if (c := p.get("cost"))}
    for price_date, source in sorted(sources, key=str):
        console.print(f"prices as of {price_date}: {source}", highlight=False, soft_wrap=True)


# -- dbscale compare ---------------------------------------------------------------------------


def _side(records: Sequence[Record], targets: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    points = add_price_performance(summarize_points(records), targets)
    point = points[0] if points else {}
    return {
        "point_key": point.get("point_key"),
        "target": point.get("target"),
        "tpm": point.get("tpm"),
        "cost": point.get("cost"),
    }


def compare_price_performance(
    pairs: Sequence[tuple[str, Sequence[Record], Sequence[Record]]], a: Path, b: Path | None
) -> list[dict[str, Any]]:
    """Each compared pair's TPM, TPM per vCPU and $/TPM on both sides (empty when no target
    of either study has a vCPU count or prices)."""
    targets_a = load_target_records(a)
    targets_b = targets_a if b is None else load_target_records(b)
    rows: list[dict[str, Any]] = [
        {"point": key, "a": _side(ra, targets_a), "b": _side(rb, targets_b)}
        for key, ra, rb in pairs
    ]
    sides: list[Record] = [row[s] for row in rows for s in ("a", "b")]
    return rows if has_price_performance(sides) else []


def print_price_performance_comparison(console: Console, rows: Sequence[Record]) -> None:
    if not rows:
        return
    flat: list[dict[str, Any]] = []
    for row in rows:
        for side in ("a", "b"):
            flat.append({**row[side], "point_key": f"{row['point']} [{side.upper()}]"})
    console.print(price_performance_table(flat, title="price-performance, A and B"))


def print_target_differences(console: Console, diffs: Sequence[Record]) -> None:
    """Server versions and settings that differ between the same-named targets of A and B."""
    if not diffs:
        return
    table = Table(
        title="target settings that differ (targets/<name>.json)", title_justify="left",
        box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False,
    )  # fmt: skip
    for name in ("target", "setting", "A", "B"):
        table.add_column(name)
    for diff in diffs:
        table.add_row(str(diff["target"]), str(diff["setting"]), str(diff["a"]), str(diff["b"]))
    console.print(table)
