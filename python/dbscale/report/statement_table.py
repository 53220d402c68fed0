"""The report's top statements: per point, the statements that cost the server the most time per
transaction (observe.statements of each counted run), with the run-to-run interval of their mean
server time per call, their rows, blocks read and WAL (PostgreSQL) or rows examined (MySQL) per
call, and the client's own time where a script command matched. A server whose figures could not
be read gives its flag line instead."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from dbscale.observe.statements import StatementFigures
from dbscale.report.markup import Markup, element, join
from dbscale.report.tables import Cell, table_block
from dbscale.report.view import ResultsView
from dbscale.stats.confidence import mean_t_ci

TOP = 10
PER_CALL = (("rows", "rows/call"), ("shared_blks_read", "blocks read/call"),
            ("wal_bytes", "WAL bytes/call"), ("rows_examined", "rows examined/call"))  # fmt: skip


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _with_interval(values: Sequence[float]) -> str | None:
    if not values:
        return None
    middle = statistics.median(values)
    interval = mean_t_ci(values)
    if interval is None:
        return f"{middle:.4g}"
    return f"{middle:.4g} [{max(interval.low, 0.0):.4g}, {interval.high:.4g}]"


def statement_rows(study: ResultsView) -> tuple[list[str], list[list[Cell]], list[str]]:
    headers = ["point", "statement", "fingerprint", "calls/txn", "server ms/call [95% CI]",
               "server ms/txn", *(label for _, label in PER_CALL), "client ms/call",
               "share of server time"]  # fmt: skip
    rows: list[list[Cell]] = []
    flags: set[str] = set()
    for point in study.points:
        runs: list[tuple[int, dict[str, StatementFigures]]] = []
        for run in point.runs:
            observed = run.record.observe
            section = observed.statements if observed is not None else None
            if section is None:
                continue
            flags.update(section.notes)
            if section.flag is not None:
                flags.add(section.flag)
            elif run.record.transactions > 0:
                runs.append((run.record.transactions, section.by_fingerprint()))
        if not runs:
            continue
        per_txn: dict[str, list[float]] = {}
        for committed, figures in runs:
            for fp, item in figures.items():
                per_txn.setdefault(fp, []).append(item.total_ms / committed)
        whole = sum(statistics.median(v) for v in per_txn.values()) or 1.0
        ranked = sorted(per_txn, key=lambda fp: -statistics.median(per_txn[fp]))
        for fp in ranked[:TOP]:
            items = [(c, f[fp]) for c, f in runs if fp in f]
            first = items[0][1]
            per_call = [
                _median([v for _, i in items if (v := i.per_call(name)) is not None])
                for name, _ in PER_CALL
            ]
            client = [i.client.mean_ms for _, i in items if i.client and i.client.mean_ms]
            rows.append([
                point.label, first.text[:120], fp,
                _median([i.calls / c for c, i in items]),
                _with_interval([i.mean_ms for _, i in items if i.mean_ms is not None]),
                statistics.median(per_txn[fp]), *per_call, _median(client),
                f"{100.0 * statistics.median(per_txn[fp]) / whole:.0f}%",
            ])  # fmt: skip
    return *_without_empty_columns(headers, rows), sorted(flags)


def _without_empty_columns(
    headers: list[str], rows: list[list[Cell]]
) -> tuple[list[str], list[list[Cell]]]:
    """Counters the server does not have (WAL on MySQL, rows examined on PostgreSQL) and a
    client column no script filled are left out."""
    keep = [i for i in range(len(headers)) if i < 3 or any(r[i] is not None for r in rows)]
    return [headers[i] for i in keep], [[r[i] for i in keep] for r in rows]


def statements_section(study: ResultsView) -> Markup:
    """The section, when any run has statement figures (or a flag saying why not)."""
    headers, rows, flags = statement_rows(study)
    if not rows and not flags:
        return Markup()
    intro = (
        "What each statement cost the server over the measured windows (its own statement "
        "statistics, differenced, never reset): medians over the point's runs, the mean server "
        "time per call with its run-to-run 95% interval, the top statements by server time per "
        "transaction. `dbscale compare A B --statements` says which one made a difference."
    )
    parts = [element("h2", "Statements", id="statements"), element("p", intro)]
    if flags:
        parts.append(element("div", element("ul", join(element("li", f) for f in flags)),
                             class_="warnings"))  # fmt: skip
    if rows:
        parts.append(table_block(headers, rows))
    return join(parts, "\n")
