"""A capacity search's figure (capacity.json): latency against the offered load, each level's
p50, p95, p99 and p99.9 (whiskers: the lowest and highest of its runs), the objectives as
horizontal rules at their limits and each objective's capacity as a vertical rule."""

from __future__ import annotations

from collections.abc import Sequence

from dbscale.report import specs
from dbscale.report.chart import Chart
from dbscale.report.rows import Row, r4
from dbscale.results.capacity_file import CapacityFile, CapacityStudy

FIGURES = (("p50", "p50_ms"), ("p95", "p95_ms"), ("p99", "p99_ms"), ("p99.9", "p999_ms"))
CHART_ID = "capacity-curve"


def curve_rows(found: CapacityFile) -> list[Row]:
    """Per level and percentile: the median of its runs' values, and their range."""
    rows: list[Row] = []
    levels = sorted({x.level for x in found.levels})
    for level in levels:
        runs = [x for x in found.levels if x.level == level]
        verdict = "pass" if all(x.state == "pass" for x in runs) else (
            "fail" if all(x.state != "pass" for x in runs) else "mixed")  # fmt: skip
        for name, field in FIGURES:
            values = sorted(v for x in runs if (v := getattr(x, field)) is not None and v > 0)
            if not values:
                continue
            rows.append({
                "level": r4(level), "percentile": name, "ms": r4(values[len(values) // 2]),
                "lo": r4(values[0]), "hi": r4(values[-1]), "runs": len(runs), "verdict": verdict,
                "achieved": r4(max(x.achieved for x in runs)),
            })  # fmt: skip
    return rows


def curve_spec(found: CapacityFile, rows: Sequence[Row]) -> specs.Spec:
    x_title = "offered rate (transactions/s)" if found.knob == "rate" else "clients"
    x = {"field": "level", "type": "quantitative", "title": x_title, "scale": {"zero": False}}
    y = {"field": "ms", "type": "quantitative", "title": "latency (ms, log scale)",
         "scale": {"type": "log"}, "axis": {"format": ",~g"}}  # fmt: skip
    color = {"field": "percentile", "type": "nominal", "title": "latency",
             "sort": [name for name, _ in FIGURES]}  # fmt: skip
    tooltip = [{"field": f, "title": t} for f, t in (
        ("level", x_title), ("achieved", "achieved (best run)"), ("percentile", "percentile"),
        ("ms", "median of runs (ms)"), ("lo", "lowest run"), ("hi", "highest run"),
        ("runs", "runs"), ("verdict", "verdict"))]  # fmt: skip
    layers: list[specs.Spec] = [
        {"mark": {"type": "line", "point": {"size": 40}},
         "encoding": {"x": x, "y": y, "color": color, "tooltip": tooltip,
                      "shape": {"field": "verdict", "type": "nominal", "title": "level",
                                "scale": {"domain": ["pass", "mixed", "fail"],
                                          "range": ["circle", "triangle", "cross"]}}}},
        {"mark": {"type": "errorbar", "ticks": True},
         "encoding": {"x": x, "y": {**y, "field": "lo"}, "y2": {"field": "hi"}, "color": color}},
    ]  # fmt: skip
    objectives = [{"limit": o.limit_ms, "label": o.objective} for o in found.objectives]
    layers.append({
        "data": {"values": objectives},
        "layer": [
            {"mark": {"type": "rule", "strokeDash": [6, 3], "color": "#cf222e"},
             "encoding": {"y": {"field": "limit", "type": "quantitative"}}},
            {"mark": {"type": "text", "align": "left", "dx": 4, "dy": -6, "color": "#cf222e",
                      "fontSize": 11},
             "encoding": {"y": {"field": "limit", "type": "quantitative"},
                          "text": {"field": "label"}, "x": {"value": 0}}},
        ],
    })  # fmt: skip
    found_levels = [{"capacity": o.capacity, "label": f"capacity {o.objective}: {o.capacity:,.4g}"}
                    for o in found.objectives if o.capacity is not None]  # fmt: skip
    if found_levels:
        layers.append({
            "data": {"values": found_levels},
            "layer": [
                {"mark": {"type": "rule", "color": "#1a7f37", "strokeWidth": 2},
                 "encoding": {"x": {"field": "capacity", "type": "quantitative"}}},
                {"mark": {"type": "text", "angle": 270, "align": "left", "dx": 6, "dy": -4,
                          "color": "#1a7f37", "fontSize": 11},
                 "encoding": {"x": {"field": "capacity", "type": "quantitative"},
                              "text": {"field": "label"}, "y": {"value": 0}}},
            ],
        })  # fmt: skip
    spec = specs.base("Latency vs offered load" + (f": {found.point}" if found.point else ""),
                      rows)  # fmt: skip
    spec.update(width=specs.WIDTH + 160, height=specs.HEIGHT + 60, layer=layers)
    return spec


def _curve_chart(found: CapacityFile, several: bool) -> Chart | None:
    rows = curve_rows(found)
    if not rows:
        return None
    answer = ", ".join(
        f"{o.objective}: {o.capacity:,.4g} {found.unit}" if o.capacity is not None
        else f"{o.objective}: undecided (a level too short to judge)" if o.short_level is not None
        else f"{o.objective}: no answer (the target got slower)" if o.drift_high is not None
        else f"{o.objective}: undecided (no confirmed level)" if o.exhausted
        else f"{o.objective}: no level passed"
        for o in found.objectives
    )  # fmt: skip
    slug = "".join(c if c.isalnum() else "-" for c in found.point).strip("-")
    chart_id = f"{CHART_ID}-{slug}" if several else CHART_ID
    title = "Latency vs offered load" + (f": {found.point}" if several else " (capacity search)")
    return Chart(
        chart_id, "capacity", title,
        f"Each level the search ran: latency percentiles of its runs (the median run; whiskers: "
        f"lowest and highest), against the load offered; dashed red: the objectives; green: "
        f"the capacity found ({answer}). Crosses failed, circles passed.",
        curve_spec(found, rows),
    )  # fmt: skip


def comparison_rows(study: CapacityStudy) -> list[Row]:
    """Per searched point: its capacity, per vCPU and the monthly cost per unit of it."""
    rows: list[Row] = []
    for found in study.searches:
        if found.capacity is None:
            continue
        fails = [o.lowest_fail for o in found.objectives if o.lowest_fail is not None]
        above = min(fails) if fails else None  # the bracket's top: the lowest level that failed
        rows.append({"config": found.point or found.target, "capacity": r4(found.capacity),
                     "capacity_hi": r4(above), "per_vcpu": r4(found.per_vcpu),
                     "cost": r4(found.cost_per_unit), "vcpus": found.vcpus,
                     "unit": found.unit})  # fmt: skip
    return rows


def _bars(rows: Sequence[Row], value: str, title: str, x_title: str) -> specs.Spec:
    y = {"field": "config", "type": "nominal", "title": None, "sort": None}
    x = {"field": value, "type": "quantitative", "title": x_title}
    tooltip = [{"field": f} for f in ("config", "capacity", "capacity_hi", "per_vcpu", "cost",
                                      "vcpus")]  # fmt: skip
    layers: list[specs.Spec] = [{"mark": {"type": "bar"},
                                 "encoding": {"y": y, "x": x, "tooltip": tooltip}}]  # fmt: skip
    if value == "capacity" and any(r.get("capacity_hi") is not None for r in rows):
        layers.append({"mark": {"type": "errorbar", "ticks": True, "color": "#333"},
                       "encoding": {"y": y, "x": x, "x2": {"field": "capacity_hi"}}})  # fmt: skip
    spec = specs.base(title, [r for r in rows if r.get(value) is not None])
    spec.update(width=specs.WIDTH - 60, height=max(60, 28 * len(rows)), layer=layers)
    return spec


def capacity_charts(study: CapacityStudy | None) -> list[Chart]:
    """A curve per search; with several, the capacities side by side (per vCPU, per dollar)."""
    if study is None:
        return []
    several = len(study.searches) > 1
    charts = [c for found in study.searches if (c := _curve_chart(found, several)) is not None]
    rows = comparison_rows(study)
    if several and rows:
        unit = rows[0]["unit"]
        charts.insert(0, Chart(
            "capacity-by-point", "capacity", "Capacity by configuration",
            f"The highest load each configuration held within every objective ({unit}; "
            "confirmed by repeated runs); whiskers reach the lowest level that failed (the "
            "search's bracket: the capacity lies between).",
            _bars(rows, "capacity", "Capacity by configuration", str(unit)),
        ))  # fmt: skip
        if any(r["per_vcpu"] is not None for r in rows):
            charts.insert(1, Chart(
                "capacity-per-vcpu", "capacity", "Capacity per vCPU",
                "Each configuration's capacity divided by its target's vCPUs.",
                _bars(rows, "per_vcpu", "Capacity per vCPU", f"{unit} per vCPU"),
            ))  # fmt: skip
        if any(r["cost"] is not None for r in rows):
            charts.insert(2, Chart(
                "capacity-cost", "capacity", "Monthly cost per unit of capacity",
                "The target's monthly cost on demand (730 h) divided by its capacity: lower is "
                "better.", _bars(rows, "cost", "Monthly cost per unit of capacity",
                                 f"cost per {unit} a month"),
            ))  # fmt: skip
    return charts
