"""CH-benCHmark's section of the report: per point, tpmC beside the analytic queries per hour
(medians over its runs), what its streams cost the terminals' tpmC against the same terminals
alone with its interval, and each query's time (results/ch_figures.py computes them)."""

from __future__ import annotations

import statistics

from dbscale.report.markup import Markup, element, join
from dbscale.report.tables import Cell, table_block
from dbscale.report.view import ResultsView
from dbscale.results.ch_figures import QUERIES, ChRunFigures, run_figures, tpmc_costs

HEADERS = ["point", "terminals", "streams", "tpmC", "queries per hour", "tpmC change",
           "failed queries", "runs"]  # fmt: skip


def _figures(study: ResultsView) -> dict[str, list[ChRunFigures]]:
    found: dict[str, list[ChRunFigures]] = {}
    for point in study.points:
        figures = [f for f in (run_figures(r.record) for r in point.runs) if f is not None]
        if figures:
            found[point.label] = figures
    return found


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def point_rows(study: ResultsView) -> list[list[Cell]]:
    costs = {c.point: c for c in tpmc_costs({p.label: [r.record for r in p.runs]
                                             for p in study.points})}  # fmt: skip
    rows: list[list[Cell]] = []
    for label, figures in _figures(study).items():
        cost = costs.get(label)
        change = "baseline" if figures[0].streams == 0 else "–"
        if cost is not None:
            interval = ("" if cost.low_pct is None or cost.high_pct is None
                        else f" [{cost.low_pct:+.1f}%, {cost.high_pct:+.1f}%]")  # fmt: skip
            change = f"{cost.change_pct:+.1f}%{interval} vs {cost.baseline}"
        rows.append([
            label, figures[0].terminals, figures[0].streams,
            _median([f.tpmc for f in figures if f.tpmc is not None]),
            _median([f.queries_per_hour for f in figures]), change,
            sum(f.failed_queries for f in figures), len(figures),
        ])  # fmt: skip
    return rows


def query_rows(study: ResultsView) -> list[list[Cell]]:
    rows: list[list[Cell]] = []
    for label, figures in _figures(study).items():
        for number in QUERIES:
            times = [f.query_s[number] for f in figures if number in f.query_s]
            if times:
                rows.append([label, f"Q{number}", _median(times), len(times)])
    return rows


def ch_section(study: ResultsView) -> Markup:
    """The section, or nothing when the study ran no CH-benCHmark workload."""
    rows = point_rows(study)
    if not rows:
        return Markup()
    parts = [
        element("h2", "CH-benCHmark: transactions beside analytics", id="ch"),
        element(
            "p",
            "TPC-C's terminals and the analytic query streams ran together on the same "
            "tables. tpmC counts the terminals' New-Orders; queries per hour count the "
            "streams' finished queries. The change is tpmC's median against the same "
            "terminals without streams (analytic_streams=0, same target and parameters), "
            "with its bootstrap 95% interval (2 runs a side or more).",
        ),
        table_block(HEADERS, rows),
    ]
    queries = query_rows(study)
    if queries:
        parts += [
            element("h3", "Each query's time (s, the median over the runs of the streams' means)"),
            table_block(["point", "query", "median (s)", "runs"], queries),
        ]
    return join(parts, "\n")


def ch_link(study: ResultsView) -> Markup | None:
    return element("a", "CH-benCHmark", href="#ch") if point_rows(study) else None
