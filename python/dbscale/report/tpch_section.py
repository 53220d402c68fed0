"""The TPC-H-derived workload's section of the report: per point, each query's time as the median
of its runs with the median's 95% interval (6 runs or more; the runs' range otherwise), then the
geometric mean and the power-, throughput- and QphH-like figures, every one labelled as derived
from TPC-H and not comparable to published TPC-H results (results/tpch_figures.py computes them).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from dbscale.report.markup import Markup, element, join
from dbscale.report.tables import Cell, table_block
from dbscale.report.view import PointView, ResultsView
from dbscale.results.tpch_figures import (
    LABEL,
    QUERIES,
    REFRESH_FUNCTIONS,
    TpchRunFigures,
    run_figures,
)
from dbscale.stats.confidence import median_order_statistic_ci


def _point_figures(point: PointView) -> list[TpchRunFigures]:
    found = [run_figures(run.record) for run in point.runs]
    return [f for f in found if f is not None]


def _spread(values: Sequence[float]) -> str:
    """The median's 95% interval, or the range of fewer runs, as text."""
    if len(values) < 2:
        return "–"
    ci = median_order_statistic_ci(values)
    if ci is not None:
        return f"[{ci.low:.4g}, {ci.high:.4g}] 95% CI"
    return f"{min(values):.4g} – {max(values):.4g} (range of {len(values)} runs)"


def _row(point: str, name: str, values: Sequence[float]) -> list[Cell]:
    return [point, name, round(statistics.median(values), 4), _spread(values), len(values)]


def query_rows(study: ResultsView) -> list[list[Cell]]:
    rows: list[list[Cell]] = []
    for point in study.points:
        figures = _point_figures(point)
        if not figures:
            continue
        for number in QUERIES:
            times = [f.query_s[number] for f in figures if number in f.query_s]
            if times:
                rows.append(_row(point.label, f"Q{number} (s)", times))
        for name in REFRESH_FUNCTIONS:
            times = [f.refresh_s[name] for f in figures if name in f.refresh_s]
            if times:
                rows.append(_row(point.label, f"{name.upper()} (s)", times))
        refreshed = any(f.refresh_s for f in figures)
        for name, values in (
            ("geometric mean (s)", [f.geomean_s for f in figures]),
            (
                "power-like" if refreshed else "power-like (queries only)",
                [f.power for f in figures],
            ),
            ("throughput-like", [f.throughput for f in figures]),
            ("QphH-like", [f.qph for f in figures]),
        ):
            known = [v for v in values if v is not None]
            if known:
                rows.append(_row(point.label, name, known))
    return rows


def tpch_section(study: ResultsView) -> Markup:
    """The section, or nothing when the study ran no TPC-H-derived workload."""
    rows = query_rows(study)
    if not rows:
        return Markup()
    headers = ["point", "figure", "median", "interval", "runs"]
    parts = [
        element("h2", f"TPC-H-derived queries ({LABEL})", id="tpch"),
        element("p", "Each query's time is the mean over the run's streams; the point's median "
                "over its runs follows, with the median's 95% interval from 6 runs on. The "
                "power-like figure is 3600 x SF over the geometric mean of the query times "
                "(and of RF1's and RF2's when the run had its refresh functions, "
                "refresh=true), the throughput-like one streams x queries x 3600 x SF over the "
                "run's seconds, and QphH-like their geometric mean: TPC-H's formulas without "
                f"its rules or its audits, so {LABEL}."),
        table_block(headers, rows),
    ]  # fmt: skip
    return join(parts, "\n")


def tpch_link(study: ResultsView) -> Markup | None:
    return element("a", "TPC-H-derived", href="#tpch") if query_rows(study) else None
