"""The Cloud Report's TPC-C figures (seed 003), drawn when every measured run is TPC-C swept over
warehouses per vCPU on targets with a vCPU count: tpmC per vCPU against warehouses per vCPU (one
line per target, each point marked by its pass verdict), median tpmC per vCPU of every target at
one warehouse count, and $/TPM there (on-demand and reserved). A point passes when every one of its
runs passed its rule; the warehouse count the bars compare at is the highest one every target
passed, so a failing point never stands for a target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dbscale.report import specs
from dbscale.report.chart import Chart
from dbscale.report.rows import Row, r4
from dbscale.report.view import PointView, ResultsView

WAREHOUSES_AXIS = "axis.warehouses_per_vcpu"
VERDICTS = {"pass": ("circle", "#4e79a7"), "fail": ("cross", "#e15759")}
IDS = ("tpcc-scaling", "tpcc-per-vcpu-at-count", "tpcc-price-performance")
COST_BREAKDOWN_ID = "cost-breakdown"  # when storage is priced


@dataclass(frozen=True)
class TpccPoint:
    target: str
    warehouses_per_vcpu: float
    vcpus: int | float
    point: PointView

    @property
    def passed(self) -> bool:
        """Every run of the point passed its rule (a run without a verdict does not)."""
        return all(r.record.tpcc is not None and r.record.tpcc.passed for r in self.point.runs)

    @property
    def verdict(self) -> str:
        return "pass" if self.passed else "fail"


def tpcc_points(study: ResultsView) -> list[TpccPoint]:
    """The study's points as the figures see them; empty when the study is not such a sweep."""
    if study.unit != "tpmC" or not any(a.key == WAREHOUSES_AXIS and a.swept for a in study.axes):
        return []
    found: list[TpccPoint] = []
    for point in study.points:
        first = point.runs[0]
        vcpus, per_vcpu = first.facts.get("vcpus"), point.coords.get(WAREHOUSES_AXIS)
        if not isinstance(vcpus, int) or vcpus <= 0 or not isinstance(per_vcpu, int | float):
            return []
        found.append(TpccPoint(first.record.target_name or "target", float(per_vcpu), vcpus, point))
    return found


def comparison_count(points: Sequence[TpccPoint]) -> tuple[float, bool]:
    """The warehouses per vCPU the bars compare targets at: the highest every target passed
    (True), else the lowest every target ran (False)."""
    targets = {p.target for p in points}
    counts = sorted({p.warehouses_per_vcpu for p in points})
    everywhere = [
        c for c in counts if {p.target for p in points if p.warehouses_per_vcpu == c} == targets
    ]
    passed = [c for c in everywhere if all(p.passed for p in points if p.warehouses_per_vcpu == c)]
    if passed:
        return passed[-1], True
    return (everywhere or counts)[0], False


def _per_vcpu(point: TpccPoint) -> Row:
    tput = point.point.summary.throughput
    ci = tput.ci
    median = tput.median
    return {
        "target": point.target,
        "x": point.warehouses_per_vcpu,
        "verdict": point.verdict,
        "point": point.point.label,
        "n": point.point.summary.runs,
        "vcpus": point.vcpus,
        "tpmc": r4(median),
        "per_vcpu": r4(median / point.vcpus) if median is not None else None,
        "per_vcpu_lo": r4(max(ci.low, 0.0) / point.vcpus) if ci else None,
        "per_vcpu_hi": r4(ci.high / point.vcpus) if ci else None,
    }


def scaling_rows(points: Sequence[TpccPoint]) -> list[Row]:
    return [_per_vcpu(p) for p in points]


def price_rows(points: Sequence[TpccPoint], count: float) -> list[Row]:
    """Per target at `count` warehouses per vCPU: $/TPM on demand and reserved, when priced."""
    rows: list[Row] = []
    for p in points:
        cost = p.point.summary.cost
        if p.warehouses_per_vcpu != count or cost is None:
            continue
        for pricing, value, bounds in (
            ("on-demand", cost.per_tpm_on_demand, cost.per_tpm_on_demand_ci),
            ("reserved", cost.per_tpm_reserved, cost.per_tpm_reserved_ci),
        ):
            if value is None:
                continue
            rows.append({
                "target": p.target, "pricing": pricing, "verdict": p.verdict,
                "cost": r4(value), "cost_lo": r4(bounds.low if bounds else None),
                "cost_hi": r4(bounds.high if bounds else None), "currency": cost.currency,
                "price_source": f"{cost.price_source} ({cost.price_date})",
            })  # fmt: skip
    return rows


def cost_share_rows(points: Sequence[TpccPoint]) -> list[Row]:
    """Per priced target, its monthly compute and storage cost, on demand and reserved, with
    storage's share of the total (the Cloud Report's point that storage is much of the bill)."""
    rows: list[Row] = []
    seen: set[str] = set()
    for p in points:
        cost = p.point.summary.cost
        if cost is None or cost.storage_per_month is None or p.target in seen:
            continue
        seen.add(p.target)
        for pricing, compute, share in (
            ("on-demand", cost.compute_on_demand_per_month, cost.storage_share_on_demand_pct),
            ("reserved", cost.compute_reserved_per_month, cost.storage_share_reserved_pct),
        ):
            if compute is None:
                continue
            label = f"storage {share:.0f}%" if share is not None else ""
            for part, value in (("compute", compute), ("storage", cost.storage_per_month)):
                rows.append({"target": p.target, "pricing": pricing, "part": part,
                             "monthly": r4(value), "share_pct": r4(share), "label": label,
                             "currency": cost.currency})  # fmt: skip
    return rows


def cost_share_spec(rows: Sequence[Row]) -> specs.Spec:
    """Stacked bars: each target's monthly compute and storage, a bar per pricing, labelled
    with storage's share."""
    currency = rows[0]["currency"] or "USD"
    y = {"field": "target", "type": "nominal", "title": None, "sort": None,
         "axis": {"labelLimit": 0}}  # fmt: skip
    totals: dict[tuple[str, str], float] = {}
    for r in rows:
        key = (str(r["target"]), str(r["pricing"]))
        totals[key] = totals.get(key, 0.0) + float(r["monthly"] or 0.0)
    # Room right of the longest bar for its label ("storage 23%").
    room = max(totals.values(), default=1.0) * 1.3
    x = {"field": "monthly", "type": "quantitative", "stack": "zero",
         "title": f"{currency} per month (730 h)", "scale": {"domain": [0, room]}}  # fmt: skip
    offset = {"field": "pricing", "sort": None}
    bar = {
        "mark": {"type": "bar"},
        "encoding": {
            "y": y, "x": x, "yOffset": offset,
            "color": {"field": "part", "type": "nominal", "title": "cost",
                      "scale": {"domain": ["compute", "storage"],
                                "range": ["#4c78a8", "#f58518"]}},
            "opacity": {"field": "pricing", "type": "nominal", "title": "pricing",
                        "scale": {"range": [1.0, 0.6]}},
            "tooltip": [{"field": f, "title": t} for f, t in (
                ("target", "target"), ("pricing", "pricing"), ("part", "cost"),
                ("monthly", f"{currency} per month"), ("share_pct", "storage % of the total"))],
        },
    }  # fmt: skip
    label = {
        "transform": [{"joinaggregate": [{"op": "sum", "field": "monthly", "as": "total"}],
                       "groupby": ["target", "pricing"]},
                      {"filter": "datum.part === 'storage'"}],
        # at the end of the storage segment, which ends the stack
        "mark": {"type": "text", "align": "left", "dx": 4, "fontSize": 11},
        "encoding": {"y": y, "yOffset": offset, "text": {"field": "label"},
                     "x": {"field": "total", "type": "quantitative",
                           "scale": {"domain": [0, room]}}},
    }  # fmt: skip
    spec = specs.base("Monthly cost: compute and storage", rows)
    spec.update(width=specs.WIDTH - 160, height=max(60, 28 * len(rows) // 2), layer=[bar, label])
    return spec


def _verdict_scale(channel: str) -> dict[str, Any]:
    index = 0 if channel == "shape" else 1
    return {
        "domain": list(VERDICTS),
        "range": [VERDICTS[v][index] for v in VERDICTS],
    }


def scaling_spec(rows: Sequence[Row]) -> specs.Spec:
    """tpmC per vCPU against warehouses per vCPU: a line per target, CI whiskers, each point's
    shape its verdict."""
    counts = sorted({r["x"] for r in rows})
    x = {"field": "x", "type": "quantitative", "title": "warehouses per vCPU",
         "scale": {"zero": False, "nice": False}, "axis": {"values": counts}}  # fmt: skip
    y = {"field": "per_vcpu", "type": "quantitative", "title": "tpmC per vCPU (median of runs)"}
    color = {"field": "target", "type": "nominal", "title": "target", "sort": None}
    tooltip = [{"field": f, "title": t} for f, t in (
        ("target", "target"), ("x", "warehouses per vCPU"), ("per_vcpu", "tpmC per vCPU"),
        ("per_vcpu_lo", "95% CI low"), ("per_vcpu_hi", "95% CI high"), ("tpmc", "tpmC"),
        ("verdict", "pass rule"), ("n", "runs"))]  # fmt: skip
    layers: list[specs.Spec] = [
        {"mark": {"type": "line"}, "encoding": {"x": x, "y": y, "color": color}},
        {"mark": {"type": "point", "size": 90, "filled": True, "opacity": 1},
         "encoding": {"x": x, "y": y, "color": color, "tooltip": tooltip,
                      "shape": {"field": "verdict", "type": "nominal", "title": "pass rule",
                                "scale": _verdict_scale("shape")}}},
    ]  # fmt: skip
    if any(r.get("per_vcpu_lo") is not None for r in rows):
        layers.insert(1, {
            "mark": {"type": "errorbar", "ticks": True},
            "encoding": {"x": x, "y": {**y, "field": "per_vcpu_lo"}, "y2": {"field": "per_vcpu_hi"},
                         "color": color},
        })  # fmt: skip
    spec = specs.base("tpmC per vCPU vs warehouses per vCPU", rows)
    spec.update(width=specs.WIDTH, height=specs.HEIGHT, layer=layers)
    return spec


def bars_spec(
    rows: Sequence[Row], *, title: str, value: str, x_title: str, offset: str | None = None
) -> specs.Spec:
    """One bar per target (per `offset` within it), coloured by verdict, CI whiskers."""
    y = {"field": "target", "type": "nominal", "title": None, "sort": None}
    x = {"field": value, "type": "quantitative", "title": x_title}
    color = {"field": "verdict", "type": "nominal", "title": "pass rule",
             "scale": _verdict_scale("color")}  # fmt: skip
    fields = [("target", "target"), ("verdict", "pass rule"), (value, x_title),
              (f"{value}_lo", "95% CI low"), (f"{value}_hi", "95% CI high")]  # fmt: skip
    if offset:
        fields.insert(1, (offset, offset))
    bar: specs.Spec = {
        "mark": {"type": "bar"},
        "encoding": {
            "y": y,
            "x": x,
            "color": color,
            "tooltip": [{"field": f, "title": t} for f, t in fields],
        },
    }
    whisker: specs.Spec = {"mark": {"type": "errorbar", "ticks": True, "color": "#333"},
                           "encoding": {"y": y, "x": {**x, "field": f"{value}_lo"},
                                        "x2": {"field": f"{value}_hi"}}}  # fmt: skip
    if offset:
        for layer in (bar, whisker):
            layer["encoding"]["yOffset"] = {"field": offset, "sort": None}
        bar["encoding"]["opacity"] = {"field": offset, "type": "nominal", "title": "pricing",
                                      "scale": {"range": [1.0, 0.55]}}  # fmt: skip
    layers = [bar, whisker] if any(r.get(f"{value}_lo") is not None for r in rows) else [bar]
    spec = specs.base(title, rows)
    bars = len(rows)
    spec.update(width=specs.WIDTH - 120, height=max(60, 28 * bars), layer=layers)
    return spec


def tpcc_charts(study: ResultsView) -> list[Chart]:
    """The three figures, or none when the study is not a TPC-C sweep of warehouses per vCPU."""
    points = tpcc_points(study)
    if not points:
        return []
    count, all_passed = comparison_count(points)
    at = f"{count:g} warehouses per vCPU"
    why = (
        "the highest count every target passed at"
        if all_passed
        else "no count passed on every target, so the lowest they all ran; red bars failed"
    )
    charts = [
        Chart(
            IDS[0], "tpcc-scaling", "tpmC per vCPU vs warehouses per vCPU",
            "Median tpmC of each point's runs divided by the target's vCPUs (per node, as the "
            "plan sized the point and the Cloud Report counted them), one line per target; "
            "whiskers: the 95% CI; a cross marks a point where some run failed its pass rule.",
            scaling_spec(scaling_rows(points)),
        ),
        Chart(
            IDS[1], "tpcc-per-vcpu", f"Median tpmC per vCPU at {at}",
            f"Each target at {at} ({why}); whiskers: the 95% CI of the median.",
            bars_spec(
                [_per_vcpu(p) for p in points if p.warehouses_per_vcpu == count],
                title=f"Median tpmC per vCPU at {at}", value="per_vcpu", x_title="tpmC per vCPU",
            ),
        ),
    ]  # fmt: skip
    prices = price_rows(points, count)
    if prices:
        currency = prices[0]["currency"] or "USD"
        sources = "; ".join(sorted({str(r["price_source"]) for r in prices}))
        charts.append(Chart(
            IDS[2], "tpcc-price", f"$/TPM at {at}",
            f"Monthly cost (730 h, compute and storage) per tpmC of each target at {at} ({why}), "
            "on-demand and, where priced, reserved (lighter); lower is better; whiskers carry the "
            f"tpmC CI into the cost. Prices: {sources}.",
            bars_spec(prices, title=f"{currency} per month per tpmC at {at}", value="cost",
                      x_title=f"{currency} per month per tpmC", offset="pricing"),
        ))  # fmt: skip
    shares = cost_share_rows(points)
    if shares:
        charts.append(Chart(
            COST_BREAKDOWN_ID, "cost-breakdown", "Monthly cost: compute and storage",
            "Each target's monthly cost (730 h) split into compute and storage, on-demand and "
            "reserved (lighter), with storage's share of the total: cheap compute makes storage a "
            "large part of the bill (the Cloud Report's point).",
            cost_share_spec(shares),
        ))  # fmt: skip
    return charts
