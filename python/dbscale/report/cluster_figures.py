"""A cluster's figures: each node's throughput second by second in one measured run per point
(the first), with its fault steps marked where they happened, and each node's latency per
point (p50 and p99 of its histograms merged over the point's runs)."""

from __future__ import annotations

from dbscale.report import specs
from dbscale.report.chart import Chart
from dbscale.report.cluster_section import cluster_points, node_latency
from dbscale.report.rows import Row, r4
from dbscale.report.view import ResultsView


def node_series_rows(study: ResultsView) -> tuple[list[Row], list[Row]]:
    """(per node and second: TPS; per fault step: when and what) of each point's first run."""
    series: list[Row] = []
    marks: list[Row] = []
    for point in cluster_points(study):
        run = next(r for r in point.runs if r.record.nodes)
        names = [f"n{i + 1}" for i in range(len(run.record.nodes))]
        previous = 0.0
        for interval in run.record.window_intervals:
            width = max(interval.t_s - previous, 1e-9)
            counts = interval.by_node or [0] * len(names)
            for name, count in zip(names, counts, strict=False):
                series.append({"point": point.label, "node": name, "t_s": r4(interval.t_s),
                               "tps": r4(count / width)})  # fmt: skip
            previous = interval.t_s
        for window in run.record.fault_windows:
            marks.append({"point": point.label, "t_s": r4(window.at_s),
                          "step": f"{window.action} {window.node or '?'}"})  # fmt: skip
    return series, marks


def nodes_over_time_spec(series: list[Row], marks: list[Row]) -> specs.Spec:
    x = {"field": "t_s", "type": "quantitative", "title": "seconds into the measured run"}
    layers: list[specs.Spec] = [
        {"mark": {"type": "line", "interpolate": "step-before"},
         "encoding": {"x": x, "y": {"field": "tps", "type": "quantitative",
                                    "title": "transactions/s on the node"},
                      "color": {"field": "node", "type": "nominal", "title": "node"},
                      "tooltip": [{"field": "node"}, {"field": "t_s", "title": "second"},
                                  {"field": "tps", "title": "TPS"}]}},
    ]  # fmt: skip
    if marks:
        layers += [
            {"data": {"values": marks}, "mark": {"type": "rule", "strokeDash": [4, 3],
                                                 "color": "#e15759"},
             "encoding": {"x": x, "tooltip": [{"field": "step"},
                                              {"field": "t_s", "title": "at s"}]}},
            {"data": {"values": marks}, "mark": {"type": "text", "align": "left", "dx": 3,
                                                 "dy": -4, "color": "#e15759"},
             "encoding": {"x": x, "y": {"value": 8}, "text": {"field": "step"}}},
        ]  # fmt: skip
    return {
        **specs.base("Throughput per node over time", series),
        "facet": {"row": {"field": "point", "type": "nominal", "title": None}},
        "spec": {"width": 640, "height": 160, "layer": layers},
        "resolve": {"scale": {"x": "independent"}},
    }


def node_latency_rows(study: ResultsView) -> list[Row]:
    rows: list[Row] = []
    for point in cluster_points(study):
        runs = [r for r in point.runs if r.record.nodes]
        for index in range(len(runs[0].record.nodes)):
            p50, p99 = node_latency(runs, index)
            for name, value in (("p50", p50), ("p99", p99)):
                if value is not None:
                    rows.append({"point": point.label, "node": f"n{index + 1}",
                                 "percentile": name, "ms": r4(value)})  # fmt: skip
    return rows


def node_latency_spec(rows: list[Row]) -> specs.Spec:
    return {
        **specs.base("Latency per node", rows),
        "facet": {"row": {"field": "point", "type": "nominal", "title": None}},
        "spec": {
            "width": 480,
            "mark": "bar",
            "encoding": {
                "y": {"field": "node", "type": "nominal", "title": None},
                "yOffset": {"field": "percentile"},
                "x": {"field": "ms", "type": "quantitative", "title": "latency (ms)"},
                "color": {"field": "percentile", "type": "nominal", "title": "latency"},
                "tooltip": [{"field": "node"}, {"field": "percentile"}, {"field": "ms"}],
            },
        },
    }


def cluster_charts(study: ResultsView) -> list[Chart]:
    series, marks = node_series_rows(study)
    if not series:
        return []
    charts = [
        Chart(
            "nodes-over-time", "cluster", "Throughput per node over time",
            "Each node's transactions per second in the first measured run of each point; the "
            "dashed lines are its fault steps, where they happened. A node's line at zero is a "
            "node without clients (or lost); its clients' work moves to the others.",
            nodes_over_time_spec(series, marks),
        )
    ]  # fmt: skip
    latency = node_latency_rows(study)
    if latency:
        charts.append(
            Chart(
                "node-latency", "cluster", "Latency per node",
                "p50 and p99 of each node's transactions, its histograms merged over the "
                "point's runs (a failover's transactions count on the node that served them).",
                node_latency_spec(latency),
            )
        )  # fmt: skip
    return charts
