"""A capacity search's figure (capacity.json): latency against the offered load, each level's
p50, p95, p99 and p99.9 (whiskers: the lowest and highest of its runs), the objectives as
horizontal rules at their limits and each objective's capacity as a vertical rule."""

from __future__ import annotations

from collections.abc import Sequence

from dbscale.report import specs
from dbscale.report.chart import Chart
from dbscale.report.rows import Row, r4
from dbscale.results.capacity_file import CapacityFile

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
    spec = specs.base("Latency vs offered load", rows)
    spec.update(width=specs.WIDTH + 160, height=specs.HEIGHT + 60, layer=layers)
    return spec


def capacity_charts(found: CapacityFile | None) -> list[Chart]:
    if found is None or not found.levels:
        return []
    rows = curve_rows(found)
    if not rows:
        return []
    answer = ", ".join(
        f"{o.objective}: {o.capacity:,.4g}" if o.capacity is not None else f"{o.objective}: none"
        for o in found.objectives
    )
    return [Chart(
        CHART_ID, "capacity", "Latency vs offered load (capacity search)",
        f"Each level the search ran: latency percentiles of its runs (the median run; whiskers: "
        f"lowest and highest), against the load offered; dashed red: the objectives; green: "
        f"the capacity found ({answer} {found.unit}). Crosses failed, circles passed.",
        curve_spec(found, rows),
    )]  # fmt: skip
