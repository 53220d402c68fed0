"""Which charts a study gets, from its shape: throughput and latency against every swept numeric
axis (bars per value when only categories were swept), peak throughput per configuration (and
per vCPU, and price-performance, when those are known), run-to-run variation when runs were
repeated, every run's per-second series, each point's latency spectrum, and resource use when runs
were observed; a study over instance sizes gets seed 000's figures by vCPU (size_figures.py), and
a TPC-C sweep of warehouses per vCPU the Cloud Report's (tpcc_figures.py). Each chart is a
Vega-Lite spec with its data inline.
"""

from __future__ import annotations

import re
from typing import Any

from dbscale.report import (
    capacity_figures,
    cluster_figures,
    headline,
    micro_figures,
    resources,
    rows,
    size_figures,
    specs,
    tpcc_figures,
)
from dbscale.report.axes import Axis
from dbscale.report.chart import Chart
from dbscale.report.view import ResultsView


def primary_axis(study: ResultsView) -> Axis | None:
    """The axis the point-by-point charts run along: the first swept numeric axis, else the first
    swept one; None for a single point."""
    swept = study.swept
    return next((a for a in swept if a.numeric), swept[0] if swept else None)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _axis_values(axis: Axis | None) -> list[Any]:
    if axis is None:
        return []
    return list(axis.values) if axis.numeric else [axis.format(v) for v in axis.values]


def plan_charts(study: ResultsView) -> list[Chart]:
    """The study's charts, in page order."""
    charts: list[Chart] = capacity_figures.capacity_charts(study.capacity)
    if study.capacity is not None:  # levels of one search, not a sweep: its curve, then runs
        return charts + [c for c in (_timeline(study),) if c is not None]
    # A TPC-C sweep of warehouses per vCPU gets the Cloud Report's figures instead of the peak
    # per configuration (a peak there could be a point that failed its pass rule).
    tpcc = tpcc_figures.tpcc_charts(study)
    if len(study.points) >= 2:
        charts += _against_axes(study)
        charts += size_figures.size_charts(study)
        charts += headline.penalty_charts(study)
        charts += tpcc or _per_configuration(study)
    else:
        charts += tpcc
    if study.repeated:
        charts.append(_variation(study))
    charts += _resources(study)
    timeline = _timeline(study)
    if timeline is not None:
        charts.append(timeline)
    spectrum_rows = rows.spectrum_rows(study)
    if spectrum_rows:
        charts.append(
            Chart(
                "latency-spectrum", "spectrum", "Latency distribution",
                "Latency at each percentile of every transaction of a point (its runs' histograms "
                "merged); the x axis stretches the tail: 99%, 99.9%, 99.99%.",
                specs.spectrum(spectrum_rows, points=[p.label for p in study.points]),
            )
        )  # fmt: skip
    charts += cluster_figures.cluster_charts(study)
    charts += micro_figures.micro_charts(study)
    return charts


def _against_axes(study: ResultsView) -> list[Chart]:
    swept = study.swept
    numeric = [a for a in swept if a.numeric]
    charts: list[Chart] = []
    for axis in numeric or swept:
        x_axis = _x_axis(study, axis)
        slug = _slug(axis.title)
        caption_ci = (
            "Error bars: 95% CI of the median (order statistics, 6+ runs), with fewer runs "
            "the Student-t CI of the mean."
            if study.repeated
            else "One run per point: no error bars."
        )
        charts.append(
            Chart(
                f"throughput-vs-{slug}", "throughput", f"Throughput vs {axis.title}",
                f"Median {study.unit} of the runs at each {axis.title}, one "
                f"{'line' if axis.numeric else 'bar'} per combination of the other swept "
                f"settings. {caption_ci}",
                specs.throughput_vs_axis(
                    rows.point_rows(study, axis), unit=study.unit, axis=x_axis
                ),
            )
        )  # fmt: skip
        charts.append(
            Chart(
                f"latency-vs-{slug}", "latency", f"Latency vs {axis.title}",
                "Mean, p50, p95 and p99 read from the merged histogram of each point's runs "
                "(never averaged over runs); whiskers span the lowest and highest single run.",
                specs.latency_vs_axis(rows.latency_rows(study, axis), axis=x_axis),
            )
        )  # fmt: skip
    return charts


# The bar charts per configuration: their ids by kind.
BAR_IDS = {
    "configurations": "throughput-per-configuration",
    "per-vcpu": "throughput-per-vcpu",
    "price-performance": "price-performance",
}


def _bars(table: list[rows.Row], kind: str, title: str, caption: str, value: str, x: str) -> Chart:
    """One bar per configuration of `value` (whiskers `value`_lo .. `value`_hi)."""
    spec = specs.bars_per_configuration(
        table, title=title, value=value, low=f"{value}_lo", high=f"{value}_hi", x_title=x
    )
    return Chart(BAR_IDS[kind], kind, title, caption, spec)


def _per_configuration(study: ResultsView) -> list[Chart]:
    table = rows.config_rows(study)
    if len(table) < 2:
        return []
    unit = study.unit
    charts: list[Chart] = []
    # With one swept axis and no load axis the bars would repeat "throughput vs" that axis.
    if len(study.swept) != 1 or study.swept[0].key in rows.LOAD_AXES:
        charts.append(_bars(
            table, "configurations", "Peak throughput per configuration",
            f"Each configuration's best median {unit} over the load levels tried (the label says "
            "at which); whiskers: its 95% CI.", "tput", f"{unit} (median)",
        ))  # fmt: skip
    if all("per_vcpu" in row for row in table):
        charts.append(_bars(
            table, "per-vcpu", "Peak throughput per vCPU",
            f"The peak {unit} divided by the target's vCPU count, to compare machines of "
            "different sizes (as the Cloud Report does).", "per_vcpu", f"{unit} per vCPU",
        ))  # fmt: skip
    if all("cost" in row for row in table):
        currency = table[0].get("currency") or "USD"
        sources = "; ".join(sorted({str(row["price_source"]) for row in table}))
        charts.append(_bars(
            table, "price-performance", "Price-performance",
            "Monthly on-demand cost (730 h, compute and storage) per TPM at each "
            "configuration's peak (dbscale.results.cost); lower is better. Whiskers carry the "
            f"throughput CI into the cost. Prices: {sources}.",
            "cost", f"{currency} per month per TPM",
        ))  # fmt: skip
    return charts


def _x_axis(study: ResultsView, axis: Axis | None) -> specs.XAxis:
    """The x axis of a chart against `axis` (against the points themselves without one)."""
    return specs.XAxis(
        title=axis.title if axis else "point",
        numeric=bool(axis and axis.numeric),
        values=_axis_values(axis),
        series_title=rows.series_title(study, axis),
    )


def _variation(study: ResultsView) -> Chart:
    axis = primary_axis(study)
    return Chart(
        "variation", "variation", "Run-to-run variation",
        "Coefficient of variation (standard deviation / mean) across the repeated runs of each "
        "point, for throughput and for each run's latency percentiles.",
        specs.variation(rows.variation_rows(study, axis), axis=_x_axis(study, axis)),
    )  # fmt: skip


def _resources(study: ResultsView) -> list[Chart]:
    axis = primary_axis(study)
    title = axis.title if axis else "point"
    charts: list[Chart] = []
    use = resources.resource_rows(study, axis)
    if use:
        charts.append(
            Chart(
                "resource-use", "resources", f"Resource use vs {title}",
                "Mean over each run's seconds, then over the point's runs: is the client, the "
                "host or the server the limit?",
                specs.metric_panels(
                    use, title=f"Resource use vs {title}", axis=_x_axis(study, axis)
                ),
            )
        )  # fmt: skip
    waits = resources.wait_rows(study)
    if waits:
        charts.append(
            Chart(
                "wait-events", "wait-events", "Server wait events per point",
                "What the server's sessions were waiting on, as shares of all sampled waits.",
                specs.stacked_shares(waits, title="Server wait events per point",
                                     x_title="share of waits"),
            )
        )  # fmt: skip
    return charts


def _timeline(study: ResultsView) -> Chart | None:
    timeline_rows = rows.timeline_rows(study)
    if not timeline_rows:
        return None
    return Chart(
        "timeline", "timeline", "Each run over time",
        "Throughput and p95 latency of every run, second by second, one line per run coloured "
        "by its point, so warm-up, stalls and drift are visible. Click a point in the legend to "
        "pick its runs out.",
        specs.timeline(
            timeline_rows,
            points=[p.label for p in study.points],
            step_s=rows.timeline_step(study.runs),
        ),
    )  # fmt: skip
