"""Seed 000's Fig. 1 and Fig. 2 for any study whose runs span instance sizes (cloud targets with
`vcpus`, or local sizes): TPS and mean latency by vCPU count, and CPU and network use by vCPU
count, one line per combination of the other swept settings (the client counts, in the seed).

The vCPU count is often not an axis of its own in such a study: each size is a target, so the
report's axes sweep the target and let `vcpus` follow it. Here the roles swap: vCPUs become the
x axis and the axes that only name a size (the target, its name) follow them.
"""

from __future__ import annotations

from dataclasses import replace

from dbscale.report import resources, rows, specs
from dbscale.report.axes import Axis
from dbscale.report.chart import Chart
from dbscale.report.facts import Value
from dbscale.report.view import PointView, ResultsView

VCPUS = "vcpus"
CPU_AND_NETWORK = ("client CPU (cores)", "server CPU (% of its vCPUs)", "server CPU (cores)",
                   "host CPU busy (%)", "network in+out (Mbit/s)")  # fmt: skip


def _one_to_one(points: list[PointView], key: str, other: str) -> bool:
    """Whether each value of `key` goes with one value of `other` and the reverse."""
    forward: dict[str, Value] = {}
    backward: dict[str, Value] = {}
    for point in points:
        a, b = point.coords.get(key), point.coords.get(other)
        if forward.setdefault(repr(a), b) != b or backward.setdefault(repr(b), a) != a:
            return False
    return True


def sized_view(study: ResultsView) -> ResultsView | None:
    """The study with vCPUs as its first swept axis and the axes that only name a size following
    it; None unless the points span two or more vCPU counts."""
    vcpus = next((a for a in study.axes if a.key == VCPUS), None)
    if vcpus is None or len(vcpus.values) < 2 or not vcpus.numeric:
        return None
    axes: list[Axis] = [replace(vcpus, swept=True)]
    for axis in study.axes:
        if axis.key == VCPUS:
            continue
        names_a_size = _one_to_one(study.points, axis.key, VCPUS)
        axes.append(replace(axis, swept=axis.swept and not names_a_size))
    return replace(study, axes=axes)


def size_charts(study: ResultsView) -> list[Chart]:
    """Fig. 1 (throughput and mean latency by vCPU) and, for observed runs, Fig. 2 (CPU and
    network by vCPU)."""
    sized = sized_view(study)
    if sized is None:
        return []
    axis = sized.axes[0]
    x_axis = specs.XAxis(
        title="vCPUs", numeric=True, values=list(axis.values),
        series_title=rows.series_title(sized, axis),
    )  # fmt: skip
    figures: list[rows.Row] = []
    for point in sized.points:
        base = {
            "x": rows.x_value(point, axis),
            "series": point.series(sized.axes, axis.key),
            "point": point.label,
        }
        mean = point.summary.latency_ms.mean
        figures.append({**base, "metric": f"{sized.unit} (median of runs)",
                        "value": rows.r4(point.summary.throughput.median)})  # fmt: skip
        figures.append({**base, "metric": "mean latency (ms)", "value": rows.r4(mean)})
    title = f"{sized.unit} and latency by vCPUs"
    charts = [
        Chart(
            "by-vcpus", "sizes", title,
            f"Seed 000's Fig. 1: the median {sized.unit} of each point's runs and the mean "
            "latency of all their transactions, by the target's vCPU count; one line per "
            "combination of the other swept settings.",
            specs.metric_panels(figures, title=title, axis=x_axis),
        )
    ]  # fmt: skip
    use = [r for r in resources.resource_rows(sized, axis) if r["metric"] in CPU_AND_NETWORK]
    if use:
        charts.append(
            Chart(
                "resources-by-vcpus", "sizes", "CPU and network by vCPUs",
                "Seed 000's Fig. 2: CPU and network use by the target's vCPU count, each the "
                "mean over a run's seconds, then over the point's runs.",
                specs.metric_panels(use, title="CPU and network by vCPUs", axis=x_axis),
            )
        )  # fmt: skip
    return charts
