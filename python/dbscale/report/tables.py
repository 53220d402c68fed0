"""The numbers under the charts: a table of points (the statistics), a table of runs, and the
CSV a reader downloads. HTML is built with escaping everywhere; a run label or target name is
data, never markup.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from dbscale.report import resources
from dbscale.report.markup import Markup, element, join
from dbscale.report.rows import r4
from dbscale.report.view import ResultsView

Cell = str | int | float | None


def fmt(value: Any, digits: int = 4) -> str:
    """Numbers to `digits` significant digits (thousands grouped); None as an en dash."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    rounded = r4(value) if digits == 4 else value
    if rounded is None:
        return "–"
    if abs(rounded) >= 1000 or float(rounded).is_integer():
        return f"{rounded:,.0f}"  # r4 keeps the whole part: 30,532 is shown as 30,532
    return f"{rounded:.{digits}g}"


def _is_number(cell: Cell) -> bool:
    return isinstance(cell, int | float) and not isinstance(cell, bool)


# Columns of sentences: they wrap in a column wide enough to read (the page's `note` class),
# while numbers never wrap.
NOTE_COLUMNS = frozenset({"warnings", "reasons", "limited by", "note", "audits", "consistency"})


def html_table(headers: Sequence[str], rows: Sequence[Sequence[Cell]]) -> Markup:
    """A table; numbers are right-aligned, and so are the headers of columns holding them."""
    numeric = [any(_is_number(row[i]) for row in rows if i < len(row)) for i in range(len(headers))]
    kinds = ["num" if numeric[i] else ("note" if h in NOTE_COLUMNS else "")
             for i, h in enumerate(headers)]  # fmt: skip
    head = element("tr", join(element("th", h, class_=kinds[i]) for i, h in enumerate(headers)))
    body = join(
        element("tr", join(
            element("td", fmt(c),
                    class_="num" if _is_number(c) or (c is None and numeric[i]) else kinds[i])
            for i, c in enumerate(row)
        ))
        for row in rows
    )  # fmt: skip
    return element("table", element("thead", head), element("tbody", body))


def table_block(headers: Sequence[str], rows: Sequence[Sequence[Cell]]) -> Markup:
    """A table in its scrolling wrapper."""
    return element("div", html_table(headers, rows), class_="table-wrap")


def point_table(
    study: ResultsView, *, every_axis: bool = False
) -> tuple[list[str], list[list[Cell]]]:
    """Headers and rows: the swept axes (and clients), then n, the throughput statistics,
    merged latency, notes. The axes that only follow the sweep are named in the page's header
    (`every_axis`: they are columns too, as in the CSV)."""
    axes = [a for a in study.axes if every_axis or a.swept or a.key == "clients"]
    unit = study.unit
    headers = [a.title for a in axes] or ["point"]
    headers += ["runs", f"median {unit}", "95% CI low", "95% CI high", "CI method", "mean",
                "stddev", "CV %", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms", "max ms",
                "p99 range of runs ms", "limited by", "warnings"]  # fmt: skip
    rows: list[list[Cell]] = []
    for point in study.points:
        s = point.summary
        tput, ci = s.throughput, s.throughput.ci
        p99 = s.per_run_latency_ms.get("p99")
        low, high = (p99.min, p99.max) if p99 else (None, None)
        spread = f"{fmt(low)} – {fmt(high)}" if s.runs > 1 and low is not None else None
        row: list[Cell] = [a.format(point.coords.get(a.key)) for a in axes] or [point.label]
        row += [
            s.runs, tput.median, ci.low if ci else None, ci.high if ci else None,
            ci.method if ci else None, tput.mean, tput.stddev, tput.cv_pct,
            *(s.latency_ms.percentile(k) for k in ("p50", "p95", "p99", "p999", "max")),
            spread, resources.point_limited_by(point.runs) or None, "; ".join(s.flags) or None,
        ]  # fmt: skip
        rows.append(row)
    return headers, rows


def micro_table(study: ResultsView) -> tuple[list[str], list[list[Cell]]]:
    """One row per host and micro-benchmark figure (micro.jsonl's statistics)."""
    headers = ["host", "vCPUs", "figure", "median", "95% CI low", "95% CI high", "CV %",
               "samples", "unit"]  # fmt: skip
    rows: list[list[Cell]] = []
    for r in study.micro_rows:
        rows.append([r.place, r.vcpus, r.figure, r.median, r.ci_low, r.ci_high, r.cv_pct,
                     r.samples, r.unit])  # fmt: skip
    return headers, rows


def _cell(value: object) -> Cell:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def run_table(study: ResultsView) -> tuple[list[str], list[list[Cell]]]:
    headers = ["run", "status", "started (UTC)", "duration s", "clients", "threads", "TPS",
               "p50 ms", "p95 ms", "p99 ms", "failed", "retried"]  # fmt: skip
    rows: list[list[Cell]] = []
    for run in study.runs:
        record = run.record
        latency = record.latency_ms
        rows.append(
            [
                run.label, run.record.status + (" (warm-up)" if run.record.warmup else ""),
                record.started_at.replace("T", " ").rstrip("Z"),
                record.duration_s, record.clients, record.threads, record.tps,
                *(latency.percentile(k) if latency else None for k in ("p50", "p95", "p99")),
                record.failed, record.retried,
            ]
        )  # fmt: skip
    return headers, rows


def worker_table(study: ResultsView) -> tuple[list[str], list[list[Cell]]]:
    """Scaled-out runs: one row per worker of each run (its share, throughput, p99, start skew
    bound, its host's CPU use), so an uneven share or a saturated client shows."""
    headers = ["run", "worker", "host", "clients", "transactions", "TPS", "p99 ms",
               "start skew bound ms", "host CPU busy %", "note"]  # fmt: skip
    rows: list[list[Cell]] = []
    for run in study.runs:
        for w in run.record.workers:
            p99 = w.latency_ms.p99 if w.latency_ms is not None else None
            note = "lost: " + w.lost if w.lost else ("saturated" if w.saturated else None)
            done = w.transactions if w.transactions is not None else w.transactions_received
            rows.append([run.label, _cell(w.worker), str(w.host), _cell(w.clients),
                         _cell(done), _cell(w.tps), _cell(p99), _cell(w.start_skew_bound_ms),
                         _cell(w.host_cpu_busy_pct), note])  # fmt: skip
    return headers, rows


def table_section(
    anchor: str,
    title: str,
    intro: str | Markup,
    headers: Sequence[str],
    rows: Sequence[Sequence[Cell]],
) -> Markup:
    """A titled section holding one table (`intro`: text, or markup of the page's own)."""
    return join(
        [element("h2", title, id=anchor), element("p", intro), table_block(headers, rows)], "\n"
    )


def summary_csv(study: ResultsView) -> str:
    """The statistics' own summary.csv when the study has one, else the point table as CSV."""
    if study.summary_csv is not None:
        return study.summary_csv
    headers, rows = point_table(study, every_axis=True)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(headers)
    for row in rows:
        writer.writerow(["" if c is None else c for c in row])
    return out.getvalue()
