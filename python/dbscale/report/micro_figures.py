"""The machine beside the database (seed 003's micro-benchmark figures), from micro.jsonl: CPU
score per vCPU and on one thread per host, fio's IOPS by job, its p99 latencies (fsync's too),
the network's request/response latency, and the per-half-second throughput of the measured
streams. Medians and intervals are `micro_summary`'s, the numbers summary.json holds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from dbscale.micro.disk import JOBS
from dbscale.micro.results import NetResult
from dbscale.report import specs
from dbscale.report.chart import Chart
from dbscale.report.rows import Row, r4
from dbscale.report.view import ResultsView
from dbscale.results.micro_records import MicroFigureSummary, MicroRecord

STREAM_SAMPLE_S = 0.5  # the core's sample period of a stream series (micro/net.rs)
CPU_FIGURES = {"cpu one thread": "one thread", "cpu per vCPU": "per vCPU"}


def _bar_rows(rows: Sequence[MicroFigureSummary], pick: Mapping[str, str]) -> list[Row]:
    """The summary's rows of the figures in `pick`, renamed, for a grouped bar chart."""
    out: list[Row] = []
    for row in rows:
        if row.figure in pick and row.median is not None:
            out.append({"host": row.place, "figure": pick[row.figure], "median": r4(row.median),
                        "low": r4(row.ci_low), "high": r4(row.ci_high),
                        "n": row.samples})  # fmt: skip
    return out


def _decades(rows: Sequence[Row]) -> list[float]:
    """Powers of ten spanning the rows' values and whiskers: a log axis's readable ticks."""
    values = [float(v) for r in rows for k in ("median", "low", "high")
              if isinstance(v := r.get(k), int | float) and v > 0]  # fmt: skip
    if not values:
        return [1.0]
    low, high = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    return [10.0**e for e in range(low, max(high, low + 1) + 1)]


def grouped_bars(
    rows: Sequence[Row], *, title: str, y_title: str, log: bool = False, by_host: bool = True
) -> specs.Spec:
    """Bars of `median`: per host, one per figure side by side (`by_host`), or per figure, one
    per host side by side; 95% CI whiskers. `log`: a log axis ticked at powers of ten, with
    points instead of bars (a bar has no zero to start from on a log axis), so 236 µs and
    48,000 µs both read."""
    group, within = ("host", "figure") if by_host else ("figure", "host")
    decades = _decades(rows)
    y_scale: specs.Spec = (
        {"type": "log", "domain": [decades[0], decades[-1]]} if log else {"zero": True}
    )
    x = {"field": group, "type": "nominal", "title": None, "sort": None,
         "axis": {"labelLimit": 0, "labelAngle": 0 if by_host else -30}}  # fmt: skip
    y = {"field": "median", "type": "quantitative", "title": y_title, "scale": y_scale}
    if log:
        y["axis"] = {"values": decades, "format": ",~g", "grid": True}
    offset = {"field": within, "type": "nominal", "sort": None}
    color = {"field": within, "type": "nominal", "title": None, "sort": None,
             "legend": {"labelLimit": 0, "orient": "bottom"}}  # fmt: skip
    tooltip = [{"field": f, "title": t} for f, t in (("host", "host"), ("figure", "figure"),
               ("median", "median"), ("low", "95% CI low"), ("high", "95% CI high"),
               ("n", "samples"))]  # fmt: skip
    bars = {"x": x, "xOffset": offset, "y": y, "color": color, "tooltip": tooltip}
    mark: specs.Spec | str = {"type": "point", "filled": True, "size": 70} if log else "bar"
    layers: list[specs.Spec] = [{"mark": mark, "encoding": bars}]
    if any(r.get("low") is not None and r.get("high") is not None for r in rows):
        layers.append({
            "mark": {"type": "errorbar", "ticks": True, "color": "#333"},
            "encoding": {"x": x, "xOffset": offset,
                         "y": {"field": "low", "type": "quantitative", "title": y_title},
                         "y2": {"field": "high"}},
        })  # fmt: skip
    spec = specs.base(title, rows)
    hosts = len({r["host"] for r in rows})
    figures = len({r["figure"] for r in rows})
    spec.update(width=max(specs.WIDTH, 36 * hosts * figures), height=specs.HEIGHT, layer=layers)
    return spec


def _bandwidth_job(job: str) -> bool:
    """The 1 MiB sequential jobs, measured by bandwidth rather than operations."""
    return job.endswith("-bw")


def _disk_picks(
    rows: Sequence[MicroFigureSummary], suffixes: Sequence[str], *, bandwidth: bool | None = None
) -> dict[str, str]:
    """fio figures by job (the report's job order) and direction: `rd-iops read IOPS` ->
    `rd-iops read`; `bandwidth` True or False keeps only the 1 MiB jobs or only the others."""
    names = {r.figure for r in rows if r.kind == "disk"}
    picks: dict[str, str] = {}
    for job in JOBS:
        if bandwidth is not None and _bandwidth_job(job) != bandwidth:
            continue
        for suffix in suffixes:
            name = f"{job} {suffix}"
            if name in names:
                short = suffix.endswith(("IOPS", "MiB/s"))
                picks[name] = name.rsplit(" ", 1)[0] if short else name
    return picks


def stream_series(records: Sequence[MicroRecord]) -> list[Row]:
    """Every measured stream period's half-second aggregate throughput, per host."""
    out: list[Row] = []
    for record in records:
        if record.kind != "net":
            continue
        streams = NetResult.model_validate(record.result).streams
        if streams is None:
            continue
        label = f"{record.place} ({streams.streams} streams)"
        if record.repetition:
            label += f" #{record.repetition + 1}"
        for i, value in enumerate(streams.series_gbps):
            out.append({"series": label, "t": (i + 1) * STREAM_SAMPLE_S,
                        "gbps": r4(value)})  # fmt: skip
    return out


def series_spec(rows: Sequence[Row]) -> specs.Spec:
    spec = specs.base("Network throughput, per half second", rows)
    spec.update(
        width=specs.WIDTH, height=specs.HEIGHT, mark={"type": "line", "point": {"size": 20}},
        encoding={
            "x": {"field": "t", "type": "quantitative", "title": "seconds into the period"},
            "y": {"field": "gbps", "type": "quantitative", "title": "Gbit/s (all streams)"},
            "color": {"field": "series", "type": "nominal", "title": None, "sort": None,
                      "legend": {"labelLimit": 0, "orient": "bottom"}},
            "tooltip": [{"field": "series"}, {"field": "t"}, {"field": "gbps"}],
        },
    )  # fmt: skip
    return spec


def micro_charts(study: ResultsView) -> list[Chart]:
    rows = study.micro_rows
    if not rows:
        return []
    charts: list[Chart] = []
    cpu = _bar_rows(rows, CPU_FIGURES)
    if cpu:
        charts.append(Chart(
            "micro-cpu", "micro-cpu", "CPU score per vCPU",
            "Median iterations/s of dbscale's CPU kernels (list, matrix, state machine, CRC; "
            "not CoreMark, not comparable with its scores) on one thread and per vCPU (every "
            "vCPU of the host, or of a local size, divided by their count); whiskers: 95% CI.",
            grouped_bars(cpu, title="CPU score per vCPU", y_title="iterations/s"),
        ))  # fmt: skip
    iops = _bar_rows(rows, _disk_picks(rows, ("read IOPS", "write IOPS"), bandwidth=False))
    if iops:
        charts.append(Chart(
            "micro-disk-iops", "micro-disk", "Storage IOPS by fio job",
            "fio with the Cloud Report's jobs on a file in the target's data directory (its "
            "disk); read and write IOPS of the 4 KiB and TPC-C-sized jobs, one bar per host.",
            grouped_bars(iops, title="Storage IOPS by fio job", y_title="IOPS", by_host=False),
        ))  # fmt: skip
    bandwidth = _bar_rows(rows, _disk_picks(rows, ("read MiB/s", "write MiB/s"), bandwidth=True))
    if bandwidth:
        charts.append(Chart(
            "micro-disk-bandwidth", "micro-disk", "Storage bandwidth (1 MiB jobs)",
            "The 1 MiB sequential jobs (wr-bw, rd-bw: 8 jobs at depth 64) in MiB/s, one bar per "
            "host: their IOPS would be a thousandth of the small jobs' and read as nothing.",
            grouped_bars(bandwidth, title="Storage bandwidth (1 MiB jobs)", y_title="MiB/s",
                         by_host=False),
        ))  # fmt: skip
    latency = _bar_rows(rows, _disk_picks(rows, ("read p99", "write p99", "fsync p99")))
    if latency:
        charts.append(Chart(
            "micro-disk-latency", "micro-disk", "Storage p99 latency by fio job",
            "p99 completion latency per job and direction, and p99 of the fsync calls of the "
            "fsync job (the Cloud Report's parser dropped those); log scale, ticks at powers of "
            "ten.",
            grouped_bars(latency, title="Storage p99 latency", y_title="µs", log=True,
                         by_host=False),
        ))  # fmt: skip
    net = _bar_rows(rows, {"net request/response p50": "p50", "net request/response p99": "p99"})
    if net:
        charts.append(Chart(
            "micro-net-latency", "micro-net", "Network request/response latency",
            "One-byte request/response on one TCP connection between the client and each "
            "host (netperf TCP_RR's test): p50 and p99 round trip.",
            grouped_bars(net, title="Network request/response latency", y_title="µs"),
        ))  # fmt: skip
    series = stream_series(study.micro)
    if series:
        charts.append(Chart(
            "micro-net-throughput", "micro-net", "Network throughput over time",
            "Aggregate throughput of the measured streams every half second (the stream count "
            "found by the Cloud Report's search, or the plan's).",
            series_spec(series),
        ))  # fmt: skip
    return charts
