"""Vega-Lite specifications, one builder per kind of chart. Each takes the rows `rows.py` shaped
and returns a complete spec with its data inline, so the same dict renders in the page (vega-embed)
and as PNG/SVG (vl-convert) alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dbscale.report.rows import Row

Spec = dict[str, Any]

WIDTH = 400
HEIGHT = 260
FACET_WIDTH = 190
FACET_HEIGHT = 200
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
CONFIG: Spec = {
    "font": FONT,
    "view": {"stroke": "#d0d7de"},
    # labelLimit 0: an axis label or legend entry is never cut short, so two long point names
    # that differ at their ends never read alike ("target=main-1vcpu, warehous...").
    "axis": {"labelFontSize": 11, "titleFontSize": 12, "gridColor": "#eaeef2", "labelLimit": 0},
    "legend": {"labelFontSize": 11, "titleFontSize": 12, "labelLimit": 0, "titleLimit": 0},
    "title": {"fontSize": 14, "anchor": "start", "offset": 12},
    "range": {"category": {"scheme": "tableau10"}},
}
TABLEAU10 = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
             "#ff9da7", "#9c755f", "#bab0ac")  # fmt: skip
OTHER_RUNS = "#8c959f"  # warm-ups, cancelled and failed runs: grey


def base(title: str, rows: Sequence[Row]) -> Spec:
    return {"title": title, "config": CONFIG, "data": {"values": list(rows)}}


def _x(field: str, title: str, numeric: bool, values: Sequence[Any] = ()) -> Spec:
    """An axis over a swept setting: its own values as ticks (clients 1, 2, 4, 8 on a log scale
    when they span a factor of 8 or more), categories in the order they were run."""
    if not numeric:
        return {"field": field, "type": "ordinal", "title": title, "sort": list(values) or None}
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    positive = [v for v in numbers if v > 0]
    spread = max(positive) / min(positive) if positive and len(positive) == len(numbers) else 1
    scale: Spec = {"type": "log", "base": 2} if spread >= 8 else {"zero": False, "nice": False}
    axis: Spec = {}
    if 0 < len(numbers) <= 12:
        axis["values"] = list(numbers)
        if all(isinstance(v, int) for v in numbers):
            axis["format"] = "d"
    return {"field": field, "type": "quantitative", "title": title, "scale": scale, "axis": axis}


def _has(rows: Sequence[Row], *fields: str) -> bool:
    """Whether any row has every field: a layer without data would only draw warnings."""
    return any(all(r.get(f) is not None for f in fields) for r in rows)


def _color(rows: Sequence[Row], title: str) -> Spec:
    single = len({r.get("series") for r in rows}) <= 1
    # labelLimit 0: a legend entry is never cut short (two series must not read alike)
    color: Spec = {"field": "series", "type": "nominal", "title": title, "sort": None,
                   "legend": {"labelLimit": 0}}  # fmt: skip
    if single:
        color["legend"] = None
    return color


@dataclass(frozen=True)
class XAxis:
    """The swept setting a chart draws its points against, and what its series are named."""

    title: str
    numeric: bool
    values: Sequence[Any] = ()
    series_title: str = "series"

    def encoding(self, rows: Sequence[Row]) -> tuple[Spec, Spec]:
        """The x and color channels of the chart."""
        return _x("x", self.title, self.numeric, self.values), _color(rows, self.series_title)


def _tooltip(*fields: tuple[str, str]) -> list[Spec]:
    return [{"field": f, "title": t} for f, t in fields]


def throughput_vs_axis(rows: Sequence[Row], *, unit: str, axis: XAxis) -> Spec:
    """Median throughput against one swept axis, one line (or bar group) per series, with the
    95% CI of the median as error bars."""
    x, color = axis.encoding(rows)
    y = {"field": "tput", "type": "quantitative", "title": f"{unit} (median of runs)"}
    tooltip = _tooltip(
        ("point", "point"), ("tput", f"median {unit}"), ("tput_lo", "95% CI low"),
        ("tput_hi", "95% CI high"), ("n", "runs"), ("cv_pct", "CV %"),
    )  # fmt: skip
    spec = base(f"Throughput vs {axis.title}", rows)
    line: Spec
    if axis.numeric:
        line = {"mark": {"type": "line", "point": {"size": 50}}}
    else:
        line = {"mark": {"type": "bar"}, "encoding": {"xOffset": {"field": "series"}}}
    line.setdefault("encoding", {}).update(x=x, y=y, color=color, tooltip=tooltip)
    bars: Spec = {
        "mark": {"type": "errorbar", "ticks": True},
        "encoding": {
            "x": x,
            "y": {"field": "tput_lo", "type": "quantitative", "title": y["title"]},
            "y2": {"field": "tput_hi"},
            "color": color if axis.numeric else {"value": "#333"},
        },
    }
    if not axis.numeric:
        bars["encoding"]["xOffset"] = {"field": "series"}
    layers = [line, bars] if _has(rows, "tput_lo", "tput_hi") else [line]
    spec.update(width=WIDTH, height=HEIGHT, layer=layers)
    return spec


def latency_vs_axis(rows: Sequence[Row], *, axis: XAxis) -> Spec:
    """mean | p50 | p95 | p99 side by side against one axis; whiskers: the range over runs."""
    x, color = axis.encoding(rows)
    y = {"field": "latency_ms", "type": "quantitative", "title": "latency (ms)"}
    tooltip = _tooltip(("point", "point"), ("percentile", "percentile"),
                       ("latency_ms", "merged histogram (ms)"), ("lo", "lowest run"),
                       ("hi", "highest run"))  # fmt: skip
    if axis.numeric:
        main: Spec = {"mark": {"type": "line", "point": {"size": 40}}}
    else:
        main = {"mark": "bar", "encoding": {"xOffset": {"field": "series"}}}
    main.setdefault("encoding", {}).update(x=x, y=y, color=color, tooltip=tooltip)
    whisker: Spec = {
        "mark": {"type": "errorbar", "ticks": True},
        "encoding": {"x": x, "y": {"field": "lo", "type": "quantitative", "title": y["title"]},
                     "y2": {"field": "hi"}, "color": color if axis.numeric else {"value": "#333"}},
    }  # fmt: skip
    if not axis.numeric:
        whisker["encoding"]["xOffset"] = {"field": "series"}
    spec = base(f"Latency vs {axis.title}", rows)
    spec.update(
        facet={
            "column": {"field": "percentile", "title": None, "sort": ["mean", "p50", "p95", "p99"]}
        },
        spec={
            "width": FACET_WIDTH,
            "height": FACET_HEIGHT,
            "layer": [main, whisker] if _has(rows, "lo", "hi") else [main],
        },
        resolve={"scale": {"y": "independent"}},
    )
    return spec


def bars_per_configuration(
    rows: Sequence[Row], *, title: str, value: str, low: str, high: str, x_title: str
) -> Spec:
    """One horizontal bar per configuration (its best load level), CI whiskers."""
    y = {"field": "config", "type": "nominal", "title": None, "sort": None,  # rows come sorted
         "axis": {"labelLimit": 0}}  # a label is never cut short  # fmt: skip
    tooltip = _tooltip(("config", "configuration"), ("at", "at"), (value, x_title),
                       (low, "95% CI low"), (high, "95% CI high"), ("n", "runs"))  # fmt: skip
    spec = base(title, rows)
    height = max(60, 28 * len(rows))
    spec.update(
        width=WIDTH - 120,
        height=height,
        layer=[
            {
                "mark": {"type": "bar", "color": "#4e79a7"},
                "encoding": {
                    "y": y,
                    "x": {"field": value, "type": "quantitative", "title": x_title},
                    "tooltip": tooltip,
                },
            },
            *(
                [
                    {
                        "mark": {"type": "errorbar", "ticks": True, "color": "#333"},
                        "encoding": {
                            "y": y,
                            "x": {"field": low, "type": "quantitative", "title": x_title},
                            "x2": {"field": high},
                        },
                    }
                ]
                if _has(rows, low, high)
                else []
            ),
            {
                "mark": {
                    "type": "text",
                    "align": "left",
                    "dx": 4,
                    "fontSize": 10,
                    "color": "white",
                },
                "encoding": {
                    "y": y,
                    "x": {"datum": 0, "type": "quantitative"},
                    "text": {"field": "at"},
                },
            },
        ],
    )
    return spec


def variation(rows: Sequence[Row], *, axis: XAxis) -> Spec:
    """Run-to-run CV of throughput and latency percentiles per point (seed 000, Fig. 7)."""
    x, color = axis.encoding(rows)
    mark: Spec = {"type": "line", "point": {"size": 40}} if axis.numeric else {"type": "point"}
    spec = base("Run-to-run variation (CV)", rows)
    spec.update(
        facet={"column": {"field": "metric", "title": None,
                          "sort": ["throughput", "p50 latency", "p95 latency", "p99 latency"]}},
        spec={
            "width": FACET_WIDTH - 60,
            "height": FACET_HEIGHT - 40,
            "mark": mark,
            "encoding": {
                "x": x,
                "y": {"field": "cv_pct", "type": "quantitative", "title": "CV (%)"},
                "color": color,
                "tooltip": _tooltip(("point", "point"), ("metric", "metric"),
                                    ("cv_pct", "CV %"), ("n", "runs")),
            },
        },
    )  # fmt: skip
    return spec


def point_colors(points: Sequence[str], rows: Sequence[Row]) -> Spec:
    """The same colour for a point in every chart coloured by point (the spectrum's order), grey
    for the runs that belong to no point (warm-ups, cancelled, failed)."""
    others = [p for p in dict.fromkeys(r["point"] for r in rows) if p not in points]
    colors = [TABLEAU10[i % len(TABLEAU10)] for i in range(len(points))]
    return {"domain": [*points, *others], "range": colors + [OTHER_RUNS] * len(others)}


def timeline(
    rows: Sequence[Row], *, points: Sequence[str], percentile: str = "p95", step_s: int = 1
) -> Spec:
    """Throughput and latency per second of every run, one line per run coloured by its point, so
    warm-up, stalls and drift show; clicking a legend entry picks that point's runs out."""
    every = "per second" if step_s <= 1 else f"per {step_s} s (mean TPS, worst latency)"
    color = {"field": "point", "type": "nominal", "title": "point",
             "scale": point_colors(points, rows), "legend": {"symbolLimit": 60}}  # fmt: skip
    opacity = {"condition": {"param": "pick", "empty": True, "value": 1.0}, "value": 0.12}
    tooltip = _tooltip(("run", "run"), ("t_s", "t (s)"), ("tps", "TPS"), ("p50", "p50 ms"),
                       ("p95", "p95 ms"), ("p99", "p99 ms"), ("errors", "errors"))  # fmt: skip
    x = {"field": "t_s", "type": "quantitative", "title": "time into the run (s)",
         "scale": {"zero": True}}  # fmt: skip
    per_run: dict[str, int] = {}
    for row in rows:
        per_run[row["run"]] = per_run.get(row["run"], 0) + 1
    mark: Spec = {
        "type": "line",
        "strokeWidth": 1.5,
        "point": max(per_run.values(), default=0) <= 30,
    }

    def panel(field: str, title: str, with_param: bool) -> Spec:
        view: Spec = {
            "width": WIDTH,
            "height": 170,
            "mark": mark,
            "encoding": {
                "x": x,
                "y": {"field": field, "type": "quantitative", "title": title},
                "color": color,
                "detail": {"field": "run"},
                "opacity": opacity,
                "tooltip": tooltip,
            },
        }
        if with_param:
            view["params"] = [
                {"name": "pick", "select": {"type": "point", "fields": ["point"]}, "bind": "legend"}
            ]
        return view

    spec = base(f"Each run over time ({every})", rows)
    spec.update(
        vconcat=[panel("tps", "TPS", True), panel(percentile, f"{percentile} latency (ms)", False)],
        resolve={"scale": {"color": "shared"}},
    )
    return spec


def spectrum(rows: Sequence[Row], *, points: Sequence[str]) -> Spec:
    """Latency by percentile from each point's merged histogram (HdrHistogram's plot)."""
    label = "datum.value == 0 ? '0%' : format(100 - 100 * pow(10, -datum.value), '.5~f') + '%'"
    spec = base("Latency distribution (merged histogram per point)", rows)
    spec.update(
        width=WIDTH,
        height=HEIGHT,
        mark={"type": "line", "interpolate": "step-after", "strokeWidth": 1.5},
        encoding={
            "x": {"field": "nines", "type": "quantitative", "title": "percentile",
                  "scale": {"domain": [0, 5]},
                  "axis": {"values": [0, 1, 2, 3, 4, 5], "labelExpr": label}},
            "y": {"field": "latency_ms", "type": "quantitative", "title": "latency (ms)",
                  "scale": {"type": "log"}},
            "color": {"field": "point", "type": "nominal", "title": "point",
                      "scale": point_colors(points, rows)},
            "tooltip": _tooltip(("point", "point"), ("percentile", "percentile"),
                                ("latency_ms", "latency (ms)")),
        },
    )  # fmt: skip
    return spec


def metric_panels(rows: Sequence[Row], *, title: str, axis: XAxis) -> Spec:
    """Several measured quantities against one axis, one small panel each (rows carry `metric`
    and `value`), one line per series: resource use like seed 000's Fig. 2."""
    x = axis.encoding(rows)[0]
    mark: Spec = {"type": "line", "point": {"size": 40}} if axis.numeric else {"type": "point"}
    spec = base(title, rows)
    spec.update(
        facet={"column": {"field": "metric", "title": None, "sort": None}},  # as given
        spec={
            "width": FACET_WIDTH - 40,
            "height": FACET_HEIGHT - 40,
            "mark": mark,
            "encoding": {
                "x": x,
                "y": {"field": "value", "type": "quantitative", "title": None},
                "color": axis.encoding(rows)[1],
                "tooltip": _tooltip(("point", "point"), ("metric", "metric"), ("value", "value")),
            },
        },
        resolve={"scale": {"y": "independent"}},
    )
    return spec


def stacked_shares(rows: Sequence[Row], *, title: str, x_title: str) -> Spec:
    """Per point, what its time went to (rows: point, part, share): wait-event breakdowns."""
    spec = base(title, rows)
    spec.update(
        width=WIDTH,
        height=HEIGHT,
        mark="bar",
        encoding={
            "x": {"field": "point", "type": "nominal", "title": None, "sort": None,
                  "axis": {"labelAngle": -30}},
            "y": {"field": "share", "type": "quantitative", "title": x_title, "stack": "normalize",
                  "axis": {"format": "%"}},
            "color": {"field": "part", "type": "nominal", "title": None},
            "tooltip": _tooltip(("point", "point"), ("part", "what"), ("share", "share"),
                                ("amount", "amount")),
        },
    )  # fmt: skip
    return spec
